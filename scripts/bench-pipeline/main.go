// Command bench-pipeline measures att-tool on a generated capture of
// several shader engines against the sum of its steps run one after another,
// and the peak memory of the largest process.
//
// Usage:
//
//	go run ./scripts/bench-pipeline [-ses 4] [-size 100MB] [-j 2] [-keep DIR]
//
// It builds the tools, indexes the sample's code object, generates one trace
// per shader engine with scripts/gentrace, then times (1) each step alone, in
// sequence: co-index, att-decode per trace, att-rcv, att-stats; (2) att-tool
// -j N doing the same work. Goals: the pipeline at least 1.8x faster than the
// sum of its steps on 2 cores; its peak RSS at most twice that of att-decode
// and att-rcv added (issue 21: measure with -ses 1 -size 60MB). Wall times
// are medians of -runs runs.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/attkit/attkit/scripts/internal/measure"
)

func main() {
	ses := flag.Int("ses", 4, "shader engines (traces) in the capture")
	size := flag.String("size", "100MB", "size of each trace")
	jobs := flag.Int("j", 2, "att-tool -j")
	runs := flag.Int("runs", 1, "repetitions (median reported)")
	keep := flag.String("keep", "", "work in this folder and keep it (default: a temporary one)")
	flag.Parse()
	if err := bench(*ses, *size, *jobs, *runs, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "bench-pipeline:", err)
		os.Exit(1)
	}
}

func bench(ses int, size string, jobs, runs int, keep string) error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	work := keep
	if work == "" {
		if work, err = os.MkdirTemp("", "bench-pipeline"); err != nil {
			return err
		}
		defer os.RemoveAll(work)
	}
	ws, err := measure.NewWorkspace(root, work)
	if err != nil {
		return err
	}
	bin, capDir, co, idx := ws.Bin, ws.Capture, ws.Object, ws.Index
	var traces []string
	var total int64
	for se := 0; se < ses; se++ {
		tr := filepath.Join(capDir, fmt.Sprintf("77_1_shader_engine_%d_1.att", se))
		if st, err := os.Stat(tr); err != nil {
			if _, err := measure.Run(root, nil, "go", "run", "./scripts/gentrace", "-index", idx, "-seed", fmt.Sprint(se+1),
				"-size", size, "-max-trips", "200", "-q", "-o", tr); err != nil {
				return err
			}
		} else {
			_ = st
		}
		st, _ := os.Stat(tr)
		total += st.Size()
		traces = append(traces, tr)
	}
	fmt.Printf("capture: %d traces, %.1f MB in all\n", ses, float64(total)/1e6)

	var seqTimes, toolTimes []time.Duration
	var seqPeak, toolPeak int64
	steps := map[string]time.Duration{}
	peaks := map[string]int64{} // largest peak RSS of each step
	for r := 0; r < runs; r++ {
		// (1) the steps one after another.
		out := filepath.Join(work, "seq")
		os.RemoveAll(out)
		os.MkdirAll(out, 0o755)
		var seq time.Duration
		add := func(name string, res measure.Result) {
			seq += res.Wall
			steps[name] += res.Wall
			seqPeak = max(seqPeak, res.MaxRSS)
			peaks[name] = max(peaks[name], res.MaxRSS)
		}
		res, err := measure.Run(root, nil, filepath.Join(bin, "co-index"), "-o", filepath.Join(out, "index"), co)
		if err != nil {
			return err
		}
		add("co-index", res)
		var recs []string
		for i, tr := range traces {
			rec := filepath.Join(out, fmt.Sprintf("%d.rec", i))
			res, err := measure.Run(root, nil, filepath.Join(bin, "att-decode"), "--backend", "native", "--index", idx, "-o", rec, tr)
			if err != nil {
				return err
			}
			add("att-decode (each)", res)
			recs = append(recs, rec)
		}
		res, err = measure.Run(root, nil, filepath.Join(bin, "att-rcv"), append([]string{"-d", filepath.Join(out, "ui"), "--formats", "json", "--index", idx}, recs...)...)
		if err != nil {
			return err
		}
		add("att-rcv", res)
		res, err = measure.Run(root, nil, filepath.Join(bin, "att-stats"), append([]string{"--index", idx, "-o", filepath.Join(out, "stats.csv")}, recs...)...)
		if err != nil {
			return err
		}
		add("att-stats", res)
		seqTimes = append(seqTimes, seq)

		// (2) att-tool.
		tout := filepath.Join(work, "tool")
		os.RemoveAll(tout)
		res, err = measure.Run(root, nil, filepath.Join(bin, "att-tool"),
			"-d", tout, "-j", fmt.Sprint(jobs), "--backend", "native", capDir)
		if err != nil {
			return err
		}
		toolTimes = append(toolTimes, res.Wall)
		toolPeak = max(toolPeak, res.MaxRSS)
	}
	seq, tool := measure.Median(seqTimes), measure.Median(toolTimes)
	fmt.Printf("steps one after another: %v (", seq.Round(time.Millisecond))
	var names []string
	for n := range steps {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		if i > 0 {
			fmt.Print(", ")
		}
		fmt.Printf("%s %v", n, (steps[n] / time.Duration(runs)).Round(time.Millisecond))
	}
	fmt.Printf(")\natt-tool -j %d: %v\nspeed-up: %.2fx (goal 1.8x on 2 cores)\n", jobs, tool.Round(time.Millisecond), float64(seq)/float64(tool))
	fmt.Printf("peak RSS of the largest process: steps %.1f MiB, att-tool (one process) %.1f MiB\n", float64(seqPeak)/1024, float64(toolPeak)/1024)
	// att-tool does in one process what att-decode (each trace) and
	// att-rcv do: goal, its peak RSS at most twice theirs added.
	pair := peaks["att-decode (each)"] + peaks["att-rcv"]
	fmt.Printf("peak RSS: att-decode %.1f MiB + att-rcv %.1f MiB = %.1f MiB; att-tool %.2fx that (goal at most 2x)\n",
		float64(peaks["att-decode (each)"])/1024, float64(peaks["att-rcv"])/1024, float64(pair)/1024, float64(toolPeak)/float64(pair))
	fmt.Printf("throughput: %.1f MB/s of trace through att-tool\n", float64(total)/1e6/tool.Seconds())
	return nil
}
