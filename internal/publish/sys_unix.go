//go:build unix

package publish

import (
	"errors"
	"os"
	"syscall"
)

// unlinkOpen: an open file may be removed from its directory and still be
// used.
const unlinkOpen = true

// lockDir takes an exclusive flock on directory dir until unlock is called.
// The lock goes with the process: one killed holding it frees it.
func lockDir(dir string) (unlock func(), err error) { return flock(dir, 0) }

// tryLockDir is lockDir that fails at once when another holds the lock.
func tryLockDir(dir string) (unlock func(), err error) { return flock(dir, syscall.LOCK_NB) }

func flock(dir string, flags int) (unlock func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|flags)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// syncDir flushes directory dir's entries to disk.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
		return nil // a file system that cannot sync a directory
	}
	return err
}

// alive reports whether process pid may be running: kill(pid, 0) finds it,
// or it belongs to someone else.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}

// ownedByMe reports whether p belongs to this process's user.
func ownedByMe(p string) bool {
	st, err := os.Lstat(p)
	if err != nil {
		return false
	}
	s, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(s.Uid) == os.Getuid()
}
