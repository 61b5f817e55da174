package version

import (
	"runtime"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	m := Module()
	if m == "" || strings.HasPrefix(m, " ") {
		t.Errorf("Module() = %q", m)
	}
	if s := String(); s != m+" "+runtime.Version() {
		t.Errorf("String() = %q, want %q", s, m+" "+runtime.Version())
	}
}
