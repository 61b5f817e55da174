package wire

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/attkit/attkit/internal/exitcode"
)

// A Writer writes a record stream. It buffers: call Flush at the end and
// check its error. A Writer is not safe for concurrent use.
type Writer struct {
	w   io.Writer
	buf []byte // encoded, not yet written
	err error  // the first write error: every later call returns it
}

// writeSize is how much encoding a Writer holds before it writes it out:
// records are encoded straight into its buffer, which is written as it is
// (no second copy through a bufio.Writer), and a large batch (the occupancy
// of a whole trace comes as one) goes out in pieces of about this size
// that stay in cache, not from one buffer of its size.
const writeSize = 256 << 10

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, buf: make([]byte, 0, writeSize+writeSize/4)}
}

// WriteHeader starts a stream (or a new part of one). Format and Major are
// filled in when empty.
func (w *Writer) WriteHeader(h *Header) error {
	hh := *h
	if hh.Format == "" {
		hh.Format = RecordsFormat
	}
	if hh.Major == 0 {
		hh.Major = RecordsMajor
	}
	if hh.Trace.Target != "" && hh.Minor < 1 {
		hh.Minor = 1 // the minor that added trace.target
	}
	p, err := marshalMap(&hh)
	if err != nil {
		return err
	}
	w.buf = append(w.buf, p...)
	w.buf = w.spill(w.buf)
	return w.err
}

func marshalMap(v any) ([]byte, error) {
	var buf bytesBuffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	enc.UseCompactInts(true)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.b, nil
}

type bytesBuffer struct{ b []byte }

func (b *bytesBuffer) Write(p []byte) (int, error) { b.b = append(b.b, p...); return len(p), nil }

// WriteBatch writes one batch: [type, payload].
func (w *Writer) WriteBatch(b *Batch) error {
	if w.err != nil {
		return w.err
	}
	w.buf = appendBatch(w.buf, b, w.spill)
	w.buf = w.spill(w.buf)
	return w.err
}

// spill writes out the encoding so far once it holds writeSize bytes, and
// returns the buffer to go on with.
func (w *Writer) spill(dst []byte) []byte {
	if len(dst) < writeSize {
		return dst
	}
	return w.write(dst)
}

// write writes dst out and returns it emptied.
func (w *Writer) write(dst []byte) []byte {
	if w.err == nil && len(dst) > 0 {
		_, w.err = w.w.Write(dst)
	}
	return dst[:0]
}

// A spiller takes a batch's partial encoding between records and returns
// the buffer to go on with; nil keeps it all.
type spiller func([]byte) []byte

func (f spiller) check(dst []byte) []byte {
	if f != nil && len(dst) >= writeSize {
		return f(dst)
	}
	return dst
}

// Flush writes what the Writer holds to the underlying writer.
func (w *Writer) Flush() error {
	w.buf = w.write(w.buf)
	return w.err
}

// WriteStream writes one whole part to w: header h, then batches, flushed.
// It is the whole of a producer that holds its records already (tests,
// generators); a decoder streams with a Writer instead.
func WriteStream(w io.Writer, h *Header, batches ...Batch) error {
	sw := NewWriter(w)
	if err := sw.WriteHeader(h); err != nil {
		return err
	}
	for i := range batches {
		if err := sw.WriteBatch(&batches[i]); err != nil {
			return err
		}
	}
	return sw.Flush()
}

// AppendBatch appends the msgpack encoding of b to dst.
func AppendBatch(dst []byte, b *Batch) []byte { return appendBatch(dst, b, nil) }

func appendBatch(dst []byte, b *Batch, spill spiller) []byte {
	dst = append(dst, 0x92)
	dst = appendUint(dst, uint64(b.Type))
	return appendPayload(dst, b, spill)
}

func appendStrOrNil(dst []byte, s string, null bool) []byte {
	if null {
		return append(dst, 0xc0)
	}
	return appendString(dst, s)
}

// Kind is what the last call to Reader.Scan produced.
type Kind int

// Kinds of values in a record stream.
const (
	KindHeader Kind = iota + 1 // a header: a new part begins
	KindBatch                  // a batch of records
)

