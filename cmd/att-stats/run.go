package main

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/attkit/attkit/internal/arch"
	"github.com/attkit/attkit/internal/cli"
	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/fold"
	"github.com/attkit/attkit/internal/hidden"
	"github.com/attkit/attkit/internal/jq"
	"github.com/attkit/attkit/internal/rollup"
	"github.com/attkit/attkit/internal/waveselect"
	"github.com/attkit/attkit/internal/wire"
)

type flags struct {
	cli.VersionFlag
	selectFlags
	Index     string   `help:"Code metadata: an index stream (co-index) or a code.json." placeholder:"FILE"`
	Format    string   `help:"Output format: csv (default), code.json, json (one object per PC a line), pprof, hidden.csv (hidden latency per PC), top (PCs ranked by exposed cycles, for a terminal), histogram (wave durations per kernel, text for people) or histogram.json (the same as JSON lines, for scripts)." enum:"csv,code.json,json,pprof,hidden.csv,top,histogram,histogram.json," default:"" placeholder:"FORMAT"`
	By        string   `help:"Sum the counters, hidden and exposed cycles included, per pc (default: the stats CSV), source line, function (the innermost of an inline chain) or kernel; as CSV, or JSON lines with --format json." enum:"pc,line,function,kernel" default:"pc" placeholder:"KEY"`
	Limit     int      `short:"n" help:"With --format top: show the N PCs with the most exposed cycles (0: all)." default:"30" placeholder:"N"`
	Output    string   `short:"o" help:"Write the output to FILE (atomically) instead of stdout." placeholder:"FILE"`
	Expect    []string `help:"Compare the counters with this control CSV (repeatable; rows of one PC add up); exit 1 on any mismatch." placeholder:"CONTROL.csv" sep:"none"`
	Run       *int     `help:"Fold only the parts of run N." placeholder:"N"`
	MergeRuns bool     `help:"Fold all runs together."`
	Jq        string   `help:"Fold only the wave records this jq program accepts." placeholder:"FILTER"`
	CSVOnly   bool     `name:"csv-only" help:"Count as att_tool.py --formats csv does: the unresolved PC (0, 0) gets no row. By default it gets one, with zero counters, once a wave holds an unresolved instruction, as with upstream's default json,csv (its wave files ask for the line)."`
	Diff      bool     `help:"Compare two captures, BEFORE AFTER (each a stats CSV, a code.json or a record stream file): print the per-PC and per-source-line changes in hits, latency, stall, idle and exposed cycles (exposed only when both are record streams)."`
	Progress  bool     `help:"Show progress and a summary on stderr (default: when stderr is a terminal)."`
	AnyArch   bool     `name:"any-arch" help:"Read records of another architecture than the index's code objects (refused by default, exit 3)."`
	Lenient   bool     `help:"Skip a code.json's malformed rows and a PC's second row (their count on stderr) instead of failing."`
	Streams   []string `arg:"" optional:"" help:"Record streams (att-decode output); none or - reads stdin."`
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &cli.Env{Name: "att-stats", Stdin: stdin, Stdout: stdout, Stderr: stderr}
	var f flags
	if code, done := env.Parse(&f, "Fold decoded waves into per-instruction statistics.", args); done {
		return code
	}
	return env.Fail(stats(env, &f))
}

