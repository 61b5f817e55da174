package waveselect

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/attkit/attkit/internal/wire"
)

// MaxBatch bounds the records of one batch a selecting reader holds
// (wire.Reader.SetMaxBatch): the first pass does not depend on where
// batches end.
const MaxBatch = 1024

// OpenFunc opens an input by its path ("-" for standard input), as the
// tools' cli.Env.Open does: it returns the reader and the input's name.
type OpenFunc = wire.OpenFunc

// Inputs opens the same inputs for two readings. A regular file is opened
// again for the second; anything else (standard input, a pipe, a FIFO) is
// copied, while the first reading reads it, to a temporary file that is
// unlinked as soon as it is created (so that nothing is left behind
// however the process ends) and that the second reading reads back. The
// copy costs disk, not memory.
type Inputs struct {
	open   OpenFunc
	Dir    string // where the copies go; "" is os.TempDir
	second bool
	spools map[string]*spool
}

type spool struct {
	f     *os.File
	name  string // the file's name when it could not be unlinked at once
	size  int64
	input string // the input's name
}

// NewInputs returns Inputs that open through open.
func NewInputs(open OpenFunc) *Inputs {
	return &Inputs{open: open, spools: map[string]*spool{}}
}

// Open opens path for the current reading; the caller closes it (which,
// in the first reading, completes the copy).
func (in *Inputs) Open(path string) (io.ReadCloser, string, error) {
	if in.second {
		if sp := in.spools[path]; sp != nil {
			return io.NopCloser(io.NewSectionReader(sp.f, 0, sp.size)), sp.input, nil
		}
		return in.open(path)
	}
	if path != "" && path != "-" {
		if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
			return in.open(path)
		}
	}
	r, name, err := in.open(path)
	if err != nil {
		return nil, name, err
	}
	f, err := os.CreateTemp(in.Dir, ".attkit-wave-*")
	if err != nil {
		r.Close()
		return nil, name, fmt.Errorf("a copy of %s for --wave: %w", name, err)
	}
	sp := &spool{f: f, input: name}
	if os.Remove(f.Name()) != nil {
		sp.name = f.Name() // removed by Close
	}
	in.spools[path] = sp
	return &teeReader{r: r, w: bufio.NewWriterSize(f, 256<<10), sp: sp, name: name}, name, nil
}

// Rewind starts the second reading.
func (in *Inputs) Rewind() { in.second = true }

// Close removes the copies.
func (in *Inputs) Close() error {
	var errs []error
	for _, sp := range in.spools {
		errs = append(errs, sp.f.Close())
		if sp.name != "" {
			errs = append(errs, os.Remove(sp.name))
		}
	}
	in.spools = map[string]*spool{}
	return errors.Join(errs...)
}

type teeReader struct {
	r    io.ReadCloser
	w    *bufio.Writer
	sp   *spool
	name string
	err  error
}

func (t *teeReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 && t.err == nil {
		var m int
		m, t.err = t.w.Write(p[:n])
		t.sp.size += int64(m)
	}
	return n, err
}

func (t *teeReader) Close() error {
	err := t.r.Close()
	if t.err == nil {
		t.err = t.w.Flush()
	}
	if t.err != nil {
		return fmt.Errorf("a copy of %s for --wave: %w", t.name, t.err)
	}
	return err
}

// FirstPass reads every input once, for TwoPass, choosing the wave the
// next reading keeps; it then rewinds in. skip leaves parts out (nil: none;
// att-stats' --run), filter is the tool's own filter between Select and
// Pick (nil: none; --jq). Without TwoPass it does nothing.
func (s *Selector) FirstPass(in *Inputs, paths []string, skip func(*wire.Header) bool, filter func(*wire.Header, *wire.Batch) error) error {
	if !s.TwoPass() {
		return nil
	}
	s.pass = 1
	fs := wire.Files{Open: in.Open, MaxBatch: MaxBatch}
	skipping := false
	err := fs.ReadAll(paths, func(rd *wire.Reader, name string) error {
		if rd.Kind() == wire.KindHeader {
			s.BeginPart(rd.Header())
			skipping = skip != nil && skip(rd.Header())
			return nil
		}
		if skipping {
			return nil
		}
		b := rd.Batch()
		s.Select(b)
		if b.Type != wire.TypeWave {
			return nil
		}
		if filter != nil {
			if err := filter(rd.Header(), b); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		s.Pick(b)
		return nil
	})
	if err != nil {
		return err
	}
	s.pass, s.n = 2, 0
	in.Rewind()
	if s.best < 0 {
		return s.Check()
	}
	return nil
}

// Prepare returns the opener of the reading that selects: open itself for a
// one-pass selection; for TwoPass, Inputs over open that FirstPass (skip
// and filter as there) has read once and rewound. done removes the copies
// that first reading made.
func (s *Selector) Prepare(open OpenFunc, paths []string, skip func(*wire.Header) bool, filter func(*wire.Header, *wire.Batch) error) (next OpenFunc, done func(), err error) {
	if !s.TwoPass() {
		return open, func() {}, nil
	}
	in := NewInputs(open)
	if err := s.FirstPass(in, paths, skip, filter); err != nil {
		in.Close()
		return nil, nil, err
	}
	return in.Open, func() { in.Close() }, nil
}

// End checks that the selection matched (Check) and, with show, names on w
// the wave a two-pass selection chose: "<tool>: --wave <spec>: <ID>, kernel
// <K>, <N> cycles".
func (s *Selector) End(w io.Writer, tool string, show bool) error {
	if err := s.Check(); err != nil {
		return err
	}
	if c, ok := s.Chosen(); ok && s.TwoPass() && show {
		fmt.Fprintf(w, "%s: --wave %s: %s, kernel %s, %d cycles\n", tool, s.wave, c.Key, c.Kernel, c.Duration())
	}
	return nil
}
