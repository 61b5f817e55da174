package sqttgen

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/attkit/attkit/internal/wire"
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
				matchNative(t, trace, ix, want, fmt.Sprintf("config %s %+v\n", cfgSummary(cfg), o))
			})
		}
	}
}

// TestRoundTripRDNABig is a 3 MB gfx12 trace with the double_buffer header
// bit, 14 occupancy-only wave locations and other-SIMD instructions, so
// that occupancy and INST_OTHER_SIMD records come in several batches
// (spec §2.3.6 WAVE_START step 5, §4.1). It takes about 10 s, so it runs
// only with SQTTGEN_RDNA_BIG=1. Open: the decoder flushes occupancy at
// exactly 65536 records, the generator (and AMD's 0.1.6) after the START
// that makes them 65536 or more, i.e. 65537 here (sqtt-format.md A.4 R8).
func TestRoundTripRDNABig(t *testing.T) {
	if os.Getenv("SQTTGEN_RDNA_BIG") == "" {
		t.Skip("set SQTTGEN_RDNA_BIG=1 for the multi-batch RDNA round trip (about 10 s)")
	}
	ix := loadIndex(t, "gfx1201.index")
	cfg := Config{Index: ix, Seed: 1, Instrument: true, WavesPerSIMD: 2, OtherCUs: 7, DoubleBuffer: true,
		TargetBytes: 3 << 20}
	trace, want, err := GenerateRDNA(cfg, RDNA{GFXIP: 12, OtherSIMD: true})
	if err != nil {
		t.Fatal(err)
	}
	occ, other := 0, 0
	for _, b := range want {
		switch b.Type {
		case wire.TypeOccupancy:
			occ++
		case wire.TypeInstOtherSIMD:
			other++
		}
	}
	if occ < 2 || other < 2 {
		t.Fatalf("%d occupancy and %d INST_OTHER_SIMD batches: want several of each", occ, other)
	}
	matchNative(t, trace, ix, want, "")
}

// TestRoundTripRDNADrop is the round trip with DropTokens: instructions
// without a token make the stitcher take its mismatch paths (and report
// STITCH_INCOMPLETE), which the decoder must reproduce record for record.
func TestRoundTripRDNADrop(t *testing.T) {
	infos := 0
	for _, a := range rdArchs {
		ix := loadIndex(t, a.index)
		for seed := uint64(1); seed <= 40; seed++ {
			cfg, o := rdSeedConfig(ix, a.gfxip, seed)
			o.DropTokens = true
			trace, want, err := GenerateRDNA(cfg, o)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range want {
				if b.Type == wire.TypeInfo && b.Info[0] == wire.InfoStitchIncomplete {
					infos++
				}
			}
			matchNative(t, trace, ix, want, fmt.Sprintf("gfx%d seed %d: config %s %+v\n", a.gfxip, seed, cfgSummary(cfg), o))
		}
	}
	if infos == 0 {
		t.Fatal("no STITCH_INCOMPLETE: the dropped tokens did not disturb the stitcher")
	}
}

// TestRoundTripRDNAShortBarrierWait decodes a gfx12 dropped-token trace
// whose model splits an excluded barrier wait of 0 cycles into the
// timeline (spec 3.6, A.4 R7; seed 581 is one such, among the seeds
// TestRoundTripRDNADrop does not try), which the decoder used to skip.
func TestRoundTripRDNAShortBarrierWait(t *testing.T) {
	ix := loadIndex(t, "gfx1201.index")
	cfg, o := rdSeedConfig(ix, 12, 581)
	o.DropTokens = true
	trace, want, err := GenerateRDNA(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	short := 0
	for _, b := range want {
		for _, w := range b.Waves {
			for _, s := range w.Timeline {
				if s.Type == wire.StateWait && s.Duration <= 0 {
					short++
				}
			}
		}
	}
	if short == 0 {
		t.Fatal("the model has no WAIT of 0 or fewer cycles: pick another seed")
	}
	matchNative(t, trace, ix, want, fmt.Sprintf("gfx12 seed 581: config %s %+v\n", cfgSummary(cfg), o))
}
