// Command bench-cores measures att-decode on one core and on two, per
// architecture family, and reports the speed-up (issue 23's goal: at least
// 1.6x from one core to two on a 100 MB trace).
//
// Usage:
//
//	go run ./scripts/bench-cores [-mb 100] [-runs 3] [-families gfx942,gfx1100] [-dir DIR]
//
// In: for each family, a trace of about -mb MB made by scripts/gentrace
// (internal/sqttgen, seed 1, from the family's test index in
// internal/sqttgen/testdata), kept in -dir (a temporary directory by
// default) and reused. att-decode is built from the checkout and run
// -runs times in each mode, the modes alternating so that a shared
// machine's drift touches both: one core (GOMAXPROCS=1, -j 1) and two
// (GOMAXPROCS=2, -j 2: the native decoder split over two cores,
// internal/sqtt's split.go). Both write the records to a file in -dir;
// the outputs must be identical (else the benchmark fails). Each run starts
// with its previous output removed and the file system's dirty pages
// written back (quiesce), so that no run pays for another's. Out, on stdout,
// one line per family: the trace's size, each mode's median wall time, CPU
// time (user+system) and peak RSS, and the speed-up (one core's median
// wall time over two cores'). The load average is printed before and
// after: on a loaded machine a process with two threads gets more than a
// one-thread one's share, so measure the speed-up on a quiet one. A second
// line per family gives a bound from CPU time that load does not distort
// (stages): the one-core decode's CPU time, the split decode's by stage
// (the front, the back, the runtime, and RDNA's token scan, which either
// side does; from a CPU profile) and the one-core time over the least the
// split decode can take on two cores (medians of -runs in-process
// decodes).
package main

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/attkit/attkit/scripts/internal/measure"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "bench-cores: %v\n", err)
		os.Exit(1)
	}
}

// families are the measured families: gentrace's -arch and the test index.
var families = map[string]string{
	"gfx942": "gfx9", "gfx90a": "gfx9", "gfx1030": "gfx10", "gfx1100": "gfx11", "gfx1201": "gfx12",
}

// A mode is one way att-decode is run.
type mode struct {
	name  string
	procs string // GOMAXPROCS
	jobs  string // -j
}

