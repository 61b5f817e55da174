package publish

import (
	"errors"
	"os"
	"sync"
)

// unlinkOpen: Windows does not remove a file that is open.
const unlinkOpen = false

// dirLocks stand in for flock: they order the commits of this process only.
var dirLocks sync.Map

// lockDir takes a process-wide lock on dir until unlock is called.
func lockDir(dir string) (unlock func(), err error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	m, _ := dirLocks.LoadOrStore(dir, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock, nil
}

// tryLockDir is lockDir that fails at once when another holds the lock.
func tryLockDir(dir string) (unlock func(), err error) {
	m, _ := dirLocks.LoadOrStore(dir, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	if !mu.TryLock() {
		return nil, errors.New("locked")
	}
	return mu.Unlock, nil
}

// syncDir: Windows has no directory fsync; the entries are written with
// the files.
func syncDir(dir string) error { return nil }

// alive reports whether process pid may be running.
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}

// ownedByMe: files in the user's folders are the user's.
func ownedByMe(p string) bool { return true }
