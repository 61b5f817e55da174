package rcv

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/attkit/attkit/internal/publish"
)

// A Sink receives the files of a viewer folder by base name.
type Sink interface {
	WriteFile(name string, data []byte) error
}

// A Streamer is a Sink that takes a file as it is written instead of whole
// in memory (a Folder does): a Writer streams each file through it.
type Streamer interface {
	Sink
	Stream(name string, write func(w io.Writer) error) error
}

// A Spooler is a Sink that makes the Writer's spool file, already removed
// from its directory, on the output's file system (a Folder does); without
// one the spool goes to the system's temporary directory.
type Spooler interface {
	Sink
	Spool() (*os.File, error)
}

// FolderOptions configure NewFolder.
type FolderOptions struct {
	// Force allows replacing an existing directory that is not empty: at
	// Commit the earlier folder (and sibling files) give way to the new
	// ones as a whole.
	Force bool
	// Create, when set, opens a new file for writing in place of os.Create.
	// Tests use it to simulate a full disk.
	Create func(path string) (io.WriteCloser, error)
	// Set, when not nil, is the result the folder is one output of (with
	// other folders and files: att-tool's runs and stats CSVs): the folder
	// is made as a temporary of Set, and the caller commits or aborts Set
	// as a whole; Commit must then not be called, and Abort removes only
	// what the Folder made itself. The parent directory must exist.
	Set *publish.Set
}

// A Folder is a viewer folder under construction. Files go into a
// temporary sibling of the target directory, and sibling files (the stats
// CSV) under temporary names beside it; Commit renames them all into place
// together through a publish.Set, so that two processes writing one folder
// never mix their files, and an earlier folder is replaced whole (with
// Force) or left alone. Only when the target exists and its parent is not
// writable are the files built in a temporary directory inside the target
// and moved up at Commit. Abort removes everything the Folder created,
// including parent directories it had to make. Abort may be called from
// another goroutine (a signal handler); the other methods are for one
// goroutine.
type Folder struct {
	dir     string // target, absolute
	tmp     string // temporary directory
	inside  bool   // tmp is inside dir (the parent is not writable)
	exists  bool   // the target existed when the Folder was made
	created []string
	set     *publish.Set
	shared  bool                                      // set is the caller's (FolderOptions.Set)
	create  func(path string) (io.WriteCloser, error) // FolderOptions.Create
	files   *publish.Files                            // else: files made relative to tmp

	mu     sync.Mutex // Abort may come from a signal handler
	closed bool
}

var errClosed = errors.New("the folder was aborted")

// NewFolder prepares to write the folder dir. It refuses a dir that is not
// a directory, and one that holds files unless opt.Force is set. Missing
// parent directories are created (and removed again by Abort).
func NewFolder(dir string, opt FolderOptions) (*Folder, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	// A symbolic link to a directory stands for that directory, as
	// upstream resolves its output directory.
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	f := &Folder{dir: abs, create: opt.Create, set: opt.Set, shared: opt.Set != nil}
	if f.set == nil {
		f.set = publish.NewSet(opt.Force)
	}
	switch st, err := os.Stat(abs); {
	case err == nil && !st.IsDir():
		return nil, fmt.Errorf("%s exists and is not a directory", dir)
	case err == nil:
		// Only an earlier folder of ours is replaced, and only with Force.
		if err := publish.CheckDir(abs, opt.Force); err != nil {
			return nil, err
		}
		f.exists = true
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	parent := filepath.Dir(abs)
	if err := f.mkdirParents(parent); err != nil {
		f.Abort()
		return nil, fmt.Errorf("creating %s: %w", parent, unwrapPath(err))
	}
	tmp, err := f.set.Dir(abs)
	if err != nil && f.exists && !f.shared {
		// The parent is not writable but the folder exists: build inside
		// it, and move the files up at Commit.
		tmp, err = mkdirTemp(abs, ".att-rcv.tmp-")
		f.inside = true
	}
	if err != nil {
		f.Abort()
		return nil, fmt.Errorf("cannot write into %s: %w", parent, unwrapPath(err))
	}
	f.tmp = tmp
	if f.create == nil {
		f.files = publish.NewFiles(tmp)
	}
	return f, nil
}

// mkdirTemp is os.MkdirTemp with the mode a plain mkdir gives (0777 less
// the umask), since the directory becomes the user's folder.
func mkdirTemp(dir, prefix string) (string, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64()>>20, 36))
		err := os.Mkdir(name, 0o777)
		if err == nil || !errors.Is(err, fs.ErrExist) || try == 100 {
			return name, err
		}
	}
}

// mkdirParents creates dir and its missing parents, remembering which.
func (f *Folder) mkdirParents(dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil {
			return err
		}
		f.created = append(f.created, missing[i])
	}
	return nil
}

// unwrapPath drops the path of an *fs.PathError, whose path would name the
// temporary directory rather than the file the user asked for.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Dir returns the absolute path of the target directory.
func (f *Folder) Dir() string { return f.dir }

// TempDir returns the directory files are written to until Commit, for
// writers that need a path (source snapshots).
func (f *Folder) TempDir() string { return f.tmp }

