// Package driver is the one front door of decoding, shared by att-decode
// and att-tool: a trace file (or stream) and the index of its code objects
// flow in, the stream header and the decoder's record batches flow out to a
// Sink, in the decoder's callback order.
//
// It owns everything the two commands must do alike: the choice of the
// backend (auto, native, rocm; a missing library reported once, exit 4 with
// --backend rocm), the native decoder's compat and pool settings, the
// code objects handed to the library's disassembler, the header stamping
// (producer, backend and its version, trace path, shader engine, run,
// GFXIP), the architecture check against the index's code objects (exit
// 3), the decoder's INFO records and the truncated- and empty-trace
// warnings, and the naming of errors (the trace's name first, the exit code
// of the step that failed kept; an output error is not a decoding error;
// an interrupt is reported as such), and the cores a decode runs on
// (Options.Cores: with a core spare, the native decoder splits itself
// over two, pipeline.go; the sink sees the same batches in the same
// order).
package driver

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/attkit/attkit/internal/arch"
	"github.com/attkit/attkit/internal/backend"
	"github.com/attkit/attkit/internal/cdec"
	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/sqtt"
	"github.com/attkit/attkit/internal/wire"
)

// Options configure a Driver.
type Options struct {
	// Backend is "auto" (the ROCm library when found, else native),
	// "native" or "rocm".
	Backend string
	// Lib is the path of librocprof-trace-decoder.so, first in the lookup.
	Lib string
	// Compat is the native decoder's: sqtt.Lib016 makes its records
	// exactly those of AMD's 0.1.6 build (implies WholeBatches).
	Compat sqtt.Compat
	// WholeBatches makes the native decoder pool occupancy, perf and
	// realtime records to the end of the trace as the library does.
	WholeBatches bool
	// CodeObjects go to the library's built-in disassembler (rocm only;
	// att-decode --code-object ID=PATH@ADDR).
	CodeObjects []string
	// Producer is stamped into every header ("att-decode v1.2").
	Producer string
	// AnyArch decodes a trace whose architecture is not that of the
	// index's code objects.
	AnyArch bool
	// Cores is how many cores the decodes of this Driver may use in all
	// (0: GOMAXPROCS), and AtOnce how many traces the caller decodes at
	// once (0: 1), each on a core of its own. A native decode runs on
	// two cores (sqtt.Decoder.Split: the token reading on one, stitching,
	// record building and the sink on the other; the output is the same,
	// byte for byte) while Cores leaves one spare beyond AtOnce, else on
	// one core: Cores 1 decodes on one core, and att-tool's traces
	// decoded in parallel share its cores.
	Cores, AtOnce int
	// Warn receives the warnings: trace is the trace's name, or "" for a
	// warning about the run (the library not found, using native). Nil
	// drops them (--quiet).
	Warn func(trace, text string)
}

// A Driver decodes traces with one backend, chosen once by New. Decode may
// run from several goroutines at once (one decoder each).
type Driver struct {
	opt   Options
	rocm  bool
	codes []codeObject

	mu    sync.Mutex
	first *cdec.Decoder // the library loaded by New, for the first Decode

	spare            atomic.Int64 // cores left for split decodes
	chunkLen, bigLen int          // a split decode's bounds, 0 the defaults (tests make them small)
}

// New chooses the backend. With --backend rocm (or code objects for the
// library) a missing library is an error of exit code 4; with auto it is a
// warning only when Lib named it, and the native decoder runs.
func New(opt Options) (*Driver, error) {
	d := &Driver{opt: opt}
	if d.opt.Cores <= 0 {
		d.opt.Cores = runtime.GOMAXPROCS(0)
	}
	d.spare.Store(int64(d.opt.Cores - max(d.opt.AtOnce, 1)))
	for _, s := range opt.CodeObjects {
		co, err := parseCodeObject(s)
		if err != nil {
			return nil, err
		}
		d.codes = append(d.codes, co)
	}
	if opt.Backend == "native" {
		if len(opt.CodeObjects) > 0 {
			return nil, exitcode.Errorf(exitcode.Usage,
				"--code-object needs the ROCm library's disassembler (--backend rocm); the native decoder takes --index")
		}
		return d, nil
	}
	lib, err := cdec.Load(opt.Lib)
	if err != nil {
		if opt.Backend == "rocm" || len(opt.CodeObjects) > 0 {
			return nil, err
		}
		if opt.Lib != "" {
			d.warn("", fmt.Sprintf("%v; using the native decoder", err))
		}
		return d, nil
	}
	if err := d.addCodeObjects(lib); err != nil {
		lib.Close()
		return nil, err
	}
	d.rocm, d.first = true, lib
	return d, nil
}

