package publish

import (
	"os"

	"golang.org/x/sys/unix"
)

// exchange swaps two paths atomically (renameat2 RENAME_EXCHANGE).
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}

// syncTree puts folder dir and all it holds on disk: one syncfs(2) of its
// file system rather than an fsync per file.
func syncTree(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}
