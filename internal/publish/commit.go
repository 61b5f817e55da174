package publish

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// commitMu keeps an interrupt's exit out of a commit's renames: commits
// hold it shared, the exit exclusively.
var commitMu sync.RWMutex

// commitHook, when set (tests), is called after each step of a commit:
// 0 after the journal is written, then after each rename, then after the
// "committed" line, then after the cleanup.
var commitHook func(step int)

// noExchange (tests) makes Commit rename an old folder aside, as where
// there is no atomic exchange.
var noExchange bool

func hook(step int) {
	if commitHook != nil {
		commitHook(step)
	}
}

// A journal entry: one target of a commit.
type entry struct {
	dir, existed     bool
	target, tmp, old string
}

type journal struct {
	run     string
	entries []entry
	paths   []string // the journal's copies, one per parent
}

func (j *journal) encode(committed bool) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "attkit commit 1\nrun %s\n", j.run)
	for _, e := range j.entries {
		fmt.Fprintf(&b, "item\t%t\t%t\t%s\t%s\t%s\n", e.dir, e.existed,
			strconv.Quote(e.target), strconv.Quote(e.tmp), strconv.Quote(e.old))
	}
	for _, p := range j.paths {
		fmt.Fprintf(&b, "copy\t%s\n", strconv.Quote(p))
	}
	if committed {
		b.WriteString("committed\n")
	}
	return []byte(b.String())
}

func readJournal(path string) (j *journal, committed bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	if !sc.Scan() || sc.Text() != "attkit commit 1" {
		return nil, false, errors.New("not a commit journal")
	}
	j = &journal{}
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		switch {
		case strings.HasPrefix(fields[0], "run "):
			j.run = strings.TrimPrefix(fields[0], "run ")
		case fields[0] == "item" && len(fields) == 6:
			var e entry
			e.dir, e.existed = fields[1] == "true", fields[2] == "true"
			var err1, err2, err3 error
			e.target, err1 = strconv.Unquote(fields[3])
			e.tmp, err2 = strconv.Unquote(fields[4])
			e.old, err3 = strconv.Unquote(fields[5])
			if err := errors.Join(err1, err2, err3); err != nil {
				return nil, false, err
			}
			j.entries = append(j.entries, e)
		case fields[0] == "copy" && len(fields) == 2:
			p, err := strconv.Unquote(fields[1])
			if err != nil {
				return nil, false, err
			}
			j.paths = append(j.paths, p)
		case fields[0] == "committed":
			committed = true
		}
	}
	return j, committed, sc.Err()
}

// writeJournal writes the journal's copies, each fsynced with its parent.
func (j *journal) write(committed bool) error {
	data := j.encode(committed)
	for _, p := range j.paths {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
		if err != nil {
			return err
		}
		_, err = f.Write(data)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		if err := syncDir(filepath.Dir(p)); err != nil {
			return err
		}
	}
	return nil
}

func (j *journal) remove() {
	for _, p := range j.paths {
		os.Remove(p)
		unregister(p)
	}
}

// recoverJournal replays the journal at path that a dead run left: forward
// when it was committed, else back. The caller holds the lock of path's
// directory and those in held; the other parents are locked here, or the
// journal is left for a later run when another process holds one.
func recoverJournal(path string, held []string) {
	j, committed, err := readJournal(path)
	if err != nil {
		// Cut while first written: nothing was renamed yet.
		os.Remove(path)
		return
	}
	here := filepath.Dir(path)
	var parents []string
	for _, e := range j.entries {
		if p := filepath.Dir(e.target); p != here && !slices.Contains(parents, p) {
			parents = append(parents, p)
		}
	}
	slices.Sort(parents)
	for _, p := range parents {
		if slices.Contains(held, p) {
			continue
		}
		unlock, err := tryLockDir(p)
		if err != nil {
			return
		}
		defer unlock()
	}
	if committed {
		j.forward()
	} else {
		j.back()
	}
	for _, p := range append(parents, here) {
		syncDir(p)
	}
	for _, p := range j.paths {
		os.Remove(p)
	}
}

