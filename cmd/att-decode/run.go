package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/attkit/attkit/internal/arch"
	"github.com/attkit/attkit/internal/cli"
	"github.com/attkit/attkit/internal/driver"
	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/jq"
	"github.com/attkit/attkit/internal/sqtt"
	"github.com/attkit/attkit/internal/tracename"
	"github.com/attkit/attkit/internal/wire"
)

type flags struct {
	cli.VersionFlag
	Index      string      `placeholder:"FILE" help:"Instruction index: an index stream from co-index, or a code.json."`
	Backend    string      `enum:"auto,native,rocm" default:"auto" help:"Decoder: native (Go; gfx9, gfx10-gfx12), rocm (AMD's library) or auto (rocm when the library is found, else native)."`
	Lib        string      `placeholder:"PATH" help:"The rocprof-trace-decoder library for --backend rocm|auto (default: $ROCPROF_TRACE_DECODER_LIB, then the standard lookup)."`
	CodeObject []string    `name:"code-object" sep:"none" placeholder:"ID=PATH@ADDR" help:"Give the library's built-in disassembler a code object loaded at ADDR (repeatable; rocm only)."`
	SE         int         `name:"se" default:"-1" placeholder:"N" help:"Shader engine recorded in the header (default: from the file name, else 0)."`
	Run        int         `name:"run" default:"-1" placeholder:"N" help:"Run recorded in the header (default: from the file name, else 1)."`
	Format     string      `enum:"msgpack,json" default:"msgpack" help:"Output: msgpack (record stream) or json (one object per record per line)."`
	Jq         string      `name:"jq" placeholder:"FILTER" help:"jq program run on each record's JSON projection: json output prints its results, msgpack output keeps the records it accepts."`
	Compat     sqtt.Compat `enum:"newest,0.1.6" default:"newest" help:"Native decoder, every family (gfx9, gfx10-12): records of the newest library (newest) or exactly those of AMD's 0.1.6 build that ROCm 7.x ships (0.1.6, implies --whole-batches)."`
	WholeBatch bool        `name:"whole-batches" help:"Native decoder: pool occupancy, perf and realtime records to the end of the trace as the library does (memory then grows with the trace; default: batches of at most 65536)."`
	Progress   bool        `help:"Show progress on stderr (default: when stderr is a terminal)."`
	Jobs       int         `short:"j" default:"0" placeholder:"N" help:"Cores to decode on (0: all, GOMAXPROCS): with two or more the native decoder reads the tokens on one and stitches, builds and writes the records on another. The output is the same; 1 decodes on one core."`
	Quiet      bool        `short:"q" help:"Do not print decoder warnings on stderr."`
	Output     string      `short:"o" placeholder:"FILE" help:"Write to FILE (atomically) instead of standard output."`
	AnyArch    bool        `name:"any-arch" help:"Decode a trace whose architecture is not that of the index's code objects (refused by default, exit 3)."`
	Lenient    bool        `help:"Skip a code.json's malformed rows and a PC's second row (their count on stderr) instead of failing."`
	Arch       string      `name:"arch" placeholder:"GFX" help:"The trace's GPU target as its capture names it (gfx950, gfx942...): recorded in the stream header and checked against the index; a gfx9 trace's bytes do not tell MI300 from MI350 (default: the target of the rocprofv3 code objects beside the trace, checked only)."`
	Trace      string      `arg:"" name:"TRACE" help:"The .att trace, or - for standard input."`
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &cli.Env{Name: "att-decode", Stdin: stdin, Stdout: stdout, Stderr: stderr}
	var f flags
	if code, done := env.Parse(&f, "Decode a thread trace (.att) into attkit records.", args); done {
		return code
	}
	return env.Fail(decode(context.Background(), env, &f))
}

