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
	bw  *bufio.Writer
	buf []byte
	err error // a write error while a batch was spilled
}

// spillSize is how much of a batch's encoding WriteBatch buffers before it
// writes it out: a large batch (the occupancy of a whole trace comes as one)
// is encoded in pieces that stay in cache, not into one buffer of its size.
const spillSize = 64 << 10

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{bw: bufio.NewWriterSize(w, 256<<10)}
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
	_, err = w.bw.Write(p)
	return err
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
	w.err = nil
	w.buf = appendBatch(w.buf[:0], b, w.spill)
	if w.err != nil {
		return w.err
	}
	_, err := w.bw.Write(w.buf)
	return err
}

// spill writes out the encoding so far and returns the emptied buffer.
func (w *Writer) spill(dst []byte) []byte {
	if w.err == nil {
		_, w.err = w.bw.Write(dst)
	}
	return dst[:0]
}

// A spiller takes a batch's partial encoding once it reaches spillSize
// bytes and returns the buffer to go on with; nil keeps it all.
type spiller func([]byte) []byte

func (f spiller) check(dst []byte) []byte {
	if f != nil && len(dst) >= spillSize {
		return f(dst)
	}
	return dst
}

// Flush writes buffered data to the underlying writer.
func (w *Writer) Flush() error { return w.bw.Flush() }

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
	switch b.Type {
	case TypeGFXIP:
		return appendUint(dst, b.GFXIP)
	case TypeRTFrequency:
		return appendUint(dst, b.RTFrequency)
	case TypeInfo:
		dst = appendArrayLen(dst, len(b.Info))
		for _, v := range b.Info {
			dst = spill.check(dst)
			dst = appendUint(dst, uint64(v))
		}
	case TypeOccupancy:
		dst = appendArrayLen(dst, len(b.Occupancy))
		for i := range b.Occupancy {
			dst = spill.check(dst)
			dst = appendOccupancy(dst, &b.Occupancy[i])
		}
	case TypePerfEvent:
		dst = appendArrayLen(dst, len(b.PerfEvents))
		for i := range b.PerfEvents {
			dst = spill.check(dst)
			dst = appendPerfEvent(dst, &b.PerfEvents[i])
		}
	case TypeWave:
		dst = appendArrayLen(dst, len(b.Waves))
		for i := range b.Waves {
			dst = spill.check(dst)
			dst = appendWave(dst, &b.Waves[i])
		}
	case TypeEvent:
		dst = appendArrayLen(dst, len(b.Events))
		for i := range b.Events {
			dst = spill.check(dst)
			dst = appendEvent(dst, &b.Events[i])
		}
	case TypeShaderData:
		dst = appendArrayLen(dst, len(b.ShaderData))
		for i := range b.ShaderData {
			dst = spill.check(dst)
			dst = appendShaderData(dst, &b.ShaderData[i])
		}
	case TypeRealtime:
		dst = appendArrayLen(dst, len(b.Realtime))
		for i := range b.Realtime {
			dst = spill.check(dst)
			dst = appendRealtime(dst, &b.Realtime[i])
		}
	case TypeInstOtherSIMD:
		dst = appendArrayLen(dst, len(b.OtherSIMD))
		for i := range b.OtherSIMD {
			dst = spill.check(dst)
			dst = appendOtherSIMD(dst, &b.OtherSIMD[i])
		}
	case TypeDispatch:
		dst = appendArrayLen(dst, len(b.Dispatches))
		for i := range b.Dispatches {
			dst = spill.check(dst)
			dst = appendDispatch(dst, &b.Dispatches[i])
		}
	case TypeMarker:
		dst = appendArrayLen(dst, len(b.Markers))
		for i := range b.Markers {
			dst = spill.check(dst)
			dst = appendMarker(dst, &b.Markers[i])
		}
	default:
		dst = appendArrayLen(dst, nRaw)
		dst = appendUint(dst, b.Raw.Count)
		dst = appendUint(dst, b.Raw.ElemSize)
		dst = appendBin(dst, b.Raw.Data)
	}
	return dst
}

func appendStrOrNil(dst []byte, s string, null bool) []byte {
	if null {
		return append(dst, 0xc0)
	}
	return appendString(dst, s)
}