func stats(env *cli.Env, f *flags) error {
	if f.Run != nil && f.MergeRuns {
		return exitcode.Errorf(exitcode.Usage, "--run and --merge-runs exclude each other")
	}
	if err := cli.Distinct(f.Streams); err != nil {
		return err // folding one stream twice would double its counts
	}
	var filter *jq.Filter
	if f.Jq != "" {
		var err error
		if filter, err = jq.Compile(f.Jq); err != nil {
			return err
		}
	}
	// Controls first: a malformed one fails before any decoding work.
	var control *fold.Control
	if len(f.Expect) > 0 {
		control = fold.NewControl()
		for _, path := range f.Expect {
			if err := readControl(env, control, path); err != nil {
				return err
			}
		}
	}
	var ix *wire.Index
	if f.Index != "" {
		var err error
		if ix, err = env.ReadIndex(f.Index, f.Lenient); err != nil {
			return fmt.Errorf("reading index: %w", err)
		}
	}
	if f.By != "pc" && (f.Diff || f.Format != "" && f.Format != "csv" && f.Format != "json") {
		return exitcode.Errorf(exitcode.Usage, "--by %s writes CSV or JSON (--format csv|json), not with --diff or --format %s", f.By, f.Format)
	}
	if f.Diff {
		return diff(env, f, ix, filter)
	}
	var prog *progress
	if cli.ProgressWanted(f.Progress, env.Stderr) {
		prog = &progress{env: env, last: time.Now()}
	}
	var an *hidden.Analyzer
	if needsHidden(f.Format) || f.By != "pc" {
		an = hidden.New(hidden.Options{Matrix: hidden.MatrixPCs(ix)})
		defer an.Close()
	}
	folds, err := foldStreams(env, f, ix, filter, prog, an)
	if err != nil {
		return err
	}
	fo, err := onlyFold(folds)
	if err != nil {
		return err
	}
	var hid map[wire.PC]hidden.Latency
	if an != nil {
		res, err := an.Result()
		if err != nil {
			return err
		}
		hid = res.ByPC
	}
	if prog != nil {
		prog.done(fo)
	}
	if err := checkIndex(env, f.Index, ix, fo); err != nil {
		return err
	}
	if control == nil || f.Format != "" || f.Output != "" {
		if err := writeOutput(env, f, fo, control, hid); err != nil {
			return err
		}
	}
	if control != nil {
		msgs := fo.Validate(control)
		for _, m := range msgs {
			fmt.Fprintln(env.Stderr, m)
		}
		if len(msgs) > 0 {
			return exitcode.Errorf(exitcode.Failed, "%d PC(s) differ from the control CSV", len(msgs))
		}
	}
	return nil
}

// diff is att-stats --diff BEFORE AFTER.
func diff(env *cli.Env, f *flags, ix *wire.Index, filter *jq.Filter) error {
	if len(f.Streams) != 2 {
		return exitcode.Errorf(exitcode.Usage, "--diff takes two inputs, BEFORE and AFTER (got %d)", len(f.Streams))
	}
	if f.Format != "" || len(f.Expect) > 0 {
		return exitcode.Errorf(exitcode.Usage, "--diff prints a text report: it takes neither --format nor --expect")
	}
	var sides [2]*diffSide
	for i, p := range f.Streams {
		var err error
		if sides[i], err = readDiffSide(env, f, ix, filter, p); err != nil {
			return err
		}
	}
	write := func(w io.Writer) error { return writeDiff(w, sides[0], sides[1]) }
	if f.Output != "" {
		return cli.WriteFileAtomic(f.Output, write)
	}
	return write(env.Stdout)
}

// needsHidden reports whether a format shows hidden latency.
func needsHidden(format string) bool {
	return format == "hidden.csv" || format == "top" || format == "pprof"
}

