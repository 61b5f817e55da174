package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/attkit/attkit/internal/arch"
	"github.com/attkit/attkit/internal/cli"
	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/jq"
	"github.com/attkit/attkit/internal/waveselect"
	"github.com/attkit/attkit/internal/wire"
)

type flags struct {
	cli.VersionFlag
	selectFlags
	Output         string   `short:"o" placeholder:"FILE" help:"Write the trace to FILE (whole or not at all) instead of standard output."`
	Index          string   `placeholder:"FILE" help:"Index of the code objects (an index stream from co-index, or a code.json): instruction text and source lines in the slices' args."`
	Start          *int64   `placeholder:"T" help:"Keep what lies at or after shader-clock cycle T (slices are cut)."`
	End            *int64   `placeholder:"T" help:"Keep what lies at or before shader-clock cycle T (slices are cut)."`
	Jq             string   `name:"jq" placeholder:"FILTER" help:"Keep only the records this jq program accepts, run on each record's JSON projection (as att-decode --jq)."`
	NoInstructions bool     `help:"No instruction slices: waves, occupancy, dispatches, events and markers only."`
	MaxSize        string   `default:"256MB" placeholder:"SIZE" help:"Bound the output: past SIZE bytes (B, KB, MB, GB) no further event is written and a warning names the cycle where it stopped."`
	AnyArch        bool     `name:"any-arch" help:"Read records of another architecture than the index's code objects (refused by default, exit 3)."`
	Lenient        bool     `help:"Skip a code.json's malformed rows and a PC's second row (their count on stderr) instead of failing."`
	Streams        []string `arg:"" optional:"" name:"stream" help:"Record streams; none or - reads stdin."`
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &cli.Env{Name: "att-timeline", Stdin: stdin, Stdout: stdout, Stderr: stderr}
	var f flags
	desc := "Turn record streams into a Trace Event Format timeline (Perfetto, Chrome DevTools)."
	if code, done := env.Parse(&f, desc, args); done {
		return code
	}
	return env.Fail(convert(env, &f))
}

func convert(env *cli.Env, f *flags) error {
	start, end := int64(math.MinInt64), int64(math.MaxInt64)
	if f.Start != nil {
		start = *f.Start
	}
	if f.End != nil {
		end = *f.End
	}
	if start > end {
		return exitcode.Errorf(exitcode.Usage, "--start %d is after --end %d", start, end)
	}
	max, err := parseSize(f.MaxSize)
	if err != nil {
		return exitcode.Errorf(exitcode.Usage, "--max-size: %v", err)
	}
	if err := cli.Distinct(f.Streams); err != nil {
		return err
	}
	var filter *jq.Filter
	if f.Jq != "" {
		if filter, err = jq.Compile(f.Jq); err != nil {
			return err
		}
	}
	var ix *wire.Index
	if f.Index != "" {
		if ix, err = env.ReadIndex(f.Index, f.Lenient); err != nil {
			return err
		}
	}
	streams := f.Streams
	if len(streams) == 0 {
		streams = []string{"-"}
	}
	opt := options{start: start, end: end, instructions: !f.NoInstructions, maxBytes: max}
	sel, open, done, err := f.selection(env, ix, filter, streams)
	if err != nil {
		return err
	}
	defer done()
	body := func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 256<<10)
		tl := newTimeline(bw, ix, opt)
		tl.sel = sel
		chk := arch.NewChecker(ix, f.Index, f.AnyArch)
		// Records are written one by one: a decoder's trace-sized perf,
		// realtime or shader-data batch is read in pieces, in bounded memory.
		fs := wire.Files{Open: open, MaxBatch: waveselect.MaxBatch}
		if err := fs.ReadAll(streams, feed(filter, tl, chk)); err != nil {
			return err
		}
		if err := endSelection(env, sel); err != nil {
			return err
		}
		if err := tl.finish(); err != nil {
			return err
		}
		if tl.cutAt != noCut {
			env.Warnf("output reached --max-size %s at cycle %d: nothing after it was written (narrow it with --start/--end or --jq, or use --no-instructions)", f.MaxSize, tl.cutAt)
		}
		return bw.Flush()
	}
	if f.Output == "" || f.Output == "-" {
		return body(env.Stdout)
	}
	return cli.WriteFileAtomic(f.Output, body)
}

// feed gives the streams' records to tl.
func feed(filter *jq.Filter, tl *timeline, chk *arch.Checker) wire.FileFunc {
	var hdr wire.Header
	return func(rd *wire.Reader, name string) error {
		if err := chk.Scan(rd, name); err != nil {
			return err
		}
		switch rd.Kind() {
		case wire.KindHeader:
			hdr = *rd.Header()
			tl.sel.BeginPart(&hdr)
			if err := tl.beginTrace(&hdr); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		case wire.KindBatch:
			b := rd.Batch()
			tl.sel.Select(b) // before --jq, which may drop the DISPATCH records
			if filter != nil {
				if err := filter.Apply(&hdr, b); err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
			}
			tl.sel.Pick(b)
			if err := tl.addBatch(b); err != nil {
				return err
			}
		}
		return nil
	}
}

// parseSize reads 1024-based sizes: a number with an optional B, KB, MB or
// GB (K, M, G) suffix.
func parseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.m
			break
		}
	}
	var n int64
	if _, err := fmt.Sscan(t, &n); err != nil || n <= 0 || n > math.MaxInt64/mult || fmt.Sprint(n) != t {
		return 0, fmt.Errorf("%q is not a size such as 64MB", s)
	}
	return n * mult, nil
}