// appendWave encodes a wave as a 13-element array whose timeline and
// instructions are flat arrays (2 and 6 values per element): instructions are
// the bulk of every stream, and flat arrays of small integers are the
// cheapest msgpack there is to write and read.
func appendWave(dst []byte, w *Wave) []byte {
	dst = appendWaveHead(dst, w)
	dst = appendArrayLen(dst, nTimeline*len(w.Timeline))
	for _, s := range w.Timeline {
		dst = appendInt(dst, int64(s.Type))
		dst = appendInt(dst, int64(s.Duration))
	}
	dst = appendArrayLen(dst, nInstruction*len(w.Instructions))
	for i := range w.Instructions {
		in := &w.Instructions[i]
		dst = appendUint(dst, uint64(in.Category))
		dst = appendUint(dst, uint64(in.Stall))
		dst = appendInt(dst, int64(in.Duration))
		dst = appendInt(dst, in.Time)
		dst = appendUint(dst, in.PC.Address)
		dst = appendUint(dst, in.PC.CodeObjectID)
	}
	return dst
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
	switch t {
	case TypeGFXIP:
		b.GFXIP = m.un("gfxip", "gfxip", 64)
		return
	case TypeRTFrequency:
		b.RTFrequency = m.un("rt_frequency", "frequency", 64)
		return
	}
	if !t.Known() {
		if m.wantArray("raw batch", nRaw) {
			b.Raw.Count = m.uint()
			b.Raw.ElemSize = m.uint()
			b.Raw.Data = m.bin(b.Raw.Data)
		}
		return
	}
	rd.readRecords(t, m.arrayLen())
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
	for i := 0; i < n && m.err == nil; i++ {
		switch t {
		case TypeInfo:
			b.Info = append(b.Info, Info(m.un("info", "info", 32)))
		case TypeOccupancy:
			var o Occupancy
			m.readOccupancy(&o)
			b.Occupancy = append(b.Occupancy, o)
		case TypePerfEvent:
			var p PerfEvent
			m.readPerfEvent(&p)
			b.PerfEvents = append(b.PerfEvents, p)
		case TypeWave:
			if len(b.Waves) < cap(b.Waves) {
				b.Waves = b.Waves[:len(b.Waves)+1]
			} else {
				b.Waves = append(b.Waves, Wave{})
			}
			rd.readWave(&b.Waves[len(b.Waves)-1])
		case TypeEvent:
			var e Event
			m.readEvent(&e)
			b.Events = append(b.Events, e)
		case TypeShaderData:
			var s ShaderData
			m.readShaderData(&s)
			b.ShaderData = append(b.ShaderData, s)
		case TypeRealtime:
			var r Realtime
			m.readRealtime(&r)
			b.Realtime = append(b.Realtime, r)
		case TypeInstOtherSIMD:
			var o OtherSIMD
			m.readOtherSIMD(&o)
			b.OtherSIMD = append(b.OtherSIMD, o)
		case TypeDispatch:
			var d Dispatch
			m.readDispatch(&d)
			b.Dispatches = append(b.Dispatches, d)
		case TypeMarker:
			var k Marker
			m.readMarker(&k)
			b.Markers = append(b.Markers, k)
		}
	}
}

func (rd *Reader) readWave(w *Wave) {
	m := &rd.m
	tl, ins := w.Timeline[:0], w.Instructions[:0]
	*w = Wave{}
	defer func() { w.Timeline, w.Instructions = tl, ins }()
	if m.readWaveHead(w); m.err != nil {
		return
	}
	n := m.arrayLen()
	if n%nTimeline != 0 {
		m.failf("wave timeline: %d values is not a multiple of %d", n, nTimeline)
		return
	}
	for i := 0; i < n/nTimeline && m.err == nil; i++ {
		tl = append(tl, WaveState{Type: WaveStateType(m.in("wave timeline", "type", 32)),
			Duration: int32(m.in("wave timeline", "duration", 32))})
	}
	n = m.arrayLen()
	if n%nInstruction != 0 {
		m.failf("wave instructions: %d values is not a multiple of %d", n, nInstruction)
		return
	}
	for i := 0; i < n/nInstruction && m.err == nil; i++ {
		if !slowPath {
			var k int
			if ins, k = m.fastInstructions(ins, n/nInstruction-i); k > 0 {
				i += k - 1
				continue
			}
		}
		var in Instruction
		const r = "wave instruction"
		in.Category = InstCategory(m.un(r, "category", 8))
		in.Stall = uint32(m.un(r, "stall", 32))
		in.Duration = int32(m.in(r, "duration", 32))
		in.Time = m.in(r, "time", 64)
		in.PC.Address = m.un(r, "pc.address", 64)
		in.PC.CodeObjectID = m.un(r, "pc.code_object_id", 64)
		ins = append(ins, in)
	}
}

// slowPath turns off the instruction fast path (benchmarks compare both).
var slowPath = false
