package main

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/attkit/attkit/internal/backend"
	"github.com/attkit/attkit/internal/cdec"
	"github.com/attkit/attkit/internal/cli"
	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/jq"
	"github.com/attkit/attkit/internal/sqtt"
	"github.com/attkit/attkit/internal/tracename"
	"github.com/attkit/attkit/internal/wire"
)

type flags struct {
	cli.VersionFlag
	Index      string   `placeholder:"FILE" help:"Instruction index: an index stream from co-index, or a code.json."`
	Backend    string   `enum:"auto,native,rocm" default:"auto" help:"Decoder: native (Go; gfx9, gfx10-gfx12), rocm (AMD's library) or auto (rocm when the library is found, else native)."`
	Lib        string   `placeholder:"PATH" help:"The rocprof-trace-decoder library for --backend rocm|auto (default: $ROCPROF_TRACE_DECODER_LIB, then the standard lookup)."`
	CodeObject []string `name:"code-object" sep:"none" placeholder:"ID=PATH@ADDR" help:"Give the library's built-in disassembler a code object loaded at ADDR (repeatable; rocm only)."`
	SE         int      `name:"se" default:"-1" placeholder:"N" help:"Shader engine recorded in the header (default: from the file name, else 0)."`
	Run        int      `name:"run" default:"-1" placeholder:"N" help:"Run recorded in the header (default: from the file name, else 1)."`
	Format     string   `enum:"msgpack,json" default:"msgpack" help:"Output: msgpack (record stream) or json (one object per record per line)."`
	Jq         string   `name:"jq" placeholder:"FILTER" help:"jq program run on each record's JSON projection: json output prints its results, msgpack output keeps the records it accepts."`
	Compat     string   `enum:"newest,0.1.6" default:"newest" help:"Native decoder, gfx9: records of the newest library (newest) or exactly those of AMD's 0.1.6 build that ROCm 7.x ships (0.1.6, implies --whole-batches)."`
	WholeBatch bool     `name:"whole-batches" help:"Native decoder: pool occupancy, perf and realtime records to the end of the trace as the library does (memory then grows with the trace; default: batches of at most 65536)."`
	Progress   bool     `help:"Show progress on stderr (default: when stderr is a terminal)."`
	Quiet      bool     `short:"q" help:"Do not print decoder warnings on stderr."`
	Output     string   `short:"o" placeholder:"FILE" help:"Write to FILE (atomically) instead of standard output."`
	Force      bool     `help:"Decode a trace whose architecture is not that of the index's code objects."`
	Trace      string   `arg:"" name:"TRACE" help:"The .att trace, or - for standard input."`
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &cli.Env{Name: "att-decode", Stdin: stdin, Stdout: stdout, Stderr: stderr}
	var f flags
	if code, done := env.Parse(&f, "Decode a thread trace (.att) into attkit records.", args); done {
		return code
	}
	return env.Fail(decode(context.Background(), env, &f))
}

// codeObject is one --code-object argument.
type codeObject struct {
	id, addr uint64
	path     string
}

