package rcv

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/attkit/attkit/internal/pyjson"
)

// What grows with the trace (occupancy rows, events, realtime samples, the
// rows of the per-trace files, one entry per wave for filenames.json) waits
// in one temporary spool file instead of memory: each growing thing is a
// chain of blocks in that file plus a tail of at most chainBlock bytes in
// memory. The index files are then written by streaming the chains into
// their place in the document (writeDoc), byte for byte as pyjson lays the
// whole document out.

// chainBlock is the size at which a chain's tail moves to the spool file.
const chainBlock = 8 << 10

// A spoolFile is the Writer's temporary file, removed from its directory
// as soon as it is created (it goes away with the process).
type spoolFile struct {
	f   *os.File
	off int64
}

type block struct{ off, n int64 }

// put appends p to the file and returns where it went.
func (s *spoolFile) put(p []byte) (block, error) {
	n, err := s.f.Write(p)
	b := block{s.off, int64(n)}
	s.off += int64(n)
	if err != nil {
		return b, fmt.Errorf("spool file: %w", err)
	}
	return b, nil
}

// close closes the spool file and removes it where it still has a name:
// Windows cannot remove an open file, so the spool made by Folder.Spool or
// newSpool stays in its directory until now.
func (s *spoolFile) close() {
	if s != nil && s.f != nil {
		name := s.f.Name()
		s.f.Close()
		if _, err := os.Lstat(name); err == nil {
			os.Remove(name)
		}
	}
}

// newSpool makes the spool file: through the sink when it offers one (a
// Folder puts it on the output's file system), else in the system's
// temporary directory.
func newSpool(out Sink) (*spoolFile, error) {
	var f *os.File
	var err error
	if sp, ok := out.(Spooler); ok {
		f, err = sp.Spool()
	} else {
		f, err = os.CreateTemp("", "att-rcv-spool-")
		if err == nil {
			os.Remove(f.Name())
		}
	}
	if err != nil {
		return nil, fmt.Errorf("creating a spool file: %w", err)
	}
	return &spoolFile{f: f}, nil
}

// A chain is a byte string kept in the spool file.
type chain struct {
	s      *spoolFile
	blocks []block
	tail   []byte
}

func (c *chain) flushIfFull() error {
	if len(c.tail) < chainBlock {
		return nil
	}
	b, err := c.s.put(c.tail)
	if err != nil {
		return err
	}
	// A block written right after the chain's last one extends it: a chain
	// that fills while no other does keeps one entry.
	if n := len(c.blocks); n > 0 && c.blocks[n-1].off+c.blocks[n-1].n == b.off {
		c.blocks[n-1].n += b.n
	} else {
		c.blocks = append(c.blocks, b)
	}
	c.tail = c.tail[:0]
	return nil
}

// reader reads the chain from its start, a block at a time.
func (c *chain) reader() io.Reader { return &chainReader{c: c} }

// A chainReader reads a chain's blocks in order, then its tail.
type chainReader struct {
	c   *chain
	i   int   // the block being read; len(blocks): the tail
	off int64 // read so far of block i (or of the tail)
}

func (r *chainReader) Read(p []byte) (int, error) {
	for r.i < len(r.c.blocks) {
		b := r.c.blocks[r.i]
		if r.off == b.n {
			r.i, r.off = r.i+1, 0
			continue
		}
		n, err := r.c.s.f.ReadAt(p[:min(int64(len(p)), b.n-r.off)], b.off+r.off)
		r.off += int64(n)
		if err == io.EOF && r.off < b.n || err != nil && err != io.EOF {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return n, fmt.Errorf("spool file: %w", err)
		}
		return n, nil
	}
	if r.off == int64(len(r.c.tail)) {
		return 0, io.EOF
	}
	n := copy(p, r.c.tail[r.off:])
	r.off += int64(n)
	return n, nil
}

// A list is a JSON list (open '[') or object (open '{') at nesting depth
// level whose elements are encoded, one a line at level+1, into a chain as
// they come.
type list struct {
	chain
	level     int
	open, end byte
	n         int
}

func newList(s *spoolFile, open byte, level int) *list {
	end := byte(']')
	if open == '{' {
		end = '}'
	}
	return &list{chain: chain{s: s}, level: level, open: open, end: end}
}

// add encodes one element with enc, which appends it as it reads at
// level+1.
func (l *list) add(enc func(dst []byte) []byte) error {
	if l.n > 0 {
		l.tail = append(l.tail, ',')
	}
	l.tail = indent(l.tail, l.level+1)
	l.tail = enc(l.tail)
	l.n++
	return l.flushIfFull()
}

