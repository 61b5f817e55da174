package sqttgen

import (
	"fmt"
	"os"
	"strconv"
	"testing"
)

// TestRoundTripRDNA decodes generated gfx10, gfx11 and gfx12 traces of the
// test kernels (built for gfx1030, gfx1100, gfx1201) with the native
// decoder and compares every record, field by field, with the generator's
// expectation. SQTTGEN_RDNA_SEEDS=N runs N seeds per architecture
// instead of 150 (for longer hunts).
func TestRoundTripRDNA(t *testing.T) {
	seeds := 150
	if testing.Short() {
		seeds = 10
	}
	if n, err := strconv.Atoi(os.Getenv("SQTTGEN_RDNA_SEEDS")); err == nil && n > 0 {
		seeds = n
	}
	for _, a := range rdArchs {
		ix := loadIndex(t, a.index)
		for seed := uint64(1); seed <= uint64(seeds); seed++ {
			t.Run(fmt.Sprintf("gfx%d/seed%d", a.gfxip, seed), func(t *testing.T) {
				cfg, o := rdSeedConfig(ix, a.gfxip, seed)
				trace, want, err := GenerateRDNA(cfg, o)
				if err != nil {
					t.Fatal(err)
				}
				got, err := decodeNative(t, trace, ix)
				if err != nil {
					t.Fatalf("decode: %v", err)
				}
				if d := Diff(want, got); d != "" {
					t.Fatalf("config %s %+v\n%s", cfgSummary(cfg), o, d)
				}
			})
		}
	}
}