// A FormatError reports a record or index stream that is truncated or
// corrupt, with the byte offset where reading failed (and, in JSON lines
// input, the line).
type FormatError struct {
	Name   string // input name, "<stdin>" for standard input
	Offset int64
	Line   int // 1-based line of JSON lines input; 0 for msgpack
	Err    error
}

func (e *FormatError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.Name, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: offset %d: %v", e.Name, e.Offset, e.Err)
}

func (e *FormatError) Unwrap() error { return e.Err }

// ExitCode is exitcode.Failed: the input is damaged.
func (e *FormatError) ExitCode() int { return exitcode.Failed }

// A VersionError reports a stream that is not of the expected format or has
// a major version this package does not read.
type VersionError struct {
	Name       string
	Format     string // what the stream says it is ("" when it says nothing)
	Major      int
	WantFormat string
	WantMajor  int
	Detail     string // why the stream is not one, when known
}

func (e *VersionError) Error() string {
	if e.Format == "" && e.Detail != "" {
		return fmt.Sprintf("%s: not an %s stream (%s)", e.Name, e.WantFormat, e.Detail)
	}
	if e.Format == "" {
		return fmt.Sprintf("%s: not an %s stream", e.Name, e.WantFormat)
	}
	if e.Format != e.WantFormat {
		return fmt.Sprintf("%s: not an %s stream (found format %q)", e.Name, e.WantFormat, e.Format)
	}
	return fmt.Sprintf("%s: unsupported %s major version %d (this build reads version %d)",
		e.Name, e.Format, e.Major, e.WantMajor)
}

// ExitCode is exitcode.Format: not our format or an unsupported version.
func (e *VersionError) ExitCode() int { return exitcode.Format }

// A Reader reads a record stream, which may be several streams concatenated.
// It is shaped like bufio.Scanner: call Scan until it returns false, then
// Err. The Reader owns the Header and Batch it returns and reuses them (and
// their slices) on the next Scan: copy what you keep.
//
// An input that starts with '{' is read as the JSON projection instead, one
// record per line (see jsonread.go and docs/wire.md §2), so that the output
// of att-decode --format json, or of jq on it, can be read back.
type Reader struct {
	name   string
	m      mpReader
	hdr    Header
	batch  Batch
	kind   Kind
	part   int
	err    error
	sawHdr bool
	js     jsonState

	maxBatch int        // SetMaxBatch's bound; 0: none
	left     int        // records of the current batch not yet returned
	leftType RecordType // the type of those records
}

// SetMaxBatch makes Scan return a batch of more than n records in pieces
// of at most n, in order, each a Batch of the batch's type; n <= 0 returns
// every batch whole (the default). A consumer that does not depend on
// where batches end then holds at most n records at a time, however large
// the producer's batches are: a decoder delivers the perf counters or the
// realtime samples of a whole trace as one batch. Batches the stream
// delivers whole (GFXIP, RT_FREQUENCY, unknown types) are not cut.
func (rd *Reader) SetMaxBatch(n int) { rd.maxBatch = max(n, 0) }

// NewReader returns a Reader that reads r; name is used in error messages.
func NewReader(r io.Reader, name string) *Reader {
	rd := &Reader{}
	rd.Reset(r, name)
	return rd
}

// Reset makes rd read from r, keeping its buffers.
func (rd *Reader) Reset(r io.Reader, name string) {
	br := rd.m.br
	if br == nil {
		br = bufio.NewReaderSize(r, 256<<10)
	} else {
		br.Reset(r)
	}
	buf := rd.m.buf
	*rd = Reader{name: name, m: mpReader{br: br, buf: buf[:0]}, batch: rd.batch, part: -1,
		js: jsonState{buf: rd.js.buf[:0]}, maxBatch: rd.maxBatch}
}

