package main

import (
	"testing"

	"github.com/attkit/attkit/internal/testutil"
)

// TestLoadCorpus: the harness reads the real corpus as the tests do
// (testutil.ReadCaptures) and frames every trace of it, gfx9 and RDNA.
func TestLoadCorpus(t *testing.T) {
	want := 0
	fams := map[string]int{}
	for _, c := range testutil.RealCorpus(t) {
		want += len(c.Traces)
	}
	c, err := loadCorpus(testutil.RealDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range c.seeds {
		fams[s.fam]++
	}
	if len(c.seeds) != want || fams["gfx9"] == 0 || fams["rdna"] == 0 || len(c.isas) == 0 {
		t.Errorf("%d seeds (%v) of %d traces, %d ISAs", len(c.seeds), fams, want, len(c.isas))
	}
}
