package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/attkit/attkit/internal/arch"
	"github.com/attkit/attkit/internal/cli"
	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/fold"
	"github.com/attkit/attkit/internal/publish"
	"github.com/attkit/attkit/internal/rcv"
	"github.com/attkit/attkit/internal/waveselect"
	"github.com/attkit/attkit/internal/wire"
)

type flags struct {
	cli.VersionFlag
	selectFlags
	Dir             string   `short:"d" required:"" placeholder:"DIR" help:"Output folder (the viewer opens it)."`
	Index           string   `placeholder:"FILE" help:"Index of the code objects: an index stream (co-index) or a code.json."`
	Formats         []string `default:"json,csv" sep:"none" placeholder:"F" help:"Comma-separated outputs: json (viewer files), csv (stats_<DIR name>.csv next to DIR); default json,csv."`
	NoDecodeMarkers bool     `help:"Keep packed marker values and arrival times (no marker correction)."`
	Counters        []string `sep:"none" placeholder:"NAME,..." help:"Perf counters the capture was made with, in rocprofv3's --att-perfcounters order (NAME, or NAME:MASK for a SIMD mask other than f); they name the viewer's Counters series: the first four bank 0's values, the next four bank 1's. At most 8."`
	Force           bool     `help:"Replace an existing DIR that is not empty (and its stats CSV) as a whole."`
	Progress        bool     `help:"Print a summary on stderr (default: when stderr is a terminal)."`
	AnyArch         bool     `name:"any-arch" help:"Read records of another architecture than the index's code objects (refused by default, exit 3)."`
	Lenient         bool     `help:"Skip a code.json's malformed rows and a PC's second row (their count on stderr) instead of failing."`
	Check           bool     `help:"Instead of writing DIR, check it as ROCprof Compute Viewer loads it: every file it would drop or fail on, and broken cross-references, one problem a line; exit 1 if any."`
	Streams         []string `arg:"" optional:"" name:"stream" help:"Record streams of one run; none or - reads stdin."`
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &cli.Env{Name: "att-rcv", Stdin: stdin, Stdout: stdout, Stderr: stderr}
	var f flags
	if code, done := env.Parse(&f, "Write the ROCprof Compute Viewer folder of one run.", args); done {
		return code
	}
	if f.Check {
		return env.Fail(check(env, f.Dir))
	}
	return env.Fail(write(env, &f, rcv.FolderOptions{Force: f.Force}))
}

// check reports the problems rcv.CheckFolder finds in dir.
func check(env *cli.Env, dir string) error {
	err := rcv.CheckFolder(dir)
	if err == nil {
		return nil
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintf(env.Stderr, "%s: %s: %s\n", env.Name, dir, line)
	}
	return exitcode.Silent{Code: exitcode.Failed}
}

// write does the work of run; opt lets tests simulate a full disk.
func write(env *cli.Env, f *flags, opt rcv.FolderOptions) (err error) {
	formats, err := rcv.ParseFormats(f.Formats)
	if err != nil {
		return &exitcode.Error{Code: exitcode.Usage, Err: err}
	}
	if err := cli.Distinct(f.Streams); err != nil {
		return err // a stream given twice would write its waves twice
	}
	counters, err := rcv.ParseCounters(f.Counters)
	if err != nil {
		return &exitcode.Error{Code: exitcode.Usage, Err: fmt.Errorf("--counters: %w", err)}
	}
	var ix *wire.Index
	if f.Index != "" {
		if ix, err = env.ReadIndex(f.Index, f.Lenient); err != nil {
			return err
		}
	}
	folder, err := rcv.NewFolder(f.Dir, opt)
	if err != nil {
		return err
	}
	// An interrupt (publish.Catch: SIGINT, SIGTERM, SIGHUP, SIGQUIT)
	// removes what was written at once; the run then fails, or is ended
	// after publish.Grace when a read waits on a pipe.
	ctx, intr := publish.Catch(env.Name, env.Stderr)
	defer intr.Stop()
	defer context.AfterFunc(ctx, folder.Abort)()
	defer func() {
		if err != nil {
			folder.Abort()
		}
		if code, ok := intr.Status(); ok {
			err = exitcode.Silent{Code: code}
		}
	}()
	fd := fold.New(ix)
	w := rcv.NewWriter(folder, ix, fd, rcv.Options{JSON: formats.JSON, DecodeMarkers: !f.NoDecodeMarkers,
		CounterNames: counters})
	run := 0
	chk := arch.NewChecker(ix, f.Index, f.AnyArch)
	sel, err := waveselect.New(ix, waveselect.Options{Kernels: f.Kernel, Dispatches: f.Dispatch})
	if err != nil {
		return err
	}
	fs := wire.Files{Open: env.Open, MaxBatch: rcv.MaxBatch}
	if err := fs.ReadAll(f.Streams, feed(w, &run, chk, sel)); err != nil {
		return err
	}
	if err := sel.Check(); err != nil {
		return err
	}
	if err := w.Finish(); err != nil {
		return err
	}
	if err := copySnapshots(env, folder, f.Index, ix); err != nil {
		return err
	}
	if formats.CSV {
		name := "stats_" + filepath.Base(folder.Dir()) + ".csv"
		if err := folder.WriteSibling(name, fd.WriteCSV); err != nil {
			return err
		}
	}
	if err := folder.Commit(); err != nil {
		return err
	}
	st := w.Stats()
	if formats.JSON && st.WaveFiles == 0 && st.Occupancy == 0 && (ix == nil || len(ix.Rows) == 0) {
		env.Warnf("%s: no waves, no occupancy and no code: ROCprof Compute Viewer will not open this folder", folder.Dir())
	}
	if cli.ProgressWanted(f.Progress, env.Stderr) {
		fmt.Fprintf(env.Stderr, "%s: %s: %d traces, %d waves, %d wave files, %d files, %d bytes\n",
			env.Name, folder.Dir(), st.Traces, st.Waves, st.WaveFiles, st.Files, st.Bytes)
	}
	return nil
}

// feed gives the streams' records (all their parts) to w. run holds the
// run of the streams read so far (0 until one names it): att-rcv writes
// one run.
func feed(w *rcv.Writer, run *int, chk *arch.Checker, sel *waveselect.Selector) wire.FileFunc {
	return func(rd *wire.Reader, name string) error {
		if err := chk.Scan(rd, name); err != nil {
			return err
		}
		switch rd.Kind() {
		case wire.KindHeader:
			h := rd.Header()
			if r := h.Trace.Run; r != 0 {
				if *run != 0 && r != *run {
					return fmt.Errorf("%s: part %d is of run %d, earlier streams of run %d: att-rcv writes one run per folder",
						name, rd.Part(), r, *run)
				}
				*run = r
			}
			sel.BeginPart(h)
			if err := w.BeginTrace(h); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		case wire.KindBatch:
			sel.Select(rd.Batch())
			if err := w.AddBatch(rd.Batch()); err != nil {
				return err
			}
		}
		return nil
	}
}
