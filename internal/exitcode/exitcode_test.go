package exitcode

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

type usageError struct{}

func (usageError) Error() string { return "bad flag" }
func (usageError) ExitCode() int { return Usage }

func TestOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, OK},
		{errors.New("plain"), Failed},
		{usageError{}, Usage},
		{fmt.Errorf("context: %w", usageError{}), Usage},
		{errors.Join(errors.New("first"), usageError{}), Usage},
	} {
		if got := Of(c.err); got != c.want {
			t.Errorf("Of(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

// TestNoDependencies keeps the package free of imports beyond the standard
// library's errors, which is its reason to exist.
func TestNoDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.Contains(p, ".") && p != "github.com/attkit/attkit/internal/exitcode" {
			t.Errorf("exitcode depends on %s", p)
		}
	}
}