func decode(ctx context.Context, env *cli.Env, f *flags) error {
	var filter *jq.Filter
	if f.Jq != "" {
		var err error
		if filter, err = jq.Compile(f.Jq); err != nil {
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

	if f.Jobs < 0 {
		return exitcode.Errorf(exitcode.Usage, "-j takes a positive whole number, not %d", f.Jobs)
	}
	if f.Arch != "" && arch.Major(f.Arch) == 0 {
		return exitcode.Errorf(exitcode.Usage, "--arch %q: want a GPU target such as gfx942 or gfx1100", f.Arch)
	}
	// A gfx9 trace's bytes do not tell its generation; a rocprofv3
	// capture's code objects beside it do (checked, not recorded).
	capTarget := ""
	if f.Arch == "" && f.Trace != "-" {
		capTarget = arch.CaptureTarget(f.Trace)
	}
	code := driver.NewCode(nil)
	if f.Index != "" {
		ix, err := env.ReadIndex(f.Index, f.Lenient)
		if err != nil {
			return err
		}
		code = driver.NewIndexCode(ix, f.Index)
	}

	in, name, err := env.Open(f.Trace)
	if err != nil {
		return err
	}
	defer in.Close()

	opt := driver.Options{
		Backend: f.Backend, Lib: f.Lib, Compat: f.Compat, WholeBatches: f.WholeBatch,
		CodeObjects: f.CodeObject, Producer: "att-decode " + cli.Version(), AnyArch: f.AnyArch,
		Cores: f.Jobs,
	}
	if !f.Quiet {
		opt.Warn = func(trace, text string) {
			if trace == "" {
				env.Warnf("%s", text)
			} else {
				env.Warnf("%s: %s", trace, text)
			}
		}
	}
	drv, err := driver.New(opt)
	if err != nil {
		return err
	}
	defer drv.Close()

	var total int64 = -1
	if st, ok := in.(interface{ Stat() (os.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil && fi.Mode().IsRegular() {
			total = fi.Size()
		}
	}
	var read atomic.Int64
	if cli.ProgressWanted(f.Progress, env.Stderr) {
		stop := progress(env, name, &read, total)
		defer stop()
	}

	s := &session{
		env: env, f: f, filter: filter, name: name,
		warnNoISA: code.Prov == nil && len(f.CodeObject) == 0 && !f.Quiet,
	}
	write := func(w io.Writer) error {
		if f.Format == "msgpack" {
			s.mp = wire.NewWriter(w)
		} else {
			s.out = bufio.NewWriterSize(w, 256<<10)
		}
		_, err := drv.Decode(ctx, driver.Trace{
			Name:   name,
			Header: wire.Trace{Path: f.Trace, SE: se, Run: runN, Target: f.Arch},
			Input:  in,
			Code:   code,
			Read:   &read,
			Target: capTarget,
		}, s)
		if err != nil {
			// Keep the records decoded before the error: the stream then
			// ends after a whole batch.
			if s.started && !s.failed {
				s.flush()
			}
			return err
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
		return exitcode.Silent{Code: exitcode.Failed}
	}
	return err
}

// session writes the records of one decode: it is the driver's sink.
type session struct {
	env     *cli.Env
	f       *flags
	filter  *jq.Filter
	name    string
	hdr     wire.Header
	out     *bufio.Writer
	mp      *wire.Writer
	buf     []byte
	json    wire.JSONWriter
	started bool
	failed  bool // an output error: nothing more is written
	// warnNoISA asks for a warning at the first wave: without an index
	// no instruction gets a PC.
	warnNoISA bool
}

// Header writes the stream header (msgpack only; JSON lines carry se and
// run in every record).
func (s *session) Header(h *wire.Header) error {
	s.hdr = *h
	s.started = true
	if s.mp != nil {
		if err := s.mp.WriteHeader(&s.hdr); err != nil {
			s.failed = true
			return err
		}
	}
	return nil
}

func (s *session) flush() error {
	if s.mp != nil {
		return s.mp.Flush()
	}
	return s.out.Flush()
}

// Batch writes one batch of records.
func (s *session) Batch(b *wire.Batch) error {
	if err := s.batch(b); err != nil {
		s.failed = true
		return err
	}
	return nil
}

func (s *session) batch(b *wire.Batch) error {
	if b.Type == wire.TypeWave && s.warnNoISA {
		s.warnNoISA = false
		s.env.Warnf("%s: no --index: instructions get no PCs", s.name)
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
				return &driver.Prefixed{Prefix: s.name, Err: err} // the error says --jq
			}
			if _, err := s.out.Write(s.buf); err != nil {
				return err
			}
		}
		return nil
	case s.filter != nil:
		if err := s.filter.Apply(&s.hdr, b); err != nil {
			return &driver.Prefixed{Prefix: s.name, Err: err} // the error says --jq
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

// progress prints the bytes read every second until stop is called.
func progress(env *cli.Env, name string, read *atomic.Int64, total int64) (stop func()) {
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
					fmt.Fprintf(env.Stderr, "\r%s: %s: %.1f MB done\n", env.Name, name, float64(read.Load())/1e6)
				}
				return
			case <-t.C:
				shown = true
				n := read.Load()
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
