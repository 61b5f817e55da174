package main

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"
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

// TestShareOut divides a CPU time by the stages of a profile's samples.
func TestShareOut(t *testing.T) {
	traces := `File: x
Type: cpu
-----------+-------------------------------------------------------
      30ms   github.com/attkit/attkit/internal/sqtt.scanRun
             github.com/attkit/attkit/internal/sqtt.(*rdna).scan
             github.com/attkit/attkit/internal/sqtt.(*Decoder).decode
             runtime.main
-----------+-------------------------------------------------------
      20ms   github.com/attkit/attkit/internal/wire.appendWave
             github.com/attkit/attkit/internal/sqtt.(*back).run
-----------+-------------------------------------------------------
      10ms   github.com/attkit/attkit/internal/sqtt.scanRun
             github.com/attkit/attkit/internal/sqtt.(*rdnaScanner).scanOne
             github.com/attkit/attkit/internal/sqtt.(*rdnaScanner).help
             github.com/attkit/attkit/internal/sqtt.(*back).run
-----------+-------------------------------------------------------
      40ms   runtime.futex
             runtime.mcall
`
	sh, err := shareOut([]byte(traces), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := shares{600 * time.Millisecond, 600 * time.Millisecond, 200 * time.Millisecond, 800 * time.Millisecond}
	if sh != want {
		t.Errorf("got %+v, want %+v", sh, want)
	}
	if b := sh.bound(); b != time.Second {
		t.Errorf("bound %v, want 1s (half the whole)", b)
	}
	if _, err := shareOut([]byte("File: x\n"), time.Second); err == nil {
		t.Error("a profile without samples gave no error")
	}
}
