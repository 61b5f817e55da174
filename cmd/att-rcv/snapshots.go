package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"

	"github.com/attkit/attkit/internal/cli"
	"github.com/attkit/attkit/internal/rcv"
	"github.com/attkit/attkit/internal/snapshot"
	"github.com/attkit/attkit/internal/wire"
)

// copySnapshots puts the source snapshots into the folder (python-layer
// §5.10, as att_tool.py does): with a code.json index, its directory's
// snapshots.json and source_* files are copied; with an index stream, the
// source files its rows name are copied (those that exist).
func copySnapshots(env *cli.Env, folder *rcv.Folder, indexPath string, ix *wire.Index) error {
	opt := snapshot.Options{Warn: func(m string) { env.Warnf("%s", m) }}
	if ix == nil {
		return nil
	}
	codeJSON, err := isCodeJSON(indexPath)
	if err != nil {
		return err
	}
	if codeJSON {
		if err := snapshot.Copy(filepath.Dir(indexPath), folder.TempDir(), opt); err != nil {
			return fmt.Errorf("copying source snapshots: %w", err)
		}
		return nil
	}
	if _, err := snapshot.Write(folder.TempDir(), ix, opt); err != nil {
		return fmt.Errorf("writing source snapshots: %w", err)
	}
	return nil
}

// isCodeJSON tells a code.json from an index stream by its first byte, as
// wire.ReadIndex does.
func isCodeJSON(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	for {
		c, err := br.ReadByte()
		if err != nil {
			return false, nil
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c == '{', nil
	}
}