// writeTo writes the whole list as pyjson.AppendList lays it out.
func (l *list) writeTo(w io.Writer) error {
	if l.n == 0 {
		_, err := w.Write([]byte{l.open, l.end})
		return err
	}
	if _, err := w.Write([]byte{l.open}); err != nil {
		return err
	}
	if _, err := io.Copy(w, l.reader()); err != nil {
		return err
	}
	_, err := w.Write(append(indent(nil, l.level), l.end))
	return err
}

// part stands for a list in a document given to writeDoc.
func (l *list) part(d *doc) pyjson.Appender { return d.part(l.level, l.writeTo) }

// indent starts a new line at nesting depth level, as pyjson does.
func indent(dst []byte, level int) []byte {
	dst = append(dst, '\n')
	for i := 0; i < level; i++ {
		dst = append(dst, ' ', ' ')
	}
	return dst
}

// records is a chain of fixed-size binary records of type T (a struct of
// fixed-size fields, as the wire record types are).
type records[T any] struct {
	chain
	n int
}

func (r *records[T]) add(recs []T) error {
	// A few records at a time, so that a large batch does not pass
	// through memory a second time.
	const step = 64
	for len(recs) > 0 {
		k := min(len(recs), step)
		r.tail, _ = binary.Append(r.tail, binary.LittleEndian, recs[:k]) // cannot fail on these types
		r.n += k
		recs = recs[k:]
		if err := r.flushIfFull(); err != nil {
			return err
		}
	}
	return nil
}

// each calls fn with every record in order, a batch at a time (the slice
// is reused).
func (r *records[T]) each(fn func(recs []T) error) error {
	if r.n == 0 {
		return nil
	}
	rd := bufio.NewReaderSize(r.reader(), 64<<10)
	batch := make([]T, min(r.n, 1024))
	for left := r.n; left > 0; {
		b := batch[:min(left, len(batch))]
		if err := binary.Read(rd, binary.LittleEndian, b); err != nil {
			return fmt.Errorf("spool file: %w", err)
		}
		if err := fn(b); err != nil {
			return err
		}
		left -= len(b)
	}
	return nil
}

// all returns every record (for the rare inputs whose order must be
// changed in memory).
func (r *records[T]) all() ([]T, error) {
	out := make([]T, 0, r.n)
	err := r.each(func(recs []T) error {
		out = append(out, recs...)
		return nil
	})
	return out, err
}

// A doc collects the streamed parts of one document.
type doc struct {
	parts []docPart
}

type docPart struct {
	level int
	write func(w io.Writer) error
}

// part returns a value that, in a document written by writeDoc, stands for
// what write writes there: the encoding of a value at nesting depth level.
func (d *doc) part(level int, write func(w io.Writer) error) pyjson.Appender {
	d.parts = append(d.parts, docPart{level, write})
	return partMarker{d, len(d.parts) - 1}
}

type partMarker struct {
	d  *doc
	id int
}

// AppendPyJSON writes the part's place holder: a NUL, the part number and a
// NUL (pyjson escapes every NUL of a string, so none other occurs).
func (m partMarker) AppendPyJSON(dst []byte, level int) []byte {
	if p := m.d.parts[m.id]; p.level != level {
		panic(fmt.Sprintf("rcv: document part %d encoded at level %d, made for level %d", m.id, level, p.level))
	}
	dst = append(dst, 0)
	dst = strconv.AppendInt(dst, int64(m.id), 10)
	return append(dst, 0)
}

var errBadMarker = errors.New("rcv: broken document part marker")

// writeDoc writes v (holding parts of d) to w: pyjson's encoding with each
// part's place holder replaced by what the part writes.
func (d *doc) writeDoc(w io.Writer, v any) error {
	data := pyjson.Marshal(v)
	for len(data) > 0 {
		i := bytes.IndexByte(data, 0)
		if i < 0 {
			_, err := w.Write(data)
			return err
		}
		if _, err := w.Write(data[:i]); err != nil {
			return err
		}
		data = data[i+1:]
		j := bytes.IndexByte(data, 0)
		if j < 0 {
			return errBadMarker
		}
		id, err := strconv.Atoi(string(data[:j]))
		if err != nil || id < 0 || id >= len(d.parts) {
			return errBadMarker
		}
		if err := d.parts[id].write(w); err != nil {
			return err
		}
		data = data[j+1:]
	}
	return nil
}