// forward finishes a committed journal: what is left at the temporaries'
// and old names is the old results.
func (j *journal) forward() {
	for _, e := range j.entries {
		discard(e.tmp)
		discard(e.old)
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// isNew reports whether folder p is the one run wrote (its mark names run).
func isNew(p, run string) bool {
	m := readManifest(p)
	return m != nil && m.run == run
}

// back puts every target of the journal back as it was, the last first.
func (j *journal) back() {
	for i := len(j.entries) - 1; i >= 0; i-- {
		e := j.entries[i]
		switch {
		case !e.existed:
			if exists(e.tmp) {
				os.RemoveAll(e.tmp)
			} else if exists(e.target) && (!e.dir || isNew(e.target, j.run)) {
				os.RemoveAll(e.target)
			}
		case e.dir:
			switch {
			case exists(e.old): // moved aside: the target is new or missing
				if exists(e.target) {
					os.RemoveAll(e.target)
				}
				os.Rename(e.old, e.target)
				os.RemoveAll(e.tmp)
			case exists(e.tmp) && isNew(e.tmp, j.run): // not swapped yet
				os.RemoveAll(e.tmp)
			case exists(e.tmp): // exchanged: the old one is at tmp
				if exchange(e.tmp, e.target) == nil {
					os.RemoveAll(e.tmp)
				} else {
					os.RemoveAll(e.target)
					os.Rename(e.tmp, e.target)
				}
			}
		default: // a file: the old one is linked (or moved) to old
			switch {
			case exists(e.tmp): // not renamed yet
				os.Remove(e.tmp)
				if exists(e.old) {
					if exists(e.target) {
						os.Remove(e.old)
					} else {
						os.Rename(e.old, e.target)
					}
				}
			case exists(e.old):
				os.Rename(e.old, e.target)
			}
		}
	}
}

// Commit renames every temporary to its target, under the parents' locks,
// as the package doc says. On failure nothing of the Set stays: the targets
// are as before and the temporaries are gone.
func (s *Set) Commit() (err error) {
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
	for _, p := range parents {
		sweepLocked(p, parents)
	}
	j := &journal{run: s.run}
	base := filepath.Base(tempName("attkit", kindCommit))
	for _, p := range parents {
		j.paths = append(j.paths, filepath.Join(p, base))
	}
	for _, it := range s.items {
		if err := s.check(it); err != nil {
			return err
		}
		e := entry{dir: it.dir, target: it.target, tmp: it.tmp, old: tempName(it.target, kindOld)}
		st, err := os.Lstat(it.target)
		e.existed = err == nil
		if err := s.prepare(it, st); err != nil {
			return fmt.Errorf("writing %s: %w", it.target, unwrapPath(err))
		}
		j.entries = append(j.entries, e)
	}
	for _, p := range parents {
		if err := syncDir(p); err != nil {
			return fmt.Errorf("writing %s: %w", p, unwrapPath(err))
		}
	}
	for _, p := range j.paths {
		register(p)
	}
	defer j.remove()
	for _, e := range j.entries {
		register(e.old)
		defer unregister(e.old)
	}
	if err := j.write(false); err != nil {
		return fmt.Errorf("writing the commit journal in %s: %w", parents[0], unwrapPath(err))
	}

	commitMu.RLock()
	locked := true
	unlockCommit := func() {
		if locked {
			locked = false
			commitMu.RUnlock()
		}
	}
	defer unlockCommit()
	select {
	case <-interrupted: // the signal came before the renames: none is made
		return errInterrupted
	default:
	}
	hook(0)
	step := 1
	for i, e := range j.entries {
		if err := swap(e, &step); err != nil {
			j.entries = j.entries[:i+1]
			j.back()
			return err
		}
	}
	for _, p := range parents {
		syncDir(p)
	}
	if err := j.write(true); err != nil {
		j.back()
		return fmt.Errorf("writing the commit journal in %s: %w", parents[0], unwrapPath(err))
	}
	hook(step)
	step++
	unlockCommit()
	j.remove()
	for _, e := range j.entries {
		discard(e.tmp) // the old folder after an exchange
		discard(e.old)
	}
	hook(step)
	return nil
}

// prepare readies a temporary before the journal: the mark of a folder,
// the permission bits of the target it replaces, everything on disk.
func (s *Set) prepare(it item, old os.FileInfo) error {
	if old != nil && old.IsDir() == it.dir {
		if err := os.Chmod(it.tmp, old.Mode().Perm()); err != nil {
			return err
		}
	}
	if !it.dir {
		return syncFile(it.tmp)
	}
	var siblings []string
	for _, o := range s.items {
		if !o.dir && filepath.Dir(o.target) == filepath.Dir(it.target) {
			siblings = append(siblings, filepath.Base(o.target))
		}
	}
	// Listing a folder of hundreds of thousands of files takes a second:
	// a signal does not wait for it (syncTree does not wait either).
	if err := untilInterrupted(func() error { return writeManifest(it.tmp, s.run, siblings) }); err != nil {
		return err
	}
	return syncTree(it.tmp, it.held)
}

// untilInterrupted runs fn and waits for it, unless a signal comes first
// (errInterrupted); fn then runs on alone until the process ends.
func untilInterrupted(fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-interrupted:
		return errInterrupted
	}
}

// swap puts one target in place, calling the hook after each rename.
func swap(e entry, step *int) error {
	next := func() { hook(*step); *step++ }
	if !e.existed {
		if err := os.Rename(e.tmp, e.target); err != nil {
			return fmt.Errorf("writing %s: %w", e.target, unwrapPath(err))
		}
		unregister(e.tmp)
		next()
		return nil
	}
	if e.dir {
		if !noExchange && exchange(e.tmp, e.target) == nil {
			next()
			return nil
		}
		if err := os.Rename(e.target, e.old); err != nil {
			return fmt.Errorf("replacing %s: %w", e.target, unwrapPath(err))
		}
		next()
		if err := os.Rename(e.tmp, e.target); err != nil {
			return fmt.Errorf("writing %s: %w", e.target, unwrapPath(err))
		}
		unregister(e.tmp)
		next()
		return nil
	}
	// A file over a file: a link to the old one for rolling back, then one
	// atomic rename; where links are not to be had, the old one moves
	// aside first.
	if os.Link(e.target, e.old) != nil {
		if err := os.Rename(e.target, e.old); err != nil {
			return fmt.Errorf("replacing %s: %w", e.target, unwrapPath(err))
		}
	}
	next()
	if err := os.Rename(e.tmp, e.target); err != nil {
		return fmt.Errorf("writing %s: %w", e.target, unwrapPath(err))
	}
	unregister(e.tmp)
	next()
	return nil
}

// syncFile flushes file p to disk.
func syncFile(p string) error {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
