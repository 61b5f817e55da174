package attkit_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLibraryDependencies keeps the libraries off the command-line
// packages: the decoder and the wire format carry exit codes through
// internal/exitcode, not internal/cli (and so kong), and gojq stays behind
// internal/jq.
func TestLibraryDependencies(t *testing.T) {
	for pkg, banned := range map[string][]string{
		"./internal/sqtt": {"github.com/alecthomas/kong", "github.com/attkit/attkit/internal/cli"},
		"./internal/wire": {"github.com/alecthomas/kong", "github.com/attkit/attkit/internal/cli", "github.com/itchyny/gojq"},
	} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		for _, b := range banned {
			for _, d := range deps {
				if d == b {
					t.Errorf("%s depends on %s", pkg, b)
				}
			}
		}
	}
}
