package main

import (
	"github.com/attkit/attkit/internal/rcv"
	"github.com/attkit/attkit/internal/wire"
)

// copySnapshots puts the source snapshots into the folder (§5.10).
func copySnapshots(folder *rcv.Folder, indexPath string, ix *wire.Index) error {
	return nil
}
