// Command bench-rcv measures att-rcv's peak memory against the size of the
// trace: it generates gfx9 traces of the sample's code object at each size
// (scripts/gentrace -all: waves, occupancy, perf counters, shader data,
// events), decodes them with the native decoder, and runs att-rcv on each
// record stream, reporting wall time and peak RSS. Goal: the peak RSS of
// the largest within 10% of the smallest's (att-rcv keeps what grows with
// the trace in a spool file, and reads the decoder's batches, some as large
// as the trace, in pieces of rcv.MaxBatch records); it exits 1 when that
// does not hold.
//
// Usage:
//
//	go run ./scripts/bench-rcv [-sizes 10MB,160MB] [-runs 1] [-keep DIR]
//
// With -runs N, att-rcv runs N times on each trace and the median peak
// RSS is compared (the Go runtime's retained pages make a single figure
// vary by a few percent, more on a loaded machine).
//
// The viewer folders are removed after each run (a 160 MB trace makes
// 600,000 wave files, about 4 GB); -keep keeps the traces and streams.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/attkit/attkit/scripts/internal/measure"
)

func main() {
	sizes := flag.String("sizes", "10MB,160MB", "comma-separated trace sizes")
	keep := flag.String("keep", "", "work in this folder and keep the traces (default: a temporary one)")
	runs := flag.Int("runs", 1, "runs of att-rcv per trace; the median peak RSS is compared")
	flag.Parse()
	if *runs < 1 {
		fmt.Fprintln(os.Stderr, "bench-rcv: -runs must be at least 1")
		os.Exit(2)
	}
	if err := bench(strings.Split(*sizes, ","), *keep, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "bench-rcv:", err)
		os.Exit(1)
	}
}

func bench(sizes []string, keep string, runs int) error {
	work := keep
	if work == "" {
		var err error
		if work, err = os.MkdirTemp("", "bench-rcv"); err != nil {
			return err
		}
		defer os.RemoveAll(work)
	}
	bin := filepath.Join(work, "bin")
	build := exec.Command("go", "build", "-o", bin+"/", "./cmd/co-index", "./cmd/att-decode", "./cmd/att-rcv", "./scripts/gentrace")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build: %v", err)
	}
	tool := func(n string) string { return filepath.Join(bin, n) }
	index := filepath.Join(work, "sample.idx")
	if _, err := measure.Run("", nil, tool("co-index"), "-o", index, "testdata/sample/31337_1_code_object_id_1.hsaco"); err != nil {
		return err
	}
	fmt.Printf("%-8s %12s %12s %10s %12s\n", "trace", "trace bytes", "rec bytes", "wall", "peak RSS")
	var first, last int64
	for _, size := range sizes {
		att := filepath.Join(work, "t"+size+".att")
		rec := filepath.Join(work, "t"+size+".rec")
		if _, err := os.Stat(rec); err != nil {
			if _, err := measure.Run("", nil, tool("gentrace"), "-index", index, "-seed", "7", "-all", "-size", size, "-q", "-o", att); err != nil {
				return err
			}
			if _, err := measure.Run("", nil, tool("att-decode"), "--backend", "native", "--quiet", "--index", index, "-o", rec, att); err != nil {
				return err
			}
		}
		ui := filepath.Join(work, "ui_"+size)
		var rss []int64
		var r measure.Result
		for range runs {
			os.RemoveAll(ui)
			os.Remove(filepath.Join(work, "stats_ui_"+size+".csv"))
			var err error
			if r, err = measure.Run("", nil, tool("att-rcv"), "-d", ui, "--index", index, rec); err != nil {
				return err
			}
			os.RemoveAll(ui)
			os.Remove(filepath.Join(work, "stats_ui_"+size+".csv"))
			rss = append(rss, r.MaxRSS)
		}
		r.MaxRSS = measure.Median(rss)
		st1, _ := os.Stat(att)
		st2, _ := os.Stat(rec)
		var ab, rb int64
		if st1 != nil {
			ab = st1.Size()
		}
		if st2 != nil {
			rb = st2.Size()
		}
		fmt.Printf("%-8s %12d %12d %10s %9d KiB", size, ab, rb, r.Wall.Round(10*time.Millisecond), r.MaxRSS)
		if runs > 1 {
			fmt.Printf("  (median of %v)", rss)
		}
		fmt.Println()
		if first == 0 {
			first = r.MaxRSS
		}
		last = r.MaxRSS
	}
	ratio := float64(last) / float64(first)
	fmt.Printf("peak RSS, largest / smallest: %.2f (goal: at most 1.10)\n", ratio)
	if ratio > 1.10 {
		return fmt.Errorf("att-rcv's peak RSS grows with the trace: %.2fx", ratio)
	}
	return nil
}
