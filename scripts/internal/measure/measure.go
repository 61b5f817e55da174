// Package measure runs a benchmark script's commands and measures them.
// In: a command (directory, extra environment, name, arguments). Out: its
// wall time and the peak RSS of its process, or an error naming the
// command; the command's stderr goes to the script's. Median summarises
// repeated runs.
package measure

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// A Result is what Run measured.
type Result struct {
	Wall      time.Duration
	User, Sys time.Duration // CPU time of the process and its children
	MaxRSS    int64         // KiB
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
			r.User, r.Sys = time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
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

// LoadAvg returns the machine's load averages over 1, 5 and 15 minutes
// ("unknown" where /proc/loadavg is missing), for a benchmark to print.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// Root is the module root: the directory with go.mod at or above the
// working directory.
func Root() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		p := filepath.Dir(d)
		if p == d {
			return "", errors.New("not inside the attkit module")
		}
		d = p
	}
}

// A Workspace is the folder a pipeline benchmark works in: the tools built
// from the checkout, a capture folder holding the sample's code object
// under a rocprofv3 name, and that object's index.
type Workspace struct {
	Bin     string // the built commands
	Capture string // the capture folder (traces go in it beside the object)
	Object  string // the code object in Capture
	Index   string // its index stream
}

// NewWorkspace builds the commands of the checkout root into work/bin,
// copies the sample's code object into work/capture and indexes it.
func NewWorkspace(root, work string) (Workspace, error) {
	ws := Workspace{Bin: filepath.Join(work, "bin"), Capture: filepath.Join(work, "capture"), Index: filepath.Join(work, "index")}
	ws.Object = filepath.Join(ws.Capture, "77_1_code_object_id_1.hsaco")
	if err := os.MkdirAll(ws.Capture, 0o777); err != nil {
		return ws, err
	}
	if _, err := Run(root, nil, "go", "build", "-o", ws.Bin+"/", "./cmd/..."); err != nil {
		return ws, err
	}
	src, err := os.ReadFile(filepath.Join(root, "testdata/sample/31337_1_code_object_id_1.hsaco"))
	if err != nil {
		return ws, err
	}
	if err := os.WriteFile(ws.Object, src, 0o666); err != nil {
		return ws, err
	}
	_, err = Run(root, nil, filepath.Join(ws.Bin, "co-index"), "-o", ws.Index, ws.Object)
	return ws, err
}
