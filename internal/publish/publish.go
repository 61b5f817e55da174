// Package publish puts a tool's outputs in place so that a reader never sees
// a partial or mixed result, and so that a tool replaces only what it wrote.
// Flowing in: the temporaries a tool fills (Set.Dir, Set.File, WriteFile),
// its inputs (Input) and the signals it gets (Catch); flowing out: the
// outputs under their names, or nothing, and the exit status 128+signal.
//
// Outputs (files and folders) are written under temporary names beside
// their targets (.<name>.tmp-<pid>-<random>) and renamed into place
// together by Commit, or removed by Abort.
//
// Ownership. Every folder a Set publishes carries a mark, the hidden file
// .attkit-output (ManifestName), naming the tool, the run and every file
// the run wrote in it and beside it (the stats CSV). A target that holds
// something is replaced only when the Set replaces (--force) and it is
// ours: a folder with the mark holding nothing but the files it lists, a
// file that the mark of a folder of the same Set beside it lists. Anything
// else is refused with an error (ErrNotOurs) saying what was found, which
// no flag lifts. A target is never an input nor a folder holding one
// (Input; compared by device and inode, so links count). A file Set with no
// folder beside it (the one file of att-decode -o) replaces an earlier file
// that is no input.
//
// Commit. Commit takes an exclusive lock on each target's parent directory
// (flock on Unix, a process lock elsewhere), so that two processes
// committing into one place run one after the other, and sweeps what dead
// runs left there. It writes the mark, keeps an existing target's
// permission bits, and fsyncs the temporaries (syncfs on Linux, through
// the folder held open since it was made, so that a write-back error of
// any time since is reported; every file and folder elsewhere). A Files
// writer starts that write-out early on Linux: every 128 MiB it has
// written, a syncfs by the helper process, not waited for, so that the
// commit's syncfs finds little left. It then writes a commit journal,
// .attkit.commit-<pid>-<random>, into every parent (fsynced, with the
// parents), naming each target, its temporary and the name its old content
// moves to. Then each target is swapped: a folder by one atomic exchange
// (renameat2 RENAME_EXCHANGE on Linux; elsewhere, or where the file system
// lacks it, the old folder is renamed aside first, as Windows needs), a
// file by a hard link of the old one aside and one rename over it. The
// parents are fsynced, the journal gets its last line "committed"
// (fsynced), the journals and the old contents are removed. A failure
// midway puts the old targets back. A run killed during the commit
// (SIGKILL, power loss) leaves the journal with its pid: the next run that
// sweeps one of those parents and finds the pid dead replays it, forward
// when "committed" is there (it removes what the old contents left), else
// back: each target is put back as it was, told by which names exist and,
// for an exchanged folder, by the run named in the mark. Either way the
// targets hold all the old results or all the new ones.
//
// Signals. Catch (or RemoveOnSignal) handles SIGINT, SIGTERM, SIGHUP and
// SIGQUIT for every tool: the first cancels the run's context, and unless
// the run returns within Grace every registered work file is removed and
// the process exits; a second signal does that at once; the status is
// 128+signal. A commit's renames are never cut: the exit waits for them
// (milliseconds); a commit that has not begun them stops at the signal,
// whether it is listing its folder for the mark or syncing (syncfs runs
// in a helper process, this executable again, since a process cannot end
// while one of its threads is in syncfs). Nothing on the way out waits for
// a large tree: a work folder of more than 1024 entries is renamed aside
// and removed by the remover, this executable again, detached, once the
// process has exited (discard); the same goes for the old folder a
// --force commit replaced. Work files of every kind (temporaries, old contents,
// journals, spools, work folders: WorkDir, WorkFile) are in one registry
// and carry the pid in their names, so that Sweep removes what a killed
// run left, beside the targets and in the system's temporary directory.
// A pid is told dead by kill(pid, 0) on Unix: a run in another pid
// namespace writing the same directory is not told apart.
package publish

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// A Set is a group of outputs that appear together or not at all. Methods
// may be called from several goroutines.
type Set struct {
	replace bool
	run     string

	mu    sync.Mutex
	items []item
	done  bool
}