var modes = []mode{{"1 core", "1", "1"}, {"2 cores", "2", "2"}}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench-cores", flag.ContinueOnError)
	var (
		mb   = fs.Int64("mb", 100, "trace size per family in MB")
		runs = fs.Int("runs", 3, "runs of each mode per family (the median is reported)")
		fams = fs.String("families", "gfx942,gfx1100", "comma-separated `FAMILIES` (gfx942, gfx90a, gfx1030, gfx1100, gfx1201)")
		dir  = fs.String("dir", "", "keep the traces in `DIR` and reuse them (default: a temporary directory)")
	)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *runs < 1 {
		return fmt.Errorf("-runs %d: want at least 1", *runs)
	}
	root, err := measure.Root()
	if err != nil {
		return err
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "bench-cores")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	bin := filepath.Join(*dir, "bin")
	if _, err := measure.Run(root, nil, "go", "build", "-o", bin+"/", "./cmd/att-decode", "./scripts/gentrace"); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "load: %s; %d CPUs; trace %d MB per family\n", measure.LoadAvg(), runtime.NumCPU(), *mb)
	fmt.Fprintf(stdout, "%-8s %10s", "family", "bytes")
	for _, m := range modes {
		fmt.Fprintf(stdout, " %9s %9s %8s", m.name, "cpu-s", "rss-MB")
	}
	fmt.Fprintf(stdout, " %s\n", "speed-up")
	var measured [][2]string // trace, index
	for _, name := range strings.Split(*fams, ",") {
		arch, ok := families[name]
		if !ok {
			return fmt.Errorf("unknown family %q", name)
		}
		index := filepath.Join(root, "internal", "sqttgen", "testdata", name+".index")
		trace := filepath.Join(*dir, fmt.Sprintf("%s-%dMB.att", name, *mb))
		if _, err := os.Stat(trace); err != nil {
			if _, err := measure.Run("", nil, filepath.Join(bin, "gentrace"), "-arch", arch, "-index", index, "-seed", "1",
				"-size", fmt.Sprintf("%dMB", *mb), "-q", "-o", trace); err != nil {
				return err
			}
		}
		st, err := os.Stat(trace)
		if err != nil {
			return err
		}
		res := make([][]measure.Result, len(modes))
		for r := 0; r < *runs; r++ {
			for i, m := range modes {
				out := filepath.Join(*dir, fmt.Sprintf("out-%d.rec", i))
				if err := quiesce(out); err != nil {
					return err
				}
				res[i] = append(res[i], measure.Result{})
				res[i][r], err = measure.Run("", []string{"GOMAXPROCS=" + m.procs}, filepath.Join(bin, "att-decode"),
					"--backend", "native", "-j", m.jobs, "--index", index, "-q", "-o", out, trace)
				if err != nil {
					return err
				}
			}
			if err := sameFiles(filepath.Join(*dir, "out-0.rec"), filepath.Join(*dir, "out-1.rec")); err != nil {
				return fmt.Errorf("%s: %v", name, err)
			}
		}
		line := fmt.Sprintf("%-8s %10d", name, st.Size())
		var wall []time.Duration
		for i := range modes {
			w, cpu, rss := summary(res[i])
			wall = append(wall, w)
			line += fmt.Sprintf(" %9.3f %9.3f %8.1f", w.Seconds(), cpu.Seconds(), float64(rss)/1024)
		}
		line += fmt.Sprintf(" %7.2fx", wall[0].Seconds()/wall[1].Seconds())
		if wall[0].Seconds()/wall[1].Seconds() >= 1.6 {
			line += " (goal 1.6x: met)"
		} else {
			line += " (goal 1.6x: not met)"
		}
		fmt.Fprintln(stdout, line)
		measured = append(measured, [2]string{trace, index})
	}
	// In this process, after the runs above: their peak RSS would
	// otherwise count this process's (a child started by vfork inherits
	// its parent's peak at exec).
	for _, m := range measured {
		var ones, fronts, backs, scans, rts []time.Duration
		for r := 0; r < *runs; r++ {
			one, sh, err := stages(m[0], m[1], filepath.Join(*dir, "out-stages.rec"))
			if err != nil {
				return fmt.Errorf("%s: %v", m[0], err)
			}
			ones, fronts, backs = append(ones, one), append(fronts, sh.front), append(backs, sh.back)
			scans, rts = append(scans, sh.scan), append(rts, sh.runtime)
		}
		one := measure.Median(ones)
		sh := shares{measure.Median(fronts), measure.Median(backs), measure.Median(scans), measure.Median(rts)}
		fmt.Fprintf(stdout, "%s: CPU: one core %.3f s; two: the front %.3f s, the back (stitch, records, sink) %.3f s (of the two, the RDNA token scan %.3f s), the runtime (scheduler, GC) %.3f s; speed-up at most %.2fx\n",
			filepath.Base(m[0]), one.Seconds(), sh.front.Seconds(), sh.back.Seconds(), sh.scan.Seconds(), sh.runtime.Seconds(), one.Seconds()/sh.bound().Seconds())
	}
	fmt.Fprintf(stdout, "load after: %s\n", measure.LoadAvg())
	return nil
}

// quiesce removes a run's previous output and writes every dirty page
// back before the next run starts: else the run would free the old file's
// pages when it renames its own over it, and the kernel's write-back of
// the previous run (455 MB for gfx1100) would take CPU from whichever run
// came next. A one-core run leaves the other core to such work, a
// two-core run does not, so it would lower the speed-up; measured by hand
// (2 December 2026): system time 0.5-1.9 s a run without this, 0.1-0.5 s
// with it.
func quiesce(out string) error {
	if err := os.Remove(out); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	syscall.Sync()
	return nil
}

// summary returns the median wall time, the median CPU time (user+system)
// and the largest peak RSS (KiB) of the runs.
func summary(rs []measure.Result) (wall, cpu time.Duration, rss int64) {
	var ws, cs []time.Duration
	for _, r := range rs {
		ws, cs = append(ws, r.Wall), append(cs, r.User+r.Sys)
		rss = max(rss, r.MaxRSS)
	}
	return measure.Median(ws), measure.Median(cs), rss
}

// sameFiles fails unless the two files hold the same bytes. It compares
// their hashes, so that this process stays small (see run).
func sameFiles(a, b string) error {
	ha, err := hashFile(a)
	if err != nil {
		return err
	}
	hb, err := hashFile(b)
	if err != nil {
		return err
	}
	if !bytes.Equal(ha, hb) {
		return fmt.Errorf("two cores wrote other records than one (%s, %s)", a, b)
	}
	return nil
}

func hashFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}
