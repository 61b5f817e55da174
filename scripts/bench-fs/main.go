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
// (goal at most 1.00), the files and bytes of the tree, and the wall,
// system and user time per file of each.
//
// Each side starts from the same state: the trees of the round before are
// deleted before att-tool runs (its output stays for the copy), then
// before each timed run the file system is synced and, where the script
// may (root: echo 3 > /proc/sys/vm/drop_caches), the page, dentry and
// inode caches are dropped and the run's input read back into them (the
// trace and the tools for att-tool, every file of the tree for cp -r), so
// that neither pays for the other's write-back or inherits its cached
// directory entries. Where the caches cannot be dropped the script says so
// and only syncs (the figures are then noisier: the system time per file
// varied threefold between runs).
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
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
	fmt.Printf("load average before: %s\n", measure.LoadAvg())
	if dropCaches() {
		fmt.Println("before each timed run: sync, caches dropped (/proc/sys/vm/drop_caches), its input read back")
	} else {
		fmt.Println("before each timed run: sync only (cannot write /proc/sys/vm/drop_caches: caches not dropped)")
	}
	var tool, cpr []measure.Result
	var files, bytes int64
	for r := 0; r < runs; r++ {
		os.RemoveAll(cp)
		os.RemoveAll(out)
		settle(capDir, bin)
		t, err := measure.Run("", nil, filepath.Join(bin, "att-tool"), "-d", out, "-j", fmt.Sprint(jobs), "--backend", "native", "--formats", "json", capDir)
		if err != nil {
			return err
		}
		tool = append(tool, t)
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
		settle(out)
		c, err := measure.Run("", nil, "cp", "-r", out, cp)
		if err != nil {
			return err
		}
		cpr = append(cpr, c)
		fmt.Printf("run %d: att-tool %v, cp -r %v\n", r+1, t.Wall.Round(time.Millisecond), c.Wall.Round(time.Millisecond))
	}
	fmt.Printf("tree: %d files, %.1f MB\n", files, float64(bytes)/1e6)
	tw, ts, tu := medians(tool)
	cw, cs, cu := medians(cpr)
	perFile := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(files) }
	for _, l := range []struct {
		name         string
		wall, s, usr time.Duration
	}{{fmt.Sprintf("att-tool -j %d (decode included)", jobs), tw, ts, tu}, {"cp -r of its tree", cw, cs, cu}} {
		fmt.Printf("%s: %v wall (%.1f µs a file), %v system (%.1f µs a file), %v user (%.1f µs a file)\n", l.name,
			l.wall.Round(time.Millisecond), perFile(l.wall), l.s.Round(time.Millisecond), perFile(l.s),
			l.usr.Round(time.Millisecond), perFile(l.usr))
	}
	fmt.Printf("ratio att-tool / cp -r: %.2fx wall (goal at most 1.00x), %.2fx system, %.2fx system+user\n",
		float64(tw)/float64(cw), float64(ts)/float64(cs), float64(ts+tu)/float64(cs+cu))
	fmt.Printf("load average after: %s\n", measure.LoadAvg())
	return nil
}

// settle syncs, drops the caches where it may, and reads every file under
// the paths back into the page cache.
func settle(paths ...string) {
	syscall.Sync()
	if dropCaches() {
		buf := make([]byte, 1<<20)
		for _, p := range paths {
			filepath.WalkDir(p, func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() {
					if f, err := os.Open(p); err == nil {
						for {
							if _, err := f.Read(buf); err != nil {
								break
							}
						}
						f.Close()
					}
				}
				return nil
			})
		}
	}
}

// dropCaches drops the clean page, dentry and inode caches (after a sync,
// what is dirty is written): false where the script may not.
func dropCaches() bool {
	return os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0) == nil
}

// medians returns the median wall, system and user times of runs.
func medians(runs []measure.Result) (wall, sys, user time.Duration) {
	var w, s, u []time.Duration
	for _, r := range runs {
		w, s, u = append(w, r.Wall), append(s, r.Sys), append(u, r.User)
	}
	return measure.Median(w), measure.Median(s), measure.Median(u)
}
