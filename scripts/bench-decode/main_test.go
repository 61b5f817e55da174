package main

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// TestRun measures two small traces natively (no library) and checks that
// every family gets a line with a throughput.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("generates traces")
	}
	var out bytes.Buffer
	err := run([]string{"-mb", "1", "-runs", "1", "-lib", "", "-families", "gfx942,gfx1100", "-dir", t.TempDir()}, &out)
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range []string{"gfx942", "gfx1100"} {
		found := false
		for _, line := range strings.Split(out.String(), "\n") {
			f := strings.Fields(line)
			if len(f) < 6 || f[0] != fam {
				continue
			}
			found = true
			mbs, err := strconv.ParseFloat(f[3], 64)
			insts, err2 := strconv.Atoi(f[4])
			if err != nil || err2 != nil || mbs <= 0 || insts <= 0 {
				t.Errorf("%s: line %q has no throughput or instruction count", fam, line)
			}
		}
		if !found {
			t.Errorf("no line for %s in\n%s", fam, out.String())
		}
	}
}
