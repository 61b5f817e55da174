package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/sqtt"
	"github.com/attkit/attkit/internal/sqttgen"
	"github.com/attkit/attkit/internal/wire"
)

// TestRunRDNA generates gfx10, gfx11 and gfx12 traces with -arch and checks
// the header's GFXIP and that the native decoder gives the expected records.
func TestRunRDNA(t *testing.T) {
	for _, c := range []struct {
		arch, index string
		gfxip       int
	}{{"gfx1030", "gfx1030", 10}, {"gfx11", "gfx1100", 11}, {"GFX1201", "gfx1201", 12}} {
		t.Run(c.arch, func(t *testing.T) {
			dir := t.TempDir()
			idx := "../../internal/sqttgen/testdata/" + c.index + ".index"
			att, rec := filepath.Join(dir, "x.att"), filepath.Join(dir, "x.rec")
			var out, errb bytes.Buffer
			if code := run([]string{"-arch", c.arch, "-index", idx, "-seed", "5", "-o", att, "-expect", rec,
				"-size", "100KB", "-all", "-waves", "12"}, &out, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			trace, err := os.ReadFile(att)
			if err != nil || len(trace) < 100000 {
				t.Fatalf("trace: %d bytes, %v", len(trace), err)
			}
			f, err := os.Open(rec)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var want []wire.Batch
			rd := wire.NewReader(f, rec)
			for rd.Scan() {
				switch rd.Kind() {
				case wire.KindHeader:
					if g := rd.Header().Trace.GFXIP; g != c.gfxip {
						t.Errorf("record stream header GFXIP %d, want %d", g, c.gfxip)
					}
				case wire.KindBatch:
					want = append(want, rd.Batch().Clone())
				}
			}
			if err := rd.Err(); err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 || want[0].GFXIP != uint64(c.gfxip) {
				t.Fatalf("first record is not GFXIP %d", c.gfxip)
			}
			ix, err := wire.ReadIndexFile(idx)
			if err != nil {
				t.Fatal(err)
			}
			var got []wire.Batch
			err = sqtt.New().Decode(context.Background(), bytes.NewReader(trace), isa.NewTable(ix), func(b *wire.Batch) error {
				got = append(got, b.Clone())
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if d := sqttgen.Diff(want, got); d != "" {
				t.Fatal(d)
			}
		})
	}
	var out, errb bytes.Buffer
	if code := run([]string{"-arch", "rdna", "-index", "x", "-o", "y"}, &out, &errb); code != 2 {
		t.Errorf("-arch rdna: exit %d, want 2", code)
	}
	for s, want := range map[string]int{"gfx9": 9, "gfx942": 9, "gfx10": 10, "gfx1030": 10, "gfx1100": 11, "gfx12": 12, "x12": 0, "gfx": 0} {
		if got := archGFXIP(s); got != want {
			t.Errorf("archGFXIP(%q) = %d, want %d", s, got, want)
		}
	}
}
