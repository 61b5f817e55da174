package attkit_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestHelpExitStatus runs every tool's --help and checks that it ends
// with its exit statuses: 0, 1 and 2, and 130 and 143 for an interrupt.
func TestHelpExitStatus(t *testing.T) {
	dirs, err := os.ReadDir("cmd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		n++
		out, err := exec.Command(filepath.Join(binDir, d.Name()), "--help").Output()
		if err != nil {
			t.Errorf("%s --help: %v", d.Name(), err)
			continue
		}
		help := string(out)
		i := strings.Index(help, "Exit status:")
		if i < 0 {
			t.Errorf("%s --help lists no exit status:\n%s", d.Name(), help)
			continue
		}
		status := strings.Join(strings.Fields(help[i:]), " ") // unwrapped
		for _, code := range []string{"0", "1", "2", "130", "143"} {
			if !regexp.MustCompile(`(: |; |or )` + code + `\b`).MatchString(status) {
				t.Errorf("%s --help: exit status %s not listed in %q", d.Name(), code, status)
			}
		}
	}
	if n < 9 {
		t.Errorf("%d tools under cmd/, want at least 9", n)
	}
}
