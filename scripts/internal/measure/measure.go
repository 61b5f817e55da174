// Package measure runs a benchmark script's commands and measures them.
// In: a command (directory, extra environment, name, arguments). Out: its
// wall time and the peak RSS of its process, or an error naming the
// command; the command's stderr goes to the script's. Median summarises
// repeated runs.
package measure

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// A Result is what Run measured.
type Result struct {
	Wall   time.Duration
	MaxRSS int64 // KiB
}

// Run runs name with args in dir ("" is the current directory), with env
// added to the script's environment.
func Run(dir string, env []string, name string, args ...string) (Result, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	start := time.Now()
	err := cmd.Run()
	r := Result{Wall: time.Since(start)}
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			r.MaxRSS = ru.Maxrss
		}
	}
	if err != nil {
		return r, fmt.Errorf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return r, nil
}

// Median sorts v and returns its middle element (the upper one of an even
// count). v must not be empty.
func Median[T cmp.Ordered](v []T) T {
	slices.Sort(v)
	return v[len(v)/2]
}