// foldStreams reads every input and folds its waves, one fold per run
// (all in run 0's slot with --merge-runs). With --run, other runs are
// skipped. With an analyzer, the waves folded and the other-SIMD records
// of the same parts go to it too, each part (one shader engine's trace)
// as its own shader-engine key.
func foldStreams(env *cli.Env, f *flags, ix *wire.Index, filter *jq.Filter, prog *progress, an *hidden.Analyzer) (map[int]*fold.Fold, error) {
	paths := f.Streams
	if len(paths) == 0 {
		paths = []string{"-"}
	}
	folds := map[int]*fold.Fold{}
	seen := map[int]bool{}
	part := -1 // the current part: its number in the input from 0, the analyzer's shader-engine key
	chk := arch.NewChecker(ix, f.Index, f.AnyArch)
	sel, open, done, err := selection(env, f, ix, filter, paths)
	if err != nil {
		return nil, err
	}
	defer done()
	// Folding does not depend on where batches end: a decoder's
	// trace-sized perf, realtime or shader-data batch is read in pieces,
	// so that it does not set the peak memory.
	fs := wire.Files{Open: open, MaxBatch: waveselect.MaxBatch}
	var cur *fold.Fold
	err = fs.ReadAll(paths, func(rd *wire.Reader, name string) error {
		if err := chk.Scan(rd, name); err != nil {
			return err
		}
		if rd.Kind() == wire.KindHeader {
			sel.BeginPart(rd.Header())
			r := rd.Header().Trace.Run
			seen[r] = true
			cur = nil
			if an != nil && part >= 0 {
				// The part before is complete: its second pass can
				// start while this one is read.
				if err := an.EndSE(part); err != nil {
					return err
				}
			}
			part++
			if f.Run != nil && r != *f.Run {
				return nil
			}
			key := r
			if f.MergeRuns {
				key = 0
			} else if f.Run == nil && len(folds) > 0 && folds[key] == nil {
				return exitcode.Errorf(exitcode.Usage,
					"the input holds runs %s: choose one with --run N, or fold them together with --merge-runs",
					runList(seen))
			}
			if cur = folds[key]; cur == nil {
				cur = fold.New(ix)
				folds[key] = cur
			}
			return nil
		}
		b := rd.Batch()
		if cur != nil && an != nil && b.Type == wire.TypeInstOtherSIMD {
			an.AddOther(part, b.OtherSIMD)
		}
		if cur == nil {
			return nil
		}
		sel.Select(b) // before --jq, which may drop the DISPATCH records
		if b.Type != wire.TypeWave {
			return nil
		}
		if filter != nil {
			if err := filter.Apply(rd.Header(), b); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		sel.Pick(b)
		for i := range b.Waves {
			if f.hist != nil {
				f.hist.Add(sel.Describe(&b.Waves[i]))
			}
			cur.AddWave(&b.Waves[i])
			if !f.CSVOnly {
				cur.AskLines(&b.Waves[i])
			}
			if an != nil {
				if err := an.AddWave(part, &b.Waves[i]); err != nil {
					return err
				}
			}
		}
		if prog != nil {
			prog.batch(b)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if f.Run != nil && len(folds) == 0 {
		return nil, exitcode.Errorf(exitcode.Failed, "no part of the input is run %d (runs present: %s)",
			*f.Run, runList(seen))
	}
	if err := endSelection(env, f, sel); err != nil {
		return nil, err
	}
	return folds, nil
}

// onlyFold returns the one fold foldStreams returned: it refuses inputs of
// several runs unless --run picks one or --merge-runs folds them together.
func onlyFold(folds map[int]*fold.Fold) (*fold.Fold, error) {
	for _, fo := range folds {
		return fo, nil
	}
	return nil, fmt.Errorf("no input") // unreachable: an empty input fails in the reader
}

func runList(seen map[int]bool) string {
	var s []string
	for _, r := range slices.Sorted(maps.Keys(seen)) {
		s = append(s, fmt.Sprint(r))
	}
	return strings.Join(s, ", ")
}

// checkIndex tells whether the index describes the traced code: a warning
// when some executed PCs are missing from it, an error when all are. The
// message names, per code object, the address ranges on both sides, which
// tells a stale index (same code object, other addresses) from the index
// of other code objects.
func checkIndex(env *cli.Env, name string, ix *wire.Index, fo *fold.Fold) error {
	if ix == nil {
		return nil
	}
	var total, missing, missingPCs int64
	missCO := map[uint64]*span{}
	indexCO := map[uint64]*span{}
	for _, e := range fo.Entries() {
		if e.InIndex {
			addSpan(indexCO, e.PC)
		}
		total += e.Hit
		if !e.InIndex && e.Hit > 0 {
			missing += e.Hit
			missingPCs++
			addSpan(missCO, e.PC)
		}
	}
	if missing == 0 {
		return nil
	}
	detail := fmt.Sprintf("missing PCs in code object %s; index %s has code object %s",
		spanList(missCO), name, spanList(indexCO))
	if missing == total && len(indexCO) > 0 {
		return exitcode.Errorf(exitcode.Failed,
			"the index matches none of the %d PCs the trace executed (%s): is it the index of this trace's code objects?",
			missingPCs, detail)
	}
	env.Warnf("%d of %d executed instructions (%d PCs) are not in the index; they get rows without ISA text (%s)",
		missing, total, missingPCs, detail)
	return nil
}

type span struct{ lo, hi uint64 }

func addSpan(m map[uint64]*span, pc wire.PC) {
	s := m[pc.CodeObjectID]
	if s == nil {
		m[pc.CodeObjectID] = &span{pc.Address, pc.Address}
		return
	}
	s.lo, s.hi = min(s.lo, pc.Address), max(s.hi, pc.Address)
}

// spanList formats code objects and their address ranges:
// "1 [0x1000, 0x10fc], 2 [0x0, 0x0]".
func spanList(m map[uint64]*span) string {
	if len(m) == 0 {
		return "none"
	}
	var out []string
	for _, c := range slices.Sorted(maps.Keys(m)) {
		out = append(out, fmt.Sprintf("%d [%#x, %#x]", c, m[c].lo, m[c].hi))
	}
	return strings.Join(out, ", ")
}

func readControl(env *cli.Env, c *fold.Control, path string) error {
	in, name, err := env.Open(path)
	if err != nil {
		return fmt.Errorf("reading control CSV: %w", err)
	}
	defer in.Close()
	return c.Read(bufio.NewReader(in), name)
}

func writeOutput(env *cli.Env, f *flags, fo *fold.Fold, control *fold.Control, hid map[wire.PC]hidden.Latency) error {
	write := func(w io.Writer) error {
		if f.By != "pc" {
			groups, err := rollup.Sum(fo, hid, rollup.By(f.By))
			if err != nil {
				return err
			}
			if f.Format == "json" {
				return rollup.WriteJSON(w, groups, rollup.By(f.By))
			}
			return rollup.WriteCSV(w, groups, rollup.By(f.By))
		}
		switch f.Format {
		case "histogram":
			return f.hist.WriteText(w)
		case "histogram.json":
			return f.hist.WriteJSON(w)
		case "hidden.csv":
			return writeHiddenCSV(w, fo, hid)
		case "top":
			return writeTop(w, fo, hid, f.Limit)
		case "code.json":
			_, err := w.Write(fo.CodeJSON())
			return err
		case "json":
			return writeJSON(w, fo, control)
		case "pprof":
			return writePprof(w, fo, hid)
		}
		return fo.WriteCSV(w)
	}
	if f.Output != "" {
		return cli.WriteFileAtomic(f.Output, write)
	}
	return write(env.Stdout)
}

// progress counts what was folded and reports it on stderr: a line each
// second while reading, then a summary.
type progress struct {
	env          *cli.Env
	waves, insts int64
	batches      int
	last         time.Time
	shown        bool
}

func (p *progress) batch(b *wire.Batch) {
	p.waves += int64(len(b.Waves))
	for i := range b.Waves {
		p.insts += int64(len(b.Waves[i].Instructions))
	}
	if p.batches++; p.batches%64 == 0 && time.Since(p.last) >= time.Second {
		p.last = time.Now()
		p.shown = true
		fmt.Fprintf(p.env.Stderr, "\r%s: %d waves, %d instructions", p.env.Name, p.waves, p.insts)
	}
}

func (p *progress) done(fo *fold.Fold) {
	if p.shown {
		fmt.Fprint(p.env.Stderr, "\r")
	}
	var hit, missing int
	for _, e := range fo.Entries() {
		if e.Hit > 0 {
			hit++
			if !e.InIndex {
				missing++
			}
		}
	}
	fmt.Fprintf(p.env.Stderr, "%s: %d waves, %d instructions folded; %d PCs executed (%d not in the index)\n",
		p.env.Name, p.waves, p.insts, hit, missing)
}