// Scan reads the next header or batch. It returns false at the end of the
// input or on an error.
func (rd *Reader) Scan() bool {
	if rd.err != nil {
		return false
	}
	if rd.js.on {
		return rd.scanJSON()
	}
	m := &rd.m
	if rd.left > 0 {
		rd.batch.Reset(rd.leftType)
		rd.readRecords(rd.leftType, rd.left)
		return rd.endBatch()
	}
	c, err := m.br.ReadByte()
	if err == io.EOF {
		if !rd.sawHdr {
			rd.err = &FormatError{Name: rd.name, Offset: 0, Err: errors.New("empty stream")}
		}
		return false
	}
	if err != nil {
		rd.err = &FormatError{Name: rd.name, Offset: m.off, Err: err}
		return false
	}
	m.br.UnreadByte()
	if c >= 0x80 && c <= 0x8f || c == 0xde || c == 0xdf {
		return rd.scanHeader()
	}
	if c == '{' && !rd.sawHdr {
		rd.js.on = true
		return rd.scanJSON()
	}
	if !rd.sawHdr {
		rd.err = &VersionError{Name: rd.name, WantFormat: RecordsFormat, WantMajor: RecordsMajor}
		return false
	}
	rd.readBatch()
	return rd.endBatch()
}

// endBatch ends a Scan that read (part of) a batch.
func (rd *Reader) endBatch() bool {
	if m := &rd.m; m.err != nil {
		rd.err = &FormatError{Name: rd.name, Offset: m.off, Err: m.err}
		return false
	}
	rd.kind = KindBatch
	return true
}

func (rd *Reader) scanHeader() bool {
	m := &rd.m
	v := m.any(0)
	if m.err != nil {
		rd.err = &FormatError{Name: rd.name, Offset: m.off, Err: m.err}
		return false
	}
	mm, _ := v.(map[string]any)
	format, _ := mm["format"].(string)
	major := int(asInt(mm["major"]))
	if format != RecordsFormat || major != RecordsMajor {
		rd.err = &VersionError{Name: rd.name, Format: format, Major: major,
			WantFormat: RecordsFormat, WantMajor: RecordsMajor}
		return false
	}
	h := Header{Format: format, Major: major, Minor: int(asInt(mm["minor"]))}
	h.Producer, _ = mm["producer"].(string)
	h.Backend, _ = mm["backend"].(string)
	h.BackendVersion, _ = mm["backend_version"].(string)
	if t, ok := mm["trace"].(map[string]any); ok {
		h.Trace.Path, _ = t["path"].(string)
		h.Trace.SE = int(asInt(t["se"]))
		h.Trace.Run = int(asInt(t["run"]))
		h.Trace.GFXIP = int(asInt(t["gfxip"]))
		h.Trace.Target, _ = t["target"].(string)
	}
	rd.hdr = h
	rd.sawHdr = true
	rd.part++
	rd.kind = KindHeader
	return true
}

func asInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case uint64:
		return int64(x)
	}
	return 0
}

// Kind tells whether the last Scan read a header or a batch.
func (rd *Reader) Kind() Kind { return rd.kind }

// Header returns the header of the current part.
func (rd *Reader) Header() *Header { return &rd.hdr }

// Batch returns the batch the last Scan read; valid until the next Scan.
func (rd *Reader) Batch() *Batch { return &rd.batch }

// Part returns the 0-based number of the current part of a concatenated
// stream.
func (rd *Reader) Part() int { return rd.part }

// Offset returns the number of bytes consumed so far.
func (rd *Reader) Offset() int64 { return rd.m.off }

// Err returns the first error met, or nil at a clean end of input.
func (rd *Reader) Err() error { return rd.err }

func (rd *Reader) readBatch() {
	m := &rd.m
	b := &rd.batch
	if !m.wantArray("batch", 2) {
		return
	}
	t := RecordType(m.un("batch", "type", 32))
	if m.err != nil {
		return
	}
	b.Reset(t)
	rd.readPayload(t)
}

// readRecords reads n records of type t into rd.batch, or SetMaxBatch's
// bound of them, leaving the rest for the next Scan.
func (rd *Reader) readRecords(t RecordType, n int) {
	m := &rd.m
	b := &rd.batch
	rd.left, rd.leftType = 0, t
	if rd.maxBatch > 0 && n > rd.maxBatch {
		rd.left, n = n-rd.maxBatch, rd.maxBatch
	}
	m.readN(b, t, n)
}

// slowPath turns off the fast path of flat arrays (benchmarks compare both).
var slowPath = false