// Close releases a library decoder that no Decode took.
func (d *Driver) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.first != nil {
		d.first.Close()
		d.first = nil
	}
}

func (d *Driver) warn(trace, text string) {
	if d.opt.Warn != nil {
		d.opt.Warn(trace, text)
	}
}

// decoder returns a decoder of the chosen backend for one trace and the
// function that releases it.
func (d *Driver) decoder() (backend.Decoder, func(), error) {
	if !d.rocm {
		n := sqtt.New()
		if d.opt.WholeBatches || d.opt.Compat == sqtt.Lib016 {
			n.PoolLimit = -1
		}
		n.Compat = d.opt.Compat
		return n, func() {}, nil
	}
	d.mu.Lock()
	lib := d.first
	d.first = nil
	d.mu.Unlock()
	if lib == nil {
		var err error
		if lib, err = cdec.Load(d.opt.Lib); err != nil {
			return nil, nil, err
		}
		if err := d.addCodeObjects(lib); err != nil {
			lib.Close()
			return nil, nil, err
		}
	}
	return lib, func() { lib.Close() }, nil
}

// codeObject is one --code-object argument.
type codeObject struct {
	id, addr uint64
	path     string
	arg      string
}

func parseCodeObject(s string) (codeObject, error) {
	bad := exitcode.Errorf(exitcode.Usage, "--code-object %q: want ID=PATH@ADDR", s)
	idStr, rest, ok := strings.Cut(s, "=")
	if !ok {
		return codeObject{}, bad
	}
	at := strings.LastIndexByte(rest, '@')
	if at < 0 {
		return codeObject{}, bad
	}
	id, err1 := strconv.ParseUint(idStr, 0, 64)
	addr, err2 := strconv.ParseUint(rest[at+1:], 0, 64)
	if err1 != nil || err2 != nil || at == 0 {
		return codeObject{}, bad
	}
	return codeObject{id: id, addr: addr, path: rest[:at], arg: s}, nil
}

func (d *Driver) addCodeObjects(lib *cdec.Decoder) error {
	for _, co := range d.codes {
		data, err := os.ReadFile(co.path)
		if err != nil {
			return err
		}
		if err := lib.AddCodeObject(co.id, co.addr, loadedSize(data), data); err != nil {
			return fmt.Errorf("--code-object %s: %w", co.arg, err)
		}
	}
	return nil
}

// loadedSize is the size of a code object's loaded memory range: the span
// of its PT_LOAD segments, or the file size when it is not an ELF file.
func loadedSize(data []byte) uint64 {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return uint64(len(data))
	}
	lo, hi := ^uint64(0), uint64(0)
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			lo, hi = min(lo, p.Vaddr), max(hi, p.Vaddr+p.Memsz)
		}
	}
	if hi <= lo {
		return uint64(len(data))
	}
	return hi - lo
}

// Code is what a decode needs of an index: the instruction provider and
// the targets of its code objects, for the architecture check.
type Code struct {
	Prov    isa.Provider
	targets []string
}

// NewCode returns the Code of ix; nil ix gives none (no PCs, no check).
func NewCode(ix *wire.Index) *Code {
	if ix == nil {
		return &Code{}
	}
	return &Code{Prov: isa.NewTable(ix), targets: arch.IndexTargets(ix, "")}
}

// NewIndexCode returns the Code of the index read from the file path: a
// code.json's relative hsaco paths are taken from its folder.
func NewIndexCode(ix *wire.Index, path string) *Code {
	c := NewCode(ix)
	c.targets = arch.IndexTargets(ix, filepath.Dir(path))
	return c
}

