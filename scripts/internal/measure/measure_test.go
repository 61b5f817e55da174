package measure

import (
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