// WriteFile writes a file of the folder. The folder's writer goroutine
// creates it while the caller goes on (publish.Files.WriteFileLater): an
// error may come from a later call, naming its file.
func (f *Folder) WriteFile(name string, data []byte) error {
	if f.files != nil {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.closed {
			return errClosed
		}
		if err := f.files.WriteFileLater(name, data); err != nil {
			return f.queuedError(err)
		}
		return nil
	}
	return f.write(name, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Stream writes a file of the folder through write, buffered.
func (f *Folder) Stream(name string, write func(w io.Writer) error) error {
	return f.write(name, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 64<<10)
		if err := write(bw); err != nil {
			return err
		}
		return bw.Flush()
	})
}

// queuedError names the file of a failed queued write by its place in
// the target folder.
func (f *Folder) queuedError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("writing %s: %w", filepath.Join(f.dir, filepath.Base(pe.Path)), pe.Err)
	}
	return fmt.Errorf("writing %s: %w", f.dir, err)
}

// wait waits for the queued files (see WriteFile) and returns the error
// of one that failed.
func (f *Folder) wait() error {
	if f.files == nil {
		return nil
	}
	if err := f.files.Wait(); err != nil {
		return f.queuedError(err)
	}
	return nil
}

// write creates the file name of the folder and fills it with fill.
func (f *Folder) write(name string, fill func(w io.Writer) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return errClosed
	}
	if err := f.wait(); err != nil {
		return err
	}
	var w io.WriteCloser
	var err error
	if f.files != nil {
		w, err = f.files.Create(name)
	} else {
		w, err = f.create(filepath.Join(f.tmp, name))
	}
	if err == nil {
		err = fill(w)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Join(f.dir, name), unwrapPath(err))
	}
	return nil
}

// Spool returns a new temporary file on the folder's file system, already
// removed from its directory: it holds what a Writer keeps until the end of
// a run, and goes away when closed.
func (f *Folder) Spool() (*os.File, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, errClosed
	}
	if err := f.wait(); err != nil {
		return nil, err
	}
	sp, err := os.CreateTemp(f.tmp, ".spool-")
	if err != nil {
		return nil, unwrapPath(err)
	}
	os.Remove(sp.Name())
	return sp, nil
}

// WriteSibling writes the file name into the folder's parent directory
// (where upstream puts the stats CSV). The file appears under its name only
// at Commit.
func (f *Folder) WriteSibling(name string, write func(w io.Writer) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return errClosed
	}
	path := filepath.Join(filepath.Dir(f.dir), name)
	tmp, err := f.set.File(path)
	var w io.WriteCloser
	switch {
	case err == nil && f.create != nil:
		w, err = f.create(tmp)
	case err == nil:
		w, err = os.OpenFile(tmp, os.O_WRONLY|os.O_TRUNC, 0)
	}
	if err == nil {
		err = write(w)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, unwrapPath(err))
	}
	return nil
}

// Commit moves the folder and its sibling files into place together (see
// publish.Set.Commit): an earlier folder that is not empty is replaced
// whole with Force, else refused.
func (f *Folder) Commit() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return errors.New("rcv: folder already committed or aborted")
	}
	if f.shared {
		return errors.New("rcv: the folder is part of a Set: commit the Set")
	}
	if err := f.wait(); err != nil {
		f.abort()
		return err
	}
	f.closeFiles()
	if f.inside {
		if err := f.moveUp(); err != nil {
			f.abort()
			return err
		}
	}
	if err := f.set.Commit(); err != nil {
		f.abort()
		return err
	}
	f.closed = true
	return nil
}

// moveUp renames the files built inside the target into it.
func (f *Folder) moveUp() error {
	entries, err := os.ReadDir(f.tmp)
	if err != nil {
		return err
	}
	for _, e := range entries {
		dst := filepath.Join(f.dir, e.Name())
		if err := os.Rename(filepath.Join(f.tmp, e.Name()), dst); err != nil {
			return fmt.Errorf("writing %s: %w", dst, unwrapPath(err))
		}
	}
	return os.Remove(f.tmp)
}

// Abort removes the temporary directory, any sibling file written and the
// parent directories NewFolder created. It is safe to call more than once,
// after a failed Commit, and concurrently with the other methods (later
// writes then fail).
func (f *Folder) Abort() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.abort()
}

func (f *Folder) abort() {
	f.closeFiles()
	if f.tmp != "" && !f.closed && f.inside {
		os.RemoveAll(f.tmp)
	}
	if !f.shared {
		f.set.Abort()
	}
	if !f.closed {
		for i := len(f.created) - 1; i >= 0; i-- {
			os.Remove(f.created[i])
		}
	}
	f.created = nil
	f.closed = true
}

// Close ends the writing of a folder that is one output of the caller's
// Set (FolderOptions.Set), before the caller commits the Set: it waits for
// the files still being written and returns the error of one that failed;
// later writes fail. Commit and Abort do it for the others.
func (f *Folder) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	err := f.wait()
	f.closeFiles()
	return err
}

// closeFiles lets the folder's directory go (files made after fail).
func (f *Folder) closeFiles() {
	if f.files != nil {
		f.files.Close()
	}
}

var (
	_ Streamer = (*Folder)(nil)
	_ Spooler  = (*Folder)(nil)
)
