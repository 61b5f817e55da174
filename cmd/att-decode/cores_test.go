package main

import (
	"os"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/testutil"
)

// TestCores: -j 2 (the decode split over two cores) writes what -j
// 1 writes, byte for byte, with the same warnings and exit status, for
// every real trace in both compat modes, and for one trace of each capture
// from stdin and as JSON; -j takes no negative number.
func TestCores(t *testing.T) {
	if code, _, errs := runCmd(nil, "--jobs=-1", "x.att"); code != 2 || !strings.Contains(errs, "-j takes a positive whole number") {
		t.Errorf("-j -1: exit %d, stderr %q", code, errs)
	}
	n := 0
	for _, c := range testutil.RealCorpus(t) {
		for i, tr := range c.Traces {
			data, err := os.ReadFile(tr.File)
			if err != nil {
				t.Fatal(err)
			}
			runs := [][]string{{"--compat", "newest", tr.File}, {"--compat", "0.1.6", tr.File}}
			if i == 0 {
				runs = append(runs, []string{"--se", "1", "-"}, []string{"--format", "json", tr.File})
			}
			for _, args := range runs {
				args = append([]string{"--backend", "native", "--index", c.CodeJSON}, args...)
				code1, out1, errs1 := runCmd(data, append([]string{"-j", "1"}, args...)...)
				code2, out2, errs2 := runCmd(data, append([]string{"-j", "2"}, args...)...)
				if code1 != 0 || len(out1) == 0 {
					t.Fatalf("%v: -j 1: exit %d, %d bytes, stderr %q", args, code1, len(out1), errs1)
				}
				if code2 != code1 || out2 != out1 || errs2 != errs1 {
					t.Errorf("%v: -j 2: exit %d, %d bytes, stderr %q; -j 1: exit %d, %d bytes, stderr %q (%s)",
						args, code2, len(out2), errs2, code1, len(out1), errs1, testutil.FirstDiff([]byte(out2), []byte(out1)))
				}
				n++
			}
		}
	}
	t.Logf("%d decodes alike on one core and two", n)
}
