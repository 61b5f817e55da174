package publish

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Kinds of work files, the word before the pid in their names.
const (
	kindTmp    = "tmp"    // a temporary output, renamed to its target at Commit
	kindOld    = "old"    // an earlier result moved aside at Commit
	kindDel    = "del"    // something being removed
	kindWork   = "work"   // a work file or folder (spool, record files)
	kindCommit = "commit" // a commit journal
)

// live holds every work file of the process (temporaries, old results
// being removed, journals, spools, work folders): the one registry that an
// interrupt empties before the process ends.
var live = struct {
	sync.Mutex
	paths map[string]bool
}{paths: map[string]bool{}}

func register(p string) {
	live.Lock()
	live.paths[p] = true
	live.Unlock()
}

func unregister(p string) {
	live.Lock()
	delete(live.paths, p)
	live.Unlock()
}

// RemoveTemporaries removes every work file of the process that is still
// registered (discard: a large folder is renamed aside and left to the
// remover, so that this returns in milliseconds whatever the trees hold).
// The signal handler calls it before the process exits. The folders held
// open for writing (Files) are let go first, so that writers still running
// cannot add to a folder while it is removed.
func RemoveTemporaries() {
	closeOpenFiles()
	live.Lock()
	defer live.Unlock()
	for p := range live.paths {
		discard(p)
		delete(live.paths, p)
	}
}

// tempName returns a name beside target for a work file of this process:
// .<base>.<kind>-<pid>-<random>. The pid lets a later run tell a dead
// run's leftovers (Sweep).
func tempName(target, kind string) string {
	return workName(filepath.Dir(target), filepath.Base(target), kind)
}

func workName(dir, base, kind string) string {
	return workNameOf(dir, base, kind, os.Getpid())
}

// workNameOf is workName for process pid.
func workNameOf(dir, base, kind string, pid int) string {
	prefix := "."
	if dir == os.TempDir() {
		prefix = "attkit-"
	}
	return filepath.Join(dir, prefix+base+"."+kind+"-"+strconv.Itoa(pid)+"-"+
		strconv.FormatUint(rand.Uint64()>>24, 36))
}

var workRE = regexp.MustCompile(`^(\.|attkit-).*\.(tmp|old|del|work|commit)-([0-9]+)-[0-9a-z]+$`)

// parseWork returns the kind and pid of a work file's base name.
func parseWork(name string) (kind string, pid int, ok bool) {
	m := workRE.FindStringSubmatch(name)
	if m == nil {
		return "", 0, false
	}
	pid, err := strconv.Atoi(m[3])
	if err != nil || pid <= 0 {
		return "", 0, false
	}
	return m[2], pid, true
}

// WorkDir creates a work folder of this process, registered so that an
// interrupt removes it, and returns it with the function that removes it.
// dir "" is the system's temporary directory, where the folder is named
// attkit-<name>.work-<pid>-<random> (else .<name>.work-…). What dead runs
// left in dir is swept first.
func WorkDir(dir, name string) (path string, remove func(), err error) {
	if dir == "" {
		dir = os.TempDir()
	}
	sweepOnce(dir)
	for try := 0; ; try++ {
		p := workName(dir, name, kindWork)
		register(p)
		err := os.Mkdir(p, 0o777)
		if err == nil {
			return p, func() { discard(p); unregister(p) }, nil
		}
		unregister(p)
		if !errors.Is(err, fs.ErrExist) || try == 100 {
			return "", nil, err
		}
	}
}

// WorkFile creates a work file of this process for reading and writing
// (a spool) in dir ("" is the system's temporary directory). Where the
// system allows it the file is removed from its directory at once, so that
// not even a SIGKILL leaves it; else it is registered and close removes it.
// close closes the file and removes it.
func WorkFile(dir, name string) (f *os.File, close func() error, err error) {
	if dir == "" {
		dir = os.TempDir()
	}
	sweepOnce(dir)
	for try := 0; ; try++ {
		p := workName(dir, name, kindWork)
		register(p)
		f, err = os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			if unlinkOpen && os.Remove(p) == nil {
				unregister(p)
				return f, f.Close, nil
			}
			return f, func() error {
				err := f.Close()
				os.Remove(p)
				unregister(p)
				return err
			}, nil
		}
		unregister(p)
		if !errors.Is(err, fs.ErrExist) || try == 100 {
			return nil, nil, fmt.Errorf("creating a work file in %s: %w", dir, unwrapPath(err))
		}
	}
}

// swept holds the directories this process has swept.
var swept = struct {
	sync.Mutex
	dirs map[string]bool
}{dirs: map[string]bool{}}

// Sweep finishes or rolls back the commits that dead runs left in dir (see
// the package doc), then removes the work files they left there: names of
// the work-file form whose pid is no running process, owned by this user.
// It works under the directory's lock. Errors are ignored: a leftover that
// cannot be removed stays. Sets, WorkDir and WorkFile sweep each directory
// they write into once per process.
func Sweep(dir string) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return
	}
	swept.Lock()
	swept.dirs[dir] = true
	swept.Unlock()
	sweep(dir)
}

// sweepOnce is Sweep, once per directory and process.
func sweepOnce(dir string) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return
	}
	swept.Lock()
	done := swept.dirs[dir]
	swept.dirs[dir] = true
	swept.Unlock()
	if !done {
		sweep(dir)
	}
}

func sweep(dir string) {
	unlock, err := lockDir(dir)
	if err != nil {
		return
	}
	defer unlock()
	sweepLocked(dir, nil)
}

// sweepLocked is Sweep with the locks of dir and of held taken.
func sweepLocked(dir string, held []string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	inTemp := dir == os.TempDir()
	var dead []string
	for _, e := range ents {
		kind, pid, ok := parseWork(e.Name())
		if !ok || pid == os.Getpid() || alive(pid) {
			continue
		}
		if inTemp != strings.HasPrefix(e.Name(), "attkit-") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if !ownedByMe(p) {
			continue
		}
		if kind == kindCommit {
			recoverJournal(p, held)
			continue
		}
		dead = append(dead, p)
	}
	for _, p := range dead {
		discard(p) // gone when a journal's recovery used it
	}
}
