// Command threads runs a command and reports the CPU time (user+sys) of
// each of its threads, read from /proc every millisecond while it runs
// (Linux only), so that a benchmark can tell the thread of AMD's library
// from the rest of att-decode even on a loaded machine, where wall times
// say little. It prints one line on stderr:
//
//	threads N largest L rest R cpu C wait W life T
//
// with the largest thread's CPU seconds, the others' sum and the total;
// W is the seconds the largest thread was runnable but waiting for a core
// (the kernel's run-queue delay), and T the seconds it was seen alive
// (first to last poll), so that T-L-W is about the time it slept or was
// blocked. CPU and wait times come from each thread's schedstat (nanoseconds)
// where the kernel has it, else CPU from stat in clock ticks and no wait
// (W is then -1). The command's stdout and stderr pass through, and its
// exit status is threads' own.
//
// Usage:
//
//	go run ./scripts/bench-cdec/threads CMD [ARG...]
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ticks is the kernel's clock ticks per second of /proc's times (USER_HZ).
const ticks = 100

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: threads CMD [ARG...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "threads:", err)
		os.Exit(1)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	cpu := map[string]*task{}
	dir := fmt.Sprintf("/proc/%d/task", cmd.Process.Pid)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	var err error
loop:
	for {
		select {
		case err = <-done:
			break loop
		case <-tick.C:
			poll(dir, cpu)
		}
	}
	var all []*task
	var total float64
	for _, v := range cpu {
		all = append(all, v)
		total += v.cpu
	}
	sort.Slice(all, func(i, j int) bool { return all[i].cpu > all[j].cpu })
	largest := &task{wait: -1}
	if len(all) > 0 {
		largest = all[0]
	}
	fmt.Fprintf(os.Stderr, "threads %d largest %.3f rest %.3f cpu %.3f wait %.3f life %.3f\n", len(all),
		largest.cpu, total-largest.cpu, total, largest.wait, largest.last.Sub(largest.first).Seconds())
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			os.Exit(ee.ExitCode())
		}
		os.Exit(1)
	}
}

// A task is what poll last saw of one thread.
type task struct {
	cpu, wait   float64   // seconds on a core, and runnable waiting for one (-1: unknown)
	first, last time.Time // first and last poll that saw it
}

// poll reads the CPU and run-queue wait times of every thread under dir
// into cpu: from schedstat (run and wait nanoseconds), else utime and stime
// (fields 14 and 15 of stat, in ticks).
func poll(dir string, cpu map[string]*task) {
	now := time.Now()
	tasks, _ := os.ReadDir(dir)
	for _, t := range tasks {
		c, w, ok := schedstat(filepath.Join(dir, t.Name(), "schedstat"))
		if !ok {
			if c, ok = stat(filepath.Join(dir, t.Name(), "stat")); !ok {
				continue
			}
			w = -1
		}
		k := cpu[t.Name()]
		if k == nil {
			k = &task{first: now}
			cpu[t.Name()] = k
		}
		k.cpu, k.wait, k.last = c, w, now
	}
}

func schedstat(path string) (cpu, wait float64, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, 0, false
	}
	r, err1 := strconv.ParseInt(f[0], 10, 64)
	w, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return float64(r) / 1e9, float64(w) / 1e9, true
}

func stat(path string) (cpu float64, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	// The command name, in parentheses, may hold spaces: the fields
	// counted from 3 start after its closing parenthesis.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, false
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return float64(u+k) / ticks, true
}
