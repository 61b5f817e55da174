package testutil

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps the failures instead of reporting
// them; Fatal ends the goroutine as testing.T's does.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); runtime.Goexit() }
func (r *recorder) Fatal(args ...any)                 { r.Errorf("%s", fmt.Sprint(args...)); runtime.Goexit() }

// failures runs f with a recorder and returns what it reported.
func failures(t *testing.T, f func(tb testing.TB)) []string {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() { defer close(done); f(r) }()
	<-done
	return r.failures
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestGoldenOutput(t *testing.T) {
	if Update() {
		t.Skip("-update: the goldens of this test are made by the test itself")
	}
	t.Chdir(t.TempDir())
	write(t, "testdata/run", "out\n")
	write(t, "testdata/run.stderr", "tool: warning\n")
	if f := failures(t, func(tb testing.TB) { GoldenOutput(tb, "run", []byte("out\n"), []byte("tool: warning\n")) }); len(f) != 0 {
		t.Errorf("equal outputs: %q", f)
	}
	f := failures(t, func(tb testing.TB) { GoldenOutput(tb, "run", []byte("out\n"), []byte("tool: other\n")) })
	if len(f) != 1 || !strings.Contains(f[0], "testdata/run.stderr differs") || !strings.Contains(f[0], "line 1") {
		t.Errorf("different stderr: %q", f)
	}
	if got, err := os.ReadFile("testdata/run.stderr.got"); err != nil || string(got) != "tool: other\n" {
		t.Errorf("run.stderr.got = %q, %v", got, err)
	}
	if f := failures(t, func(tb testing.TB) { Golden(tb, "missing", nil) }); len(f) != 1 || !strings.Contains(f[0], "-update") {
		t.Errorf("missing golden: %q", f)
	}
}

func TestGoldenDir(t *testing.T) {
	if Update() {
		t.Skip("-update: the goldens of this test are made by the test itself")
	}
	t.Chdir(t.TempDir())
	write(t, "testdata/tree/a.json", `{"path": "$ROOT/k.cl"}`)
	write(t, "testdata/tree/sub/b.txt", "b")
	write(t, "out/a.json", `{"path": "/checkout/k.cl"}`)
	write(t, "out/sub/b.txt", "b")
	if f := failures(t, func(tb testing.TB) { GoldenDir(tb, "tree", "out", "/checkout", "$ROOT") }); len(f) != 0 {
		t.Errorf("equal trees: %q", f)
	}
	if f := failures(t, func(tb testing.TB) { GoldenDir(tb, "tree", "out") }); len(f) != 1 || !strings.Contains(f[0], "a.json differs") {
		t.Errorf("without the replacement: %q", f)
	}
	write(t, "out/sub/c.txt", "c")
	if f := failures(t, func(tb testing.TB) { GoldenDir(tb, "tree", "out", "/checkout", "$ROOT") }); len(f) != 1 || !strings.Contains(f[0], "files differ") {
		t.Errorf("an extra file: %q", f)
	}
}
