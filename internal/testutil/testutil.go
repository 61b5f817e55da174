// Package testutil holds what several packages' tests share: golden files
// under testdata/ (rewritten with `go test -update`) and the process's CPU
// time for benchmarks. Only tests import it.
package testutil

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// Update reports whether the test run was asked to rewrite golden files.
func Update() bool { return *update }

// Golden compares got with testdata/name. With -update it writes got there
// instead. A difference writes got next to the golden file as name.got.
func Golden(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		os.WriteFile(path+".got", got, 0o644)
		t.Errorf("%s differs from the golden file; got written to %s.got", path, path)
	}
}

// CPUTime is the CPU time (user and system) the process has used so far; 0
// when the system cannot tell.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
