package publish

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
)

// A Files writes new files into one work folder (a temporary of a Set,
// renamed whole at Commit): a file is one create, its writes and a close,
// with no temporary name, rename, fsync or chmod of its own, since the
// folder is put on disk and in place as a whole. On Unix the folder is held
// open and files are created relative to it (openat), so a file costs
// three system calls where os.WriteFile's path costs five. A Files is safe
// for concurrent use; Close may come from a signal handler's goroutine,
// after which writes fail.
type Files struct {
	dir string

	mu     sync.Mutex
	h      dirHandle // opened at the first write
	closed bool
}

// errFilesClosed is what writes get after Close.
var errFilesClosed = errors.New("publish: work folder closed")

// NewFiles returns a Files for the existing folder dir.
func NewFiles(dir string) *Files { return &Files{dir: dir} }

// Dir returns the folder's path.
func (d *Files) Dir() string { return d.dir }

func (d *Files) handle() (dirHandle, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return dirHandle{}, errFilesClosed
	}
	if !d.h.ok() {
		h, err := openDirHandle(d.dir)
		if err != nil {
			return dirHandle{}, err
		}
		d.h = h
	}
	return d.h, nil
}

// WriteFile creates the file name (a base name) in the folder with data,
// with mode 0666 less the umask; a file of that name made before is
// replaced.
func (d *Files) WriteFile(name string, data []byte) error {
	w, err := d.Create(name)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}

// Create creates the file name (a base name) in the folder for writing,
// with mode 0666 less the umask (emptying a file of that name made before).
// Its errors name the file by its path in the folder.
func (d *Files) Create(name string) (io.WriteCloser, error) {
	if name == "" || filepath.Base(name) != name || name == "." || name == ".." {
		return nil, fmt.Errorf("publish: %q is not a base name", name)
	}
	h, err := d.handle()
	if err != nil {
		return nil, err
	}
	return h.create(d.dir, name)
}

// Close lets the folder go: later writes fail. Files already created stay.
func (d *Files) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	if d.h.ok() {
		h := d.h
		d.h = dirHandle{}
		return h.close()
	}
	return nil
}
