// Package publish puts a tool's outputs in place so that a reader never sees
// a partial or mixed result. Outputs (files and folders) are written under
// temporary names beside their targets, unique per process, and renamed into
// place together by Commit, or removed by Abort.
//
// A Set is one result: att-tool's viewer folders and stats CSVs, att-rcv's
// folder and its CSV, the one file of att-decode -o. Commit takes an
// exclusive lock (flock) on each target's parent directory, so that two
// processes committing into one place run one after the other; it then
// refuses a target that holds something (a file, a directory that is not
// empty) unless the Set replaces, in which case the old target is renamed
// aside, the new one renamed in, and the old one removed: the whole old
// result gives way to the whole new one, never a mix. When a rename fails
// midway, the targets already swapped are put back.
//
// Temporaries are registered process-wide while they exist, so that
// RemoveOnSignal can delete them when SIGINT or SIGTERM ends the process:
// an interrupted run leaves what was there before, and no temporary file.
package publish

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// live holds the temporaries of every open Set of the process.
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

// RemoveTemporaries removes every temporary of the process that is still
// registered. A signal handler calls it before the process exits.
func RemoveTemporaries() {
	live.Lock()
	defer live.Unlock()
	for p := range live.paths {
		os.RemoveAll(p)
		delete(live.paths, p)
	}
}

// RemoveOnSignal makes SIGINT and SIGTERM remove the temporaries and end
// the process with status 130 or 143 (128 + the signal number), as a shell
// reports a process killed by them. Tools whose work has no other cleanup
// call it first thing in main.
func RemoveOnSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-ch
		RemoveTemporaries()
		os.Exit(ExitStatus(s))
	}()
}

// ExitStatus is the exit status for a process ended by signal s: 130 for
// SIGINT, 143 for SIGTERM.
func ExitStatus(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 1
}

// ErrExists is returned by Commit and Check when a target holds an earlier
// result and the Set does not replace.
var ErrExists = errors.New("exists")

// An ExistsError names a target that holds an earlier result.
type ExistsError struct{ Path string }

func (e *ExistsError) Error() string {
	return e.Path + " exists and is not empty (use --force to replace it)"
}

// Is makes errors.Is(err, ErrExists) true.
func (e *ExistsError) Is(target error) bool { return target == ErrExists }

// A Set is a group of outputs that appear together or not at all. Methods
// may be called from several goroutines.
type Set struct {
	replace bool

	mu    sync.Mutex
	items []item
	done  bool
}

type item struct {
	target, tmp string
	dir         bool
}

// NewSet returns an empty Set. With replace, Commit replaces targets that
// hold earlier results; without, it refuses them.
func NewSet(replace bool) *Set { return &Set{replace: replace} }

// tempName returns a name beside target for a temporary of this process.
func tempName(target, kind string) string {
	return filepath.Join(filepath.Dir(target), "."+filepath.Base(target)+"."+kind+"-"+
		strconv.Itoa(os.Getpid())+"-"+strconv.FormatUint(rand.Uint64()>>24, 36))
}

// Dir creates a temporary directory that Commit renames to target, and
// returns its path. target's parent must exist.
func (s *Set) Dir(target string) (string, error) {
	return s.add(target, true)
}

// File creates an empty temporary file that Commit renames to target, and
// returns its path.
func (s *Set) File(target string) (string, error) {
	return s.add(target, false)
}

func (s *Set) add(target string, dir bool) (string, error) {
	target, err := resolve(target)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return "", errors.New("publish: set already committed or aborted")
	}
	for _, it := range s.items {
		if it.target == target {
			return "", fmt.Errorf("publish: %s given twice", target)
		}
	}
	for try := 0; ; try++ {
		tmp := tempName(target, "tmp")
		register(tmp)
		if dir {
			err = os.Mkdir(tmp, 0o777)
		} else {
			var f *os.File
			if f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666); err == nil {
				err = f.Close()
			}
		}
		if err == nil {
			s.items = append(s.items, item{target: target, tmp: tmp, dir: dir})
			return tmp, nil
		}
		unregister(tmp)
		if !errors.Is(err, fs.ErrExist) || try == 100 {
			return "", fmt.Errorf("cannot write beside %s: %w", target, unwrapPath(err))
		}
	}
}

// resolve makes target absolute and follows a symbolic link at it, so that
// the link's target is replaced and the link stays.
func resolve(target string) (string, error) {
	abs, err := filepath.Abs(target)
	if err != nil {
		return "", err
	}
	for range 40 {
		link, err := os.Readlink(abs)
		if err != nil {
			break
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(abs), link)
		}
		abs = filepath.Clean(link)
	}
	return abs, nil
}