type item struct {
	target, tmp string
	dir         bool
	held        *os.File // the folder tmp, open since it was made (for syncTree)
}

// NewSet returns an empty Set. With replace, Commit replaces targets that
// hold earlier results of ours; without, it refuses them.
func NewSet(replace bool) *Set { return &Set{replace: replace, run: newRunID()} }

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
	sweepOnce(filepath.Dir(target))
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
		tmp := tempName(target, kindTmp)
		register(tmp)
		var held *os.File
		if dir {
			// Held open from the start: the commit's syncfs through it
			// reports a write-back error of any time since (an error is
			// reported to the descriptors open when it happened).
			if err = os.Mkdir(tmp, 0o777); err == nil && holdDirs {
				if held, err = os.Open(tmp); err != nil {
					os.Remove(tmp)
				}
			}
		} else {
			var f *os.File
			if f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666); err == nil {
				err = f.Close()
			}
		}
		if err == nil {
			s.items = append(s.items, item{target: target, tmp: tmp, dir: dir, held: held})
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

// Check returns the error Commit would give for the first target it may
// not replace: an *ExistsError for an earlier result of ours when the Set
// does not replace, an ErrNotOurs error for anything else that is there, or
// an input. Tools call it before their work, to fail early; Commit checks
// again under the lock.
func (s *Set) Check() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, it := range s.items {
		if err := s.check(it); err != nil {
			return err
		}
	}
	return nil
}

// check says whether the Set may put it in place.
func (s *Set) check(it item) error {
	if err := CheckNotInput(it.target); err != nil {
		return err
	}
	st, err := os.Lstat(it.target)
	if err != nil {
		return nil
	}
	if it.dir {
		return checkDir(it.target, st, s.replace)
	}
	if st.IsDir() {
		if occupied(it.target) {
			return &notOursError{it.target + " is a directory"}
		}
		return nil
	}
	// A file beside a folder of the Set is ours when that folder's mark
	// lists it.
	beside, claimed := false, ""
	for _, o := range s.items {
		if o.dir && filepath.Dir(o.target) == filepath.Dir(it.target) {
			beside = true
			if m := readManifest(o.target); m != nil && slices.Contains(m.siblings, filepath.Base(it.target)) {
				claimed = m.tool
			}
		}
	}
	switch {
	case beside && claimed == "":
		return &notOursError{it.target + " exists and no attkit run wrote it beside its folder: refusing to replace it; move it away or choose another output folder"}
	case !s.replace:
		return &ExistsError{Path: it.target, Tool: claimed}
	}
	return nil
}

// CheckDir returns the error a Set would give for a folder target: nil
// when target does not exist, is empty, or is an earlier output of ours and
// replace is set; an *ExistsError (matching ErrExists) for an earlier
// output of ours without replace; an ErrNotOurs error naming what was found
// for anything else, and for an input or a folder holding one.
func CheckDir(target string, replace bool) error {
	if err := CheckNotInput(target); err != nil {
		return err
	}
	st, err := os.Lstat(target)
	if err != nil {
		return nil
	}
	return checkDir(target, st, replace)
}

func checkDir(target string, st os.FileInfo, replace bool) error {
	if !st.IsDir() {
		return &notOursError{target + " exists and is not a directory"}
	}
	m, err := checkOwned(target)
	switch {
	case err != nil:
		return err
	case m != nil && !replace:
		return &ExistsError{Path: target, Tool: m.tool}
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
		if it.held != nil {
			it.held.Close()
		}
		discard(it.tmp)
		unregister(it.tmp)
	}
	s.items = nil
}

// WriteFile writes path through a temporary sibling renamed into place when
// write succeeded, replacing what was at path (keeping its permission
// bits) unless it is an input: a failure or an interrupt never leaves a
// partial file or a temporary. A symbolic link is followed: its target is
// replaced, the link stays. A path that is not a regular file (/dev/null, a
// FIFO, a terminal) is written directly: renaming over it would replace the
// device with a file.
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
	if err := CheckNotInput(real); err != nil {
		return err
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
