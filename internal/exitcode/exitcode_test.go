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
		{Errorf(Format, "not a trace: %w", errors.New("magic")), Format},
		{fmt.Errorf("ctx: %w", &Error{Code: NoLibrary, Err: errors.New("dlopen")}), NoLibrary},
		{fmt.Errorf("ctx: %w", Silent{Code: Usage}), Usage},
	} {
		if got := Of(c.err); got != c.want {
			t.Errorf("Of(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

// TestNoDependencies keeps the package free of imports beyond the standard
// library, which is its reason to exist.
func TestErrorf(t *testing.T) {
	inner := errors.New("magic")
	err := Errorf(Format, "not a trace: %w", inner)
	if err.Error() != "not a trace: magic" || !errors.Is(err, inner) {
		t.Errorf("Errorf = %q, wraps inner %v", err, errors.Is(err, inner))
	}
}

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