// Check returns an *ExistsError for the first target that holds an earlier
// result, unless the Set replaces. Tools call it before their work, to
// fail early; Commit checks again under the lock.
func (s *Set) Check() error {
	if s.replace {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, it := range s.items {
		if occupied(it.target) {
			return &ExistsError{Path: it.target}
		}
	}
	return nil
}

// Occupied reports whether path holds something an output would replace:
// a file, or a directory that is not empty.
func Occupied(path string) bool { return occupied(path) }

func occupied(path string) bool {
	st, err := os.Lstat(path)
	if err != nil {
		return false
	}
	if !st.IsDir() {
		return true
	}
	d, err := os.Open(path)
	if err != nil {
		return true
	}
	defer d.Close()
	names, _ := d.Readdirnames(1)
	return len(names) > 0
}

// Commit renames every temporary to its target, under the parents' locks.
// On failure nothing of the Set stays: the targets are as before and the
// temporaries are gone.
func (s *Set) Commit() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return errors.New("publish: set already committed or aborted")
	}
	s.done = true
	defer s.removeTemps()
	var parents []string
	for _, it := range s.items {
		if p := filepath.Dir(it.target); !slices.Contains(parents, p) {
			parents = append(parents, p)
		}
	}
	slices.Sort(parents) // one order for every process: no deadlock
	for _, p := range parents {
		unlock, err := lockDir(p)
		if err != nil {
			return fmt.Errorf("locking %s: %w", p, err)
		}
		defer unlock()
	}
	var done []swap
	rollback := func() {
		for i := len(done) - 1; i >= 0; i-- {
			done[i].undo()
		}
	}
	for _, it := range s.items {
		sw, err := s.put(it)
		if err != nil {
			rollback()
			return err
		}
		done = append(done, sw)
	}
	for _, d := range done {
		if d.old != "" {
			os.RemoveAll(d.old)
			unregister(d.old)
		}
	}
	return nil
}

// A swap is one target put in place: old names where the earlier result
// went ("" if there was none), so that undo can put it back.
type swap struct {
	target, old string
	exchanged   bool // old is the temporary, swapped with the target
}

func (w swap) undo() {
	switch {
	case w.exchanged:
		if exchange(w.old, w.target) != nil {
			os.RemoveAll(w.target)
			os.Rename(w.old, w.target)
		}
	case w.old != "":
		os.RemoveAll(w.target)
		os.Rename(w.old, w.target)
	default:
		os.RemoveAll(w.target)
	}
	if w.old != "" {
		unregister(w.old)
	}
}

// put moves one temporary to its target.
func (s *Set) put(it item) (swap, error) {
	st, err := os.Lstat(it.target)
	if err != nil || !occupied(it.target) {
		if err == nil && st.IsDir() {
			// An empty directory: rename(2) may replace it, but not on
			// every file system (overlayfs says EEXIST).
			os.Remove(it.target)
		}
		if err := os.Rename(it.tmp, it.target); err != nil {
			return swap{}, fmt.Errorf("writing %s: %w", it.target, unwrapPath(err))
		}
		unregister(it.tmp)
		return swap{target: it.target}, nil
	}
	if !s.replace {
		return swap{}, &ExistsError{Path: it.target}
	}
	switch {
	case it.dir && !st.IsDir():
		return swap{}, fmt.Errorf("%s exists and is not a directory", it.target)
	case !it.dir && st.IsDir():
		return swap{}, fmt.Errorf("%s is a directory", it.target)
	}
	if it.dir {
		// One atomic exchange where the kernel has it; the old result
		// then lives at the temporary's name until it is removed.
		if exchange(it.tmp, it.target) == nil {
			return swap{target: it.target, old: it.tmp, exchanged: true}, nil
		}
		old := tempName(it.target, "old")
		register(old)
		if err := os.Rename(it.target, old); err != nil {
			unregister(old)
			return swap{}, fmt.Errorf("replacing %s: %w", it.target, unwrapPath(err))
		}
		if err := os.Rename(it.tmp, it.target); err != nil {
			os.Rename(old, it.target)
			unregister(old)
			return swap{}, fmt.Errorf("writing %s: %w", it.target, unwrapPath(err))
		}
		unregister(it.tmp)
		return swap{target: it.target, old: old}, nil
	}
	// A file over a file: keep a link to the old one for undo, then one
	// atomic rename.
	old := tempName(it.target, "old")
	register(old)
	if err := os.Link(it.target, old); err != nil {
		unregister(old)
		old = ""
	}
	if err := os.Rename(it.tmp, it.target); err != nil {
		if old != "" {
			os.Remove(old)
			unregister(old)
		}
		return swap{}, fmt.Errorf("writing %s: %w", it.target, unwrapPath(err))
	}
	unregister(it.tmp)
	return swap{target: it.target, old: old}, nil
}

// exchange swaps two paths atomically (renameat2 RENAME_EXCHANGE).
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}

// Abort removes the temporaries. It is safe to call more than once and
// after Commit.
func (s *Set) Abort() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = true
	s.removeTemps()
}

func (s *Set) removeTemps() {
	for _, it := range s.items {
		os.RemoveAll(it.tmp)
		unregister(it.tmp)
	}
	s.items = nil
}

// lockDir takes an exclusive flock on directory dir until unlock is called.
// The lock goes with the process: one killed holding it frees it.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
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

// WriteFile writes path through a temporary sibling renamed into place when
// write succeeded, replacing what was at path: a failure or an interrupt
// (with RemoveOnSignal) never leaves a partial file or a temporary. A
// symbolic link is followed: its target is replaced, the link stays. A path
// that is not a regular file (/dev/null, a FIFO, a terminal) is written
// directly: renaming over it would replace the device with a file.
func WriteFile(path string, write func(w io.Writer) error) error {
	real, err := resolve(path)
	if err != nil {
		return err
	}
	if st, err := os.Stat(real); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
		f, err := os.OpenFile(real, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		if err := write(f); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	s := NewSet(true)
	tmp, err := s.File(real)
	if err != nil {
		return err
	}
	defer s.Abort()
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		// An error of the temporary file names the user's path.
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == tmp {
			pe.Path = path
		}
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, unwrapPath(err))
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return err
	}
	return s.Commit()
}

// unwrapPath drops the path of an *fs.PathError, whose path would name the
// temporary rather than the file the user asked for.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
