//go:build unix

package publish

import (
	"io"
	"io/fs"
	"os"
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

// writeOut starts a syncfs of the folder's file system by the syncfs
// helper (sys_linux.go's, this executable again) and returns without
// waiting: one at a time, its outcome ignored (the commit's syncfs reports
// a write-back error; the helper, in a process of its own, never holds up
// the exit). Not where the helper cannot start.
func (d *Files) writeOut() {
	if !holdDirs || !d.writingOut.CompareAndSwap(false, true) { // syncfs is Linux's
		return
	}
	done := func() { d.writingOut.Store(false) }
	d.mu.RLock()
	fd := -1
	if !d.closed && d.h.ok() {
		fd, _ = unix.FcntlInt(uintptr(d.h.fd1-1), unix.F_DUPFD_CLOEXEC, 0)
	}
	d.mu.RUnlock()
	if fd < 0 {
		done()
		return
	}
	f := os.NewFile(uintptr(fd), d.dir)
	defer f.Close()
	cmd, err := startSyncfs(f, nil)
	if err != nil {
		done()
		return
	}
	go func() {
		if cmd.Wait() == nil {
			d.wroteOut.Add(1)
		}
		done()
	}()
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
