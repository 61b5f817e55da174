package rcv

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// A Sink receives the files of a viewer folder by base name.
type Sink interface {
	WriteFile(name string, data []byte) error
}

// FolderOptions configure NewFolder.
type FolderOptions struct {
	// Force allows writing into an existing directory that is not empty.
	// Files of the run replace files of the same name; other files stay.
	Force bool
	// Create, when set, opens a new file for writing in place of os.Create.
	// Tests use it to simulate a full disk.
	Create func(path string) (io.WriteCloser, error)
}

// A Folder is a viewer folder under construction. Files go into a
// temporary sibling of the target directory (or, when only the target is
// writable, a temporary directory inside it); Commit moves them into
// place, Abort removes everything the Folder created, including parent
// directories it had to make. Abort may be called from another goroutine
// (a signal handler); the other methods are for one goroutine.
type Folder struct {
	dir      string // target, absolute
	tmp      string // temporary sibling directory
	exists   bool   // the target existed when the Folder was made
	created  []string
	siblings []sibling
	create   func(path string) (io.WriteCloser, error)

	mu     sync.Mutex // Abort may come from a signal handler
	closed bool
}

var errClosed = errors.New("the folder was aborted")

// A sibling is a file written next to the folder (the stats CSV), kept
// under a temporary name until Commit.
type sibling struct{ tmp, path string }

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
	f := &Folder{dir: abs, create: opt.Create}
	if f.create == nil {
		f.create = func(path string) (io.WriteCloser, error) {
			return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
		}
	}
	switch st, err := os.Stat(abs); {
	case err == nil && !st.IsDir():
		return nil, fmt.Errorf("%s exists and is not a directory", dir)
	case err == nil:
		empty, err := isEmptyDir(abs)
		if err != nil {
			return nil, err
		}
		if !empty && !opt.Force {
			return nil, fmt.Errorf("%s exists and is not empty (use --force to write into it)", dir)
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
	tmp, err := mkdirTemp(parent, "."+filepath.Base(abs)+".tmp-")
	if err != nil && f.exists {
		// The parent is not writable but the folder exists: build inside
		// it, and move the files up at Commit.
		tmp, err = mkdirTemp(abs, ".att-rcv.tmp-")
	}
	if err != nil {
		f.Abort()
		return nil, fmt.Errorf("cannot write into %s: %w", parent, unwrapPath(err))
	}
	f.tmp = tmp
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

func isEmptyDir(dir string) (bool, error) {
	d, err := os.Open(dir)
	if err != nil {
		return false, err
	}
	defer d.Close()
	names, err := d.Readdirnames(1)
	if err == io.EOF {
		return true, nil
	}
	return len(names) == 0, err
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

// WriteFile writes a file of the folder.
func (f *Folder) WriteFile(name string, data []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return errClosed
	}
	w, err := f.create(filepath.Join(f.tmp, name))
	if err == nil {
		_, err = w.Write(data)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Join(f.dir, name), unwrapPath(err))
	}
	return nil
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
	tmp := filepath.Join(filepath.Dir(f.dir), "."+name+filepath.Base(f.tmp))
	w, err := f.create(tmp)
	if err == nil {
		f.siblings = append(f.siblings, sibling{tmp: tmp, path: path})
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

// Commit moves the folder into place: a rename of the temporary directory
// when the target did not exist or was empty, else a rename of each file
// into the existing directory. Sibling files are renamed last.
func (f *Folder) Commit() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return errors.New("rcv: folder already committed or aborted")
	}
	if err := f.moveIn(); err != nil {
		f.abort()
		return err
	}
	f.closed = true
	for i, s := range f.siblings {
		if err := os.Rename(s.tmp, s.path); err != nil {
			for _, t := range f.siblings[i:] {
				os.Remove(t.tmp)
			}
			return fmt.Errorf("writing %s: %w", s.path, unwrapPath(err))
		}
	}
	return nil
}

func (f *Folder) moveIn() error {
	if f.exists && filepath.Dir(f.tmp) != f.dir {
		if empty, err := isEmptyDir(f.dir); err == nil && empty {
			if os.Remove(f.dir) == nil {
				f.exists = false
			}
		}
	}
	if !f.exists {
		if err := os.Rename(f.tmp, f.dir); err != nil {
			return fmt.Errorf("moving the folder into place: %w", err)
		}
		return nil
	}
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
	if f.tmp != "" && !f.closed {
		os.RemoveAll(f.tmp)
	}
	for _, s := range f.siblings {
		os.Remove(s.tmp)
	}
	f.siblings = nil
	if !f.closed {
		for i := len(f.created) - 1; i >= 0; i-- {
			os.Remove(f.created[i])
		}
	}
	f.created = nil
	f.closed = true
}
