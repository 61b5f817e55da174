// Command bench-fs measures att-tool against the file system's limit: the
// time to decode a generated trace and write its viewer folder, against
// `cp -r` of that very output tree (same files, same bytes) on the same
// file system (issue 23: att-tool no slower than the copy).
//
// Usage:
//
//	go run ./scripts/bench-fs [-size 60MB] [-j 2] [-runs 3] [-keep DIR]
//
// It builds the tools, generates one trace with scripts/gentrace (kept in
// -keep DIR for the next run), then runs att-tool and cp -r of its output
// tree alternately, -runs times each, and prints the medians, the ratio
// (goal at most 1.00), the files and bytes of the tree, and the system time
// per file of each.
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/attkit/attkit/scripts/internal/measure"
)

func main() {
	size := flag.String("size", "60MB", "size of the trace")
	jobs := flag.Int("j", 2, "att-tool -j")
	runs := flag.Int("runs", 3, "runs of each (medians reported)")
	keep := flag.String("keep", "", "work in this folder and keep it (default: a temporary one)")
	flag.Parse()
	if err := bench(*size, *jobs, *runs, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "bench-fs:", err)
		os.Exit(1)
	}
}

// timed runs a command and returns its wall and system time.
func timed(name string, args ...string) (wall, sys time.Duration, err error) {
	cmd := exec.Command(name, args...)
	cmd.Stderr = os.Stderr
	start := time.Now()
	err = cmd.Run()
	wall = time.Since(start)
	if cmd.ProcessState != nil {
		sys = cmd.ProcessState.SystemTime()
	}
	return wall, sys, err
}

func bench(size string, jobs, runs int, keep string) error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	work := keep
	if work == "" {
		if work, err = os.MkdirTemp("", "bench-fs"); err != nil {
			return err
		}
		defer os.RemoveAll(work)
	}
	ws, err := measure.NewWorkspace(root, work)
	if err != nil {
		return err
	}
	bin, capDir, idx := ws.Bin, ws.Capture, ws.Index
	tr := filepath.Join(capDir, "77_1_shader_engine_0_1.att")
	if _, err := os.Stat(tr); err != nil {
		if _, err := measure.Run(root, nil, "go", "run", "./scripts/gentrace", "-index", idx, "-seed", "1",
			"-size", size, "-max-trips", "200", "-q", "-o", tr); err != nil {
			return err
		}
	}
	st, err := os.Stat(tr)
	if err != nil {
		return err
	}
	fmt.Printf("trace: %.1f MB\n", float64(st.Size())/1e6)
	out := filepath.Join(work, "out")
	cp := filepath.Join(work, "copy")
	var toolWall, cpWall, toolSys, cpSys []time.Duration
	var files, bytes int64
	for r := 0; r < runs; r++ {
		os.RemoveAll(out)
		os.RemoveAll(cp)
		syscall.Sync()
		w, s, err := timed(filepath.Join(bin, "att-tool"), "-d", out, "-j", fmt.Sprint(jobs), "--backend", "native", "--formats", "json", capDir)
		if err != nil {
			return fmt.Errorf("att-tool: %v", err)
		}
		toolWall, toolSys = append(toolWall, w), append(toolSys, s)
		if r == 0 {
			filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() {
					if fi, err := d.Info(); err == nil {
						files++
						bytes += fi.Size()
					}
				}
				return nil
			})
		}
		syscall.Sync()
		w, s, err = timed("cp", "-r", out, cp)
		if err != nil {
			return fmt.Errorf("cp -r: %v", err)
		}
		cpWall, cpSys = append(cpWall, w), append(cpSys, s)
	}
	tw, cw := measure.Median(toolWall), measure.Median(cpWall)
	ts, cs := measure.Median(toolSys), measure.Median(cpSys)
	fmt.Printf("tree: %d files, %.1f MB\n", files, float64(bytes)/1e6)
	fmt.Printf("att-tool -j %d (decode included): %v wall, %v system (%.1f µs a file)\n", jobs,
		tw.Round(time.Millisecond), ts.Round(time.Millisecond), float64(ts.Microseconds())/float64(files))
	fmt.Printf("cp -r of its tree: %v wall, %v system (%.1f µs a file)\n",
		cw.Round(time.Millisecond), cs.Round(time.Millisecond), float64(cs.Microseconds())/float64(files))
	fmt.Printf("ratio att-tool / cp -r: %.2fx wall (goal at most 1.00x)\n", float64(tw)/float64(cw))
	return nil
}
