package main

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// TestRun measures two small traces and checks that each family gets a
// line with both modes' times and a speed-up (the outputs were compared).
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds att-decode and generates traces")
	}
	var out bytes.Buffer
	if err := run([]string{"-mb", "1", "-runs", "1", "-families", "gfx942,gfx1100", "-dir", t.TempDir()}, &out); err != nil {
		t.Fatal(err)
	}
	for _, fam := range []string{"gfx942", "gfx1100"} {
		found := false
		for _, line := range strings.Split(out.String(), "\n") {
			f := strings.Fields(line)
			if len(f) < 9 || f[0] != fam {
				continue
			}
			found = true
			one, err1 := strconv.ParseFloat(f[2], 64)
			two, err2 := strconv.ParseFloat(f[5], 64)
			ratio, err3 := strconv.ParseFloat(strings.TrimSuffix(f[8], "x"), 64)
			if err1 != nil || err2 != nil || err3 != nil || one <= 0 || two <= 0 || ratio <= 0 {
				t.Errorf("%s: line %q lacks the times or the speed-up", fam, line)
			}
		}
		if !strings.Contains(out.String(), "\n"+fam+"-1MB.att: CPU: one core ") {
			t.Errorf("no CPU line for %s in\n%s", fam, out.String())
		}
		if !found {
			t.Errorf("no line for %s in\n%s", fam, out.String())
		}
	}
}
