package measure

import (
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
