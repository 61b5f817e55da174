//go:build !linux

package publish

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// exchange is not to be had here: Commit renames the old folder aside.
func exchange(a, b string) error { return errors.ErrUnsupported }

// holdDirs: a Set does not hold its folders open (Windows could not rename
// them); syncTree fsyncs every file.
const holdDirs = false

// syncTree puts folder dir and all it holds on disk, file by file.
func syncTree(dir string, _ *os.File) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return syncDir(p)
		}
		return syncFile(p)
	})
}

// runSyncfs: the syncfs helper is Linux's.
func runSyncfs() {}