// checkArch is the architecture rule of internal/arch, at the trace's
// GFXIP record: a trace of another family or gfx9 generation than the
// index's code objects is refused with exit code 3, the first thing every
// decoder reports: its PCs would be looked up in another GPU's code.
func checkArch(name string, tr wire.Trace, c *Code, anyArch bool) error {
	if anyArch {
		return nil
	}
	return arch.Check(arch.Trace{Name: name, GFXIP: tr.GFXIP, Target: tr.Target}, "", c.targets)
}

// A Sink receives one trace's output.
type Sink interface {
	// Header is called once: before the first batch, or at the end for a
	// trace without records. GFXIP is set when the decoder reported it.
	Header(h *wire.Header) error
	// Batch receives the record batches in the decoder's order.
	Batch(b *wire.Batch) error
}

// A Trace is one decode's input.
type Trace struct {
	// Name names the trace in messages (the path as given, "<stdin>").
	Name string
	// Header is stamped into the stream header (Path, SE, Run); GFXIP is
	// filled from the decoder.
	Header wire.Trace
	// Input is read once; a file's Stat, ReadAt and Seek pass through to
	// the backend. An io.Closer is closed when ctx is cancelled, which also
	// ends a read that waits on a pipe.
	Input io.Reader
	// Code is the index of the trace's code objects (nil: none).
	Code *Code
	// Target is the trace's GPU target as its capture tells it
	// (arch.CaptureTarget), checked against Code's like Header.Target but
	// not recorded in the header ("" unknown).
	Target string
	// Read, when not nil, is added the bytes read, as they are read
	// (progress).
	Read *atomic.Int64
}

// A Result tells what one decode did.
type Result struct {
	Bytes  int64 // bytes of the trace read
	Header wire.Header
	Empty  bool // no record at all
	// Ending tells how the trace ended (sqtt-format.md 1.7): cut inside
	// a token (native backend only), waves still running (from the
	// records, any backend), and its length; Decode warns when
	// Ending.Cut(). att-info reports it.
	Ending sqtt.Ending
}

// truncatedBelow is the data a trace holds at least after its 8-byte
// header (gfx9's software header, RDNA's HEADER token): the hardware writes
// its buffer in 32-byte blocks (sqtt-format.md 1.1), so a trace with less is
// cut short, though it may still decode.
const truncatedBelow = 32

// Decode decodes one trace into sink. Its error names the trace and keeps
// the exit code of the step that failed; an error of the sink is returned
// as it is, an interrupt as ctx.Err().
func (d *Driver) Decode(ctx context.Context, t Trace, sink Sink) (Result, error) {
	if c, ok := t.Input.(io.Closer); ok {
		stop := context.AfterFunc(ctx, func() { c.Close() })
		defer stop()
	}
	// The front door of both backends: a body that is no token stream is
	// refused (exit 3) before any decoder sees it (sqtt-format.md 1.6).
	prefix, in, err := sqtt.PlausiblePrefix(t.Input)
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		return Result{}, &Prefixed{Prefix: t.Name, Err: err}
	}
	if err := sqtt.CheckPlausible(prefix); err != nil {
		return Result{}, exitcode.Errorf(exitcode.Format, "%s: %v", t.Name, err)
	}
	dec, release, err := d.decoder()
	if err != nil {
		return Result{}, err
	}
	defer release()
	code := t.Code
	if code == nil {
		code = &Code{}
	}
	cr := &countingReader{r: in, total: t.Read}
	s := &session{d: d, t: &t, code: code, sink: sink}
	s.hdr = wire.Header{
		Producer:       d.opt.Producer,
		Backend:        dec.Name(),
		BackendVersion: dec.Version(),
		Trace:          t.Header,
	}
	var ending sqtt.Ending
	stop := func() {}
	if n, ok := dec.(*sqtt.Decoder); ok {
		n.Ended = func(e sqtt.Ending) { ending = e }
		n.Split, stop = d.splitCore()
		n.SplitChunk, n.SplitBig = d.chunkLen, d.bigLen
	}
	err = dec.Decode(ctx, cr, code.Prov, s.emit)
	stop()
	res := Result{Bytes: cr.n.Load()}
	if s.sinkErr != nil {
		return res, s.sinkErr
	}
	if err != nil {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		return res, s.decodeError(err)
	}
	if n := res.Bytes; n >= 8 && n < 8+truncatedBelow {
		d.warn(t.Name, fmt.Sprintf("truncated trace: only %d bytes after its 8-byte header (a trace buffer is written in %d-byte blocks)",
			n-8, truncatedBelow))
	}
	ending.Bytes, ending.OpenWaves = res.Bytes, s.watch.Open()
	if res.Ending = ending; ending.Cut() {
		d.warn(t.Name, ending.Warning())
	}
	if !s.started {
		res.Empty = true
		d.warn(t.Name, "empty trace, no records")
		if err := s.start(); err != nil {
			return res, err
		}
	}
	res.Header = s.hdr
	return res, nil
}

