// Command threads runs a command and reports the CPU time (user+sys) of
// each of its threads, read from /proc every millisecond while it runs
// (Linux only), so that a benchmark can tell the thread of AMD's library
// from the rest of att-decode even on a loaded machine, where wall times
// say little. It prints one line on stderr:
//
//	threads N largest L rest R cpu C
//
// with the largest thread's CPU seconds, the others' sum and the total;
// the command's stdout and stderr pass through, and its exit status is
// threads' own.
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
	cpu := map[string]int64{} // tid -> last utime+stime seen, in ticks
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
	var all []int64
	var total int64
	for _, v := range cpu {
		all = append(all, v)
		total += v
	}
	sort.Slice(all, func(i, j int) bool { return all[i] > all[j] })
	var largest int64
	if len(all) > 0 {
		largest = all[0]
	}
	fmt.Fprintf(os.Stderr, "threads %d largest %.2f rest %.2f cpu %.2f\n", len(all),
		float64(largest)/ticks, float64(total-largest)/ticks, float64(total)/ticks)
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			os.Exit(ee.ExitCode())
		}
		os.Exit(1)
	}
}

// poll reads utime and stime (fields 14 and 15 of stat) of every thread
// under dir into cpu.
func poll(dir string, cpu map[string]int64) {
	tasks, _ := os.ReadDir(dir)
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "stat"))
		if err != nil {
			continue
		}
		// The command name, in parentheses, may hold spaces: the fields
		// counted from 3 start after its closing parenthesis.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		k, _ := strconv.ParseInt(f[12], 10, 64)
		cpu[t.Name()] = u + k
	}
}
