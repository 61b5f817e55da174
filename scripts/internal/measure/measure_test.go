package measure

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	r, err := Run(t.TempDir(), []string{"MEASURE_TEST=1"}, "sh", "-c", `test "$MEASURE_TEST" = 1 && test "$(basename "$PWD")" != measure`)
	if err != nil {
		t.Fatalf("env and dir not passed: %v", err)
	}
	if r.Wall <= 0 || r.MaxRSS <= 0 {
		t.Errorf("result %+v: want a wall time and a peak RSS", r)
	}
	if _, err := Run("", nil, "sh", "-c", "exit 3"); err == nil || !strings.Contains(err.Error(), "sh -c exit 3") {
		t.Errorf("failing command: error %v, want one naming it", err)
	}
	// A command that does not start has no process state: an error, not a panic.
	if _, err := Run("", nil, "/nonexistent/measure-test"); err == nil {
		t.Error("missing command: no error")
	}
}

func TestMedian(t *testing.T) {
	v := []int64{30, 10, 20, 40}
	if m := Median(v); m != 30 || !slices.IsSorted(v) {
		t.Errorf("Median of 30 10 20 40 = %d (v %v), want 30 and v sorted", m, v)
	}
	if m := Median([]int64{7}); m != 7 {
		t.Errorf("Median of 7 = %d", m)
	}
}

// TestNewWorkspace builds the tools, copies the sample's code object and
// indexes it: the index is a stream co-index wrote of that object.
func TestNewWorkspace(t *testing.T) {
	if _, err := exec.LookPath("llvm-objdump-19"); err != nil {
		t.Skip("llvm-objdump-19 not on PATH (scripts/install-deps installs llvm-19)")
	}
	ws, err := NewWorkspace(filepath.Join("..", "..", ".."), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"att-tool", "att-decode", "att-rcv", "co-index"} {
		if _, err := os.Stat(filepath.Join(ws.Bin, tool)); err != nil {
			t.Errorf("%s not built: %v", tool, err)
		}
	}
	obj, err := os.ReadFile(ws.Object)
	if err != nil {
		t.Fatal(err)
	}
	sample, _ := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "sample", "31337_1_code_object_id_1.hsaco"))
	if !slices.Equal(obj, sample) || filepath.Dir(ws.Object) != ws.Capture {
		t.Errorf("%s is not the sample's code object in the capture folder", ws.Object)
	}
	again := filepath.Join(t.TempDir(), "index")
	if err := exec.Command(filepath.Join(ws.Bin, "co-index"), "-o", again, ws.Object).Run(); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(again)
	idx, err := os.ReadFile(ws.Index)
	if err != nil || len(idx) == 0 || !slices.Equal(idx, want) {
		t.Fatalf("index %d bytes (%v), want the %d bytes co-index writes of the object", len(idx), err, len(want))
	}
}
