//go:build !unix

package publish

import (
	"io"
	"os"
	"path/filepath"
)

// dirHandle: without openat the folder is named by its path.
type dirHandle struct{ open bool }

func (h dirHandle) ok() bool { return h.open }

func openDirHandle(dir string) (dirHandle, error) {
	if _, err := os.Stat(dir); err != nil {
		return dirHandle{}, err
	}
	return dirHandle{true}, nil
}

func (h dirHandle) close() error { return nil }

func (h dirHandle) create(dir, name string) (io.WriteCloser, error) {
	return os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
}

// writeOut: the syncfs helper is Linux's.
func (d *Files) writeOut() {}