func parseCodeObject(s string) (codeObject, error) {
	bad := cli.Errorf(cli.ExitUsage, "--code-object %q: want ID=PATH@ADDR", s)
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
	return codeObject{id: id, addr: addr, path: rest[:at]}, nil
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

// chooseBackend returns the decoder to run and a function to release it.
func chooseBackend(env *cli.Env, f *flags) (backend.Decoder, func(), error) {
	nop := func() {}
	native := sqtt.New()
	if f.WholeBatch || f.Compat == "0.1.6" {
		native.PoolLimit = -1
	}
	native.Compat016 = f.Compat == "0.1.6"
	if f.Backend == "native" {
		if len(f.CodeObject) > 0 {
			return nil, nop, cli.Errorf(cli.ExitUsage,
				"--code-object needs the ROCm library's disassembler (--backend rocm); the native decoder takes --index")
		}
		return native, nop, nil
	}
	d, err := cdec.Load(f.Lib)
	if err != nil {
		if f.Backend == "rocm" || len(f.CodeObject) > 0 {
			return nil, nop, err
		}
		if f.Lib != "" && !f.Quiet {
			env.Warnf("%v; using the native decoder", err)
		}
		return native, nop, nil
	}
	release := func() { d.Close() }
	for _, s := range f.CodeObject {
		co, err := parseCodeObject(s)
		if err != nil {
			release()
			return nil, nop, err
		}
		data, err := os.ReadFile(co.path)
		if err != nil {
			release()
			return nil, nop, err
		}
		if err := d.AddCodeObject(co.id, co.addr, loadedSize(data), data); err != nil {
			release()
			return nil, nop, fmt.Errorf("--code-object %s: %w", s, err)
		}
	}
	return d, release, nil
}

func decode(ctx context.Context, env *cli.Env, f *flags) error {
	var filter *jq.Filter
	if f.Jq != "" {
		var err error
		if filter, err = jq.Compile(f.Jq); err != nil {
			return err
		}
	}
	for _, s := range f.CodeObject {
		if _, err := parseCodeObject(s); err != nil {
			return err
		}
	}
	se, runN := 0, 1
	if s, r, ok := tracename.Parse(f.Trace); ok && f.Trace != "-" {
		se, runN = s, r
	}
	if f.SE >= 0 {
		se = f.SE
	}
	if f.Run >= 0 {
		runN = f.Run
	}

	var prov isa.Provider
	var targets map[int][]string
	if f.Index != "" {
		ix, err := wire.ReadIndexFile(f.Index)
		if err != nil {
			return err
		}
		prov = isa.NewTable(ix)
		targets = indexTargets(ix)
	}

	in, name, err := env.Open(f.Trace)
	if err != nil {
		return err
	}
	defer in.Close()

	dec, release, err := chooseBackend(env, f)
	if err != nil {
		return err
	}
	defer release()

	var total int64 = -1
	if st, ok := in.(interface{ Stat() (os.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil && fi.Mode().IsRegular() {
			total = fi.Size()
		}
	}
	cr := &countingReader{r: in}
	if cli.ProgressWanted(f.Progress, env.Stderr) {
		stop := progress(env, name, cr, total)
		defer stop()
	}

	s := &session{
		env: env, f: f, filter: filter, name: name,
		warnNoISA: prov == nil && len(f.CodeObject) == 0 && !f.Quiet,
		targets:   targets,
		hdr: wire.Header{
			Producer:       "att-decode " + cli.Version(),
			Backend:        dec.Name(),
			BackendVersion: dec.Version(),
			Trace:          wire.Trace{Path: f.Trace, SE: se, Run: runN},
		},
	}
	write := func(w io.Writer) error {
		if f.Format == "msgpack" {
			s.mp = wire.NewWriter(w)
		} else {
			s.out = bufio.NewWriterSize(w, 256<<10)
		}
		err := dec.Decode(ctx, cr, prov, s.emit)
		if s.writeErr != nil {
			return s.writeErr
		}
		if err != nil {
			// Keep the records decoded before the error: the stream then
			// ends after a whole batch.
			if s.started {
				s.flush()
			}
			return s.decodeError(err)
		}
		if n := cr.n.Load(); n >= 8 && n < 8+truncatedBelow && !f.Quiet {
			env.Warnf("%s: truncated trace: only %d bytes after its 8-byte header (a trace buffer is written in %d-byte blocks)",
				name, n-8, truncatedBelow)
		}
		if !s.started {
			if !f.Quiet {
				env.Warnf("%s: empty trace, no records", name)
			}
			if err := s.start(); err != nil {
				return err
			}
		}
		return s.flush()
	}
	if f.Output != "" && f.Output != "-" {
		err = cli.WriteFileAtomic(f.Output, write)
	} else {
		err = write(env.Stdout)
	}
	if errors.Is(err, syscall.EPIPE) {
		// The reader went away (att-decode x.att | head): stop quietly.
		return cli.Silent{Code: cli.ExitFailed}
	}
	return err
}

// truncatedBelow is the data a trace holds at least after its 8-byte
// header (gfx9's software header, RDNA's HEADER token): the hardware writes
// its buffer in 32-byte blocks (sqtt-format.md 1.1), so a trace with less is
// cut short, though it may still decode.
const truncatedBelow = 32

// session writes the records of one decode.
type session struct {
	env      *cli.Env
	f        *flags
	filter   *jq.Filter
	name     string
	hdr      wire.Header
	out      *bufio.Writer
	mp       *wire.Writer
	buf      []byte
	json     wire.JSONWriter
	started  bool
	writeErr error
	// warnNoISA asks for a warning at the first wave: without an index
	// no instruction gets a PC.
	warnNoISA bool
	// targets are the index's code-object targets by GFXIP major (nil
	// when it names none).
	targets map[int][]string
}

// indexTargets returns the targets of the index's code objects by GFXIP
// major ("gfx942" and "gfx90a" are 9, "gfx1100" is 11), nil when no object
// names a known one (a code.json index, for one).
func indexTargets(ix *wire.Index) map[int][]string {
	var m map[int][]string
	for _, o := range ix.Objects {
		t := o.Target
		if len(t) < 6 || !strings.HasPrefix(t, "gfx") {
			continue
		}
		// gfx<major><minor><stepping>: minor one digit, stepping one hex digit.
		major, err := strconv.Atoi(t[3 : len(t)-2])
		if err != nil {
			continue
		}
		if m == nil {
			m = map[int][]string{}
		}
		if !slices.Contains(m[major], t) {
			m[major] = append(m[major], t)
		}
	}
	return m
}

// checkArch fails with exit code 3 when the index names code objects of
// known targets and none is of the trace's GFXIP major, the first thing
// every decoder reports: PCs would be looked up in another GPU's code.
func (s *session) checkArch() error {
	if s.targets == nil || s.f.Force || len(s.targets[s.hdr.Trace.GFXIP]) > 0 {
		return nil
	}
	var all []string
	for _, ts := range s.targets {
		all = append(all, ts...)
	}
	slices.Sort(all)
	return cli.Errorf(cli.ExitFormat, "%s: a gfx%d trace, but the code objects of %s are for %s; "+
		"give the index of this trace's code objects, or --force", s.name, s.hdr.Trace.GFXIP, s.f.Index, strings.Join(all, ", "))
}

// writeError marks an output error, so that it is not reported as a
// decoding error.
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

func (s *session) decodeError(err error) error {
	var we *writeError
	if errors.As(err, &we) {
		return we.err
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	var ae *sqtt.ArchError
	if errors.As(err, &ae) {
		return cli.Errorf(cli.ExitFormat, "%s: %v", s.name, err)
	}
	return &prefixed{prefix: s.name, err: err}
}

// prefixed prefixes an error with the trace name, keeping its exit code.
type prefixed struct {
	prefix string
	err    error
}

func (e *prefixed) Error() string { return e.prefix + ": " + e.err.Error() }
func (e *prefixed) Unwrap() error { return e.err }

// start writes the stream header (msgpack only; JSON lines carry se and run
// in every record).
func (s *session) start() error {
	s.started = true
	if s.mp != nil {
		return s.mp.WriteHeader(&s.hdr)
	}
	return nil
}

func (s *session) flush() error {
	if s.mp != nil {
		return s.mp.Flush()
	}
	return s.out.Flush()
}

func (s *session) emit(b *wire.Batch) error {
	if err := s.emitBatch(b); err != nil {
		s.writeErr = err
		return &writeError{err}
	}
	return nil
}

func (s *session) emitBatch(b *wire.Batch) error {
	if b.Type == wire.TypeGFXIP && s.hdr.Trace.GFXIP == 0 {
		s.hdr.Trace.GFXIP = int(b.GFXIP)
		if err := s.checkArch(); err != nil {
			return err
		}
	}
	if !s.started {
		if err := s.start(); err != nil {
			return err
		}
	}
	if b.Type == wire.TypeWave && s.warnNoISA {
		s.warnNoISA = false
		s.env.Warnf("%s: no --index: instructions get no PCs", s.name)
	}
	if b.Type == wire.TypeInfo && !s.f.Quiet {
		for _, v := range b.Info {
			s.env.Warnf("%s: %s", s.name, v.Text())
		}
	}
	switch {
	case s.filter != nil && s.mp == nil:
		n := b.Len()
		if !b.Type.Known() {
			n = 1
		}
		for i := 0; i < n; i++ {
			var err error
			if s.buf, err = s.filter.AppendResults(s.buf[:0], &s.hdr, b, i); err != nil {
				return &prefixed{prefix: s.name, err: err} // the error says --jq
			}
			if _, err := s.out.Write(s.buf); err != nil {
				return err
			}
		}
		return nil
	case s.filter != nil:
		if err := s.filter.Apply(&s.hdr, b); err != nil {
			return &prefixed{prefix: s.name, err: err} // the error says --jq
		}
		if b.Empty() {
			return nil
		}
		return s.mp.WriteBatch(b)
	case s.mp != nil:
		return s.mp.WriteBatch(b)
	}
	s.buf = s.json.AppendBatch(s.buf[:0], &s.hdr, b)
	_, err := s.out.Write(s.buf)
	return err
}

type countingReader struct {
	r io.Reader
	n atomic.Int64
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
	c.n.Add(int64(n))
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
	c.n.Add(int64(n))
	return n, err
}

// progress prints the bytes read every second until stop is called.
func progress(env *cli.Env, name string, cr *countingReader, total int64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		shown := false
		for {
			select {
			case <-done:
				if shown {
					fmt.Fprintf(env.Stderr, "\r%s: %s: %.1f MB done\n", env.Name, name, float64(cr.n.Load())/1e6)
				}
				return
			case <-t.C:
				shown = true
				n := cr.n.Load()
				if total > 0 {
					fmt.Fprintf(env.Stderr, "\r%s: %s: %.1f of %.1f MB (%d%%)", env.Name, name,
						float64(n)/1e6, float64(total)/1e6, n*100/total)
				} else {
					fmt.Fprintf(env.Stderr, "\r%s: %s: %.1f MB", env.Name, name, float64(n)/1e6)
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}
