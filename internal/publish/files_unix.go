//go:build unix

package publish

import (
	"io"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// A dirHandle is the folder held open (fd+1, so that the zero value is no
// folder).
type dirHandle struct{ fd1 int }

func (h dirHandle) ok() bool { return h.fd1 > 0 }

func openDirHandle(dir string) (dirHandle, error) {
	fd, err := retry(func() (int, error) {
		return unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return dirHandle{}, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	return dirHandle{fd + 1}, nil
}

func (h dirHandle) close() error { return unix.Close(h.fd1 - 1) }

// create opens a file relative to the folder, emptying one made before.
func (h dirHandle) create(dir, name string) (io.WriteCloser, error) {
	fd, err := retry(func() (int, error) {
		return unix.Openat(h.fd1-1, name, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o666)
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: filepath.Join(dir, name), Err: err}
	}
	return &fdFile{fd: fd, path: filepath.Join(dir, name)}, nil
}

// retry repeats a call interrupted by a signal.
func retry(call func() (int, error)) (int, error) {
	for {
		n, err := call()
		if err != unix.EINTR {
			return n, err
		}
	}
}

// An fdFile is a file written with plain write(2) calls: no poller, no
// finalizer, no buffering (callers write whole files or buffer).
type fdFile struct {
	fd   int
	path string
}

func (f *fdFile) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		n, err := retry(func() (int, error) { return unix.Write(f.fd, p[done:]) })
		if err != nil {
			return done, &fs.PathError{Op: "write", Path: f.path, Err: err}
		}
		if n == 0 {
			return done, &fs.PathError{Op: "write", Path: f.path, Err: io.ErrShortWrite}
		}
		done += n
	}
	return done, nil
}

func (f *fdFile) Close() error {
	if f.fd < 0 {
		return &fs.PathError{Op: "close", Path: f.path, Err: fs.ErrClosed}
	}
	err := unix.Close(f.fd)
	f.fd = -1
	if err != nil {
		return &fs.PathError{Op: "close", Path: f.path, Err: err}
	}
	return nil
}