type session struct {
	d       *Driver
	t       *Trace
	code    *Code
	sink    Sink
	hdr     wire.Header
	started bool
	sinkErr error
	watch   sqtt.EndWatch // waves still running (Result.Ending)
}

func (s *session) start() error {
	s.started = true
	return s.sink.Header(&s.hdr)
}

// errSink stops the decoder after an error of the sink (kept in sinkErr).
var errSink = errors.New("output failed")

func (s *session) emit(b *wire.Batch) error {
	if b.Type == wire.TypeGFXIP && s.hdr.Trace.GFXIP == 0 {
		s.hdr.Trace.GFXIP = int(b.GFXIP)
		tr := s.hdr.Trace
		if tr.Target == "" {
			tr.Target = s.t.Target
		}
		if err := checkArch(s.t.Name, tr, s.code, s.d.opt.AnyArch); err != nil {
			s.sinkErr = err
			return errSink
		}
	}
	if !s.started {
		if err := s.start(); err != nil {
			s.sinkErr = err
			return errSink
		}
	}
	if b.Type == wire.TypeInfo {
		for _, v := range b.Info {
			s.d.warn(s.t.Name, v.Text())
		}
	}
	s.watch.Batch(b)
	if err := s.sink.Batch(b); err != nil {
		s.sinkErr = err
		return errSink
	}
	return nil
}

// decodeError names a decoder's error by the trace.
func (s *session) decodeError(err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	var ae *sqtt.ArchError
	if errors.As(err, &ae) {
		return exitcode.Errorf(exitcode.Format, "%s: %v", s.t.Name, err)
	}
	return &Prefixed{Prefix: s.t.Name, Err: err}
}

// Prefixed prefixes an error with the trace name, keeping its exit code.
type Prefixed struct {
	Prefix string
	Err    error
}

func (e *Prefixed) Error() string { return e.Prefix + ": " + e.Err.Error() }
func (e *Prefixed) Unwrap() error { return e.Err }

type countingReader struct {
	r     io.Reader
	n     atomic.Int64
	total *atomic.Int64
}

func (c *countingReader) add(n int) {
	c.n.Add(int64(n))
	if c.total != nil {
		c.total.Add(int64(n))
	}
}

// Stat passes the input's Stat through, so that a backend can size its
// buffer from a regular file's length.
func (c *countingReader) Stat() (os.FileInfo, error) {
	if st, ok := c.r.(interface{ Stat() (os.FileInfo, error) }); ok {
		return st.Stat()
	}
	return nil, errors.ErrUnsupported
}

// ReadAt and Seek pass through to a file input (a backend may read a
// regular file in parallel); other inputs answer errors.ErrUnsupported.
func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	ra, ok := c.r.(io.ReaderAt)
	if !ok {
		return 0, errors.ErrUnsupported
	}
	n, err := ra.ReadAt(p, off)
	c.add(n)
	return n, err
}

func (c *countingReader) Seek(off int64, whence int) (int64, error) {
	sk, ok := c.r.(io.Seeker)
	if !ok {
		return 0, errors.ErrUnsupported
	}
	return sk.Seek(off, whence)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.add(n)
	return n, err
}
