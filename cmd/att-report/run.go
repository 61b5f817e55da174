package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/attkit/attkit/internal/arch"
	"github.com/attkit/attkit/internal/cli"
	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/jq"
	"github.com/attkit/attkit/internal/publish"
	"github.com/attkit/attkit/internal/report"
	"github.com/attkit/attkit/internal/waveselect"
	"github.com/attkit/attkit/internal/wire"
)

type flags struct {
	cli.VersionFlag
	Index     string   `help:"Code metadata: an index stream (co-index) or a code.json." placeholder:"FILE"`
	Output    string   `short:"o" help:"Write the page to FILE (atomically) instead of stdout." placeholder:"FILE"`
	Title     string   `help:"The page's title (default: the names of the inputs)." placeholder:"TEXT"`
	SourceDir []string `name:"source-dir" help:"Look for source files under DIR too (repeatable); found files are shown beside the ISA." placeholder:"DIR" sep:"none"`
	Run       *int     `help:"Report only the parts of run N." placeholder:"N"`
	MergeRuns bool     `help:"Report all runs together."`
	Kernel    []string `help:"Report only the waves of the kernels whose name matches GLOB (path.Match syntax; repeatable)." placeholder:"GLOB" sep:"none"`
	Dispatch  []string `help:"Report only the waves of dispatch N (the Nth DISPATCH record of its trace, from 0; repeatable)." placeholder:"N" sep:"none"`
	Wave      string   `help:"Report one wave: slowest, fastest (by end - begin, ties to the first) or an ID se<SE>.cu<CU>.simd<SIMD>.slot<SLOT>@<BEGIN>." placeholder:"WHICH"`
	Jq        string   `help:"Report only the wave records this jq program accepts." placeholder:"FILTER"`
	AnyArch   bool     `name:"any-arch" help:"Read records of another architecture than the index's code objects (refused by default, exit 3)."`
	Progress  bool     `help:"Show progress on stderr (default: when stderr is a terminal)."`
	Streams   []string `arg:"" optional:"" help:"Record streams (att-decode output); none or - reads stdin."`
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &cli.Env{Name: "att-report", Stdin: stdin, Stdout: stdout, Stderr: stderr}
	var f flags
	if code, done := env.Parse(&f, "Write a self-contained HTML report of decoded waves: kernels, ISA beside source with cycle bars, occupancy, wave durations, hottest instructions.\n\n"+
		"The page needs no network and no server: open it from a file. Its ISA listing and source lines are virtual lists (only the rows in view are in the DOM) and its charts canvases, so it stays usable at 100,000 instructions and more.", args); done {
		return code
	}
	return env.Fail(makeReport(env, &f))
}

func makeReport(env *cli.Env, f *flags) error {
	if f.Run != nil && f.MergeRuns {
		return exitcode.Errorf(exitcode.Usage, "--run and --merge-runs exclude each other")
	}
	if err := cli.Distinct(f.Streams); err != nil {
		return err
	}
	var filter *jq.Filter
	if f.Jq != "" {
		var err error
		if filter, err = jq.Compile(f.Jq); err != nil {
			return err
		}
	}
	var ix *wire.Index
	if f.Index != "" {
		var err error
		publish.Input(f.Index) // -o never replaces an input
		if ix, err = wire.ReadIndexFile(f.Index); err != nil {
			return fmt.Errorf("reading index: %w", err)
		}
	}
	sel, err := waveselect.New(ix, waveselect.Options{Kernels: f.Kernel, Dispatches: f.Dispatch, Wave: f.Wave})
	if err != nil {
		return err
	}
	rep := report.New(ix, sel)
	defer rep.Close()
	prog := cli.ProgressWanted(f.Progress, env.Stderr)
	if err := readStreams(env, f, rep, sel, filter, prog); err != nil {
		return err
	}
	if err := checkIndex(env, f.Index, ix, rep); err != nil {
		return err
	}
	title := f.Title
	if title == "" {
		title = "attkit report: " + strings.Join(inputNames(f.Streams), " ")
	}
	d, err := rep.Data(report.Meta{Title: title, Producer: "att-report " + cli.Version(),
		Inputs: inputNames(f.Streams), Index: f.Index, SourceDirs: f.SourceDir})
	if err != nil {
		return err
	}
	write := func(w io.Writer) error { return report.WritePage(w, d) }
	if f.Output != "" {
		return cli.WriteFileAtomic(f.Output, write)
	}
	return write(env.Stdout)
}

func inputNames(paths []string) []string {
	if len(paths) == 0 {
		return []string{"-"}
	}
	return paths
}

// readStreams reads every input into c and an, as att-stats folds them:
// one part per header (one shader engine's trace), runs kept apart unless
// --merge-runs, other runs skipped with --run.
func readStreams(env *cli.Env, f *flags, rep *report.Report, sel *waveselect.Selector, filter *jq.Filter, prog bool) error {
	paths := inputNames(f.Streams)
	inputs := waveselect.NewInputs(env.Open)
	defer inputs.Close()
	skip := func(h *wire.Header) bool { return f.Run != nil && h.Trace.Run != *f.Run }
	var jqf func(*wire.Header, *wire.Batch) error
	if filter != nil {
		jqf = filter.Apply
	}
	if err := sel.FirstPass(inputs, paths, skip, jqf); err != nil {
		return err
	}
	chk := arch.NewChecker(rep.Index(), f.Index, f.AnyArch)
	seen := map[int]bool{}
	chosen := -1 // the run reported, without --merge-runs
	var waves, insts int64
	fs := wire.Files{Open: inputs.Open}
	if sel.Active() {
		fs.MaxBatch = waveselect.MaxBatch
	}
	active := false
	err := fs.ReadAll(paths, func(rd *wire.Reader, name string) error {
		if err := chk.Scan(rd, name); err != nil {
			return err
		}
		if rd.Kind() == wire.KindHeader {
			h := rd.Header()
			sel.BeginPart(h)
			r := h.Trace.Run
			seen[r] = true
			active = false
			if f.Run != nil && r != *f.Run {
				return nil
			}
			if !f.MergeRuns && f.Run == nil {
				if chosen >= 0 && chosen != r {
					return exitcode.Errorf(exitcode.Usage,
						"the input holds runs %s: choose one with --run N, or report them together with --merge-runs",
						runList(seen))
				}
				chosen = r
			}
			active = true
			if err := rep.Header(h); err != nil {
				return err
			}
			return nil
		}
		if !active {
			return nil
		}
		b := rd.Batch()
		sel.Select(b)
		if b.Type == wire.TypeWave {
			if filter != nil {
				if err := filter.Apply(rd.Header(), b); err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
			}
			sel.Pick(b)
			for i := range b.Waves {
				waves++
				insts += int64(len(b.Waves[i].Instructions))
			}
		}
		if err := rep.Batch(b); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	if f.Run != nil && rep.Parts() == 0 {
		return exitcode.Errorf(exitcode.Failed, "no part of the input is run %d (runs present: %s)", *f.Run, runList(seen))
	}
	if err := sel.Check(); err != nil {
		return err
	}
	if prog {
		fmt.Fprintf(env.Stderr, "%s: %d waves, %d instructions read\n", env.Name, waves, insts)
	}
	return nil
}

func runList(seen map[int]bool) string {
	var s []string
	for _, r := range slices.Sorted(maps.Keys(seen)) {
		s = append(s, fmt.Sprint(r))
	}
	return strings.Join(s, ", ")
}

// checkIndex fails when an index was given and none of the executed PCs
// is in it (the index of other code objects), and warns when some are not.
func checkIndex(env *cli.Env, name string, ix *wire.Index, rep *report.Report) error {
	if ix == nil {
		return nil
	}
	total, missing := rep.Executed()
	switch {
	case missing == 0:
		return nil
	case missing == total:
		return exitcode.Errorf(exitcode.Failed, "the index %s matches none of the %d instructions the trace executed: is it the index of this trace's code objects?", name, total)
	}
	env.Warnf("%d of %d executed instructions are not in the index %s; they are listed without ISA text", missing, total, name)
	return nil
}
