package sqttgen

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/sqtt"
	"github.com/attkit/attkit/internal/wire"
)

func loadIndex(t testing.TB, name string) *wire.Index {
	t.Helper()
	ix, err := wire.ReadIndexFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// seedConfig varies the generator's options with the seed.
func seedConfig(ix *wire.Index, seed uint64) Config {
	r := rng{s: seed * 7919}
	cfg := Config{
		Index:           ix,
		Seed:            seed,
		Version2:        uint8(4 + r.intn(3)),
		TargetCU:        uint8(r.intn(16)),
		SE:              uint8(r.intn(4)),
		SIMDs:           1 + r.intn(4),
		WavesPerSIMD:    1 + r.intn(10),
		WavesPerSlot:    1 + r.intn(3),
		OtherCUs:        r.intn(4) - 1,
		Instrument:      true,
		LateLoad:        r.oneIn(4),
		Dispatch:        r.oneIn(2),
		Perf:            r.oneIn(2),
		ShaderData:      r.oneIn(2),
		Events:          r.oneIn(2),
		BarrierMessages: r.oneIn(2),
		DoubleBuffer:    r.oneIn(4),
		MaxTrips:        []int{4, 64, 3000}[r.intn(3)],
	}
	if cfg.Perf && r.oneIn(2) {
		cfg.PerfInterval = uint32(r.rangeIn(100, 2000))
	}
	return cfg
}

func decodeNative(t testing.TB, trace []byte, ix *wire.Index) ([]wire.Batch, error) {
	var got []wire.Batch
	err := sqtt.New().Decode(context.Background(), bytes.NewReader(trace), isa.NewTable(ix),
		func(b *wire.Batch) error {
			got = append(got, CloneBatch(b))
			return nil
		})
	return got, err
}

// TestRoundTripNative decodes generated traces of the test kernels with the
// native decoder and compares every record with the generator's
// expectation.
func TestRoundTripNative(t *testing.T) {
	seeds := 50
	if testing.Short() {
		seeds = 10
	}
	for _, name := range []string{"gfx90a.index", "gfx942.index"} {
		ix := loadIndex(t, name)
		for seed := uint64(1); seed <= uint64(seeds); seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", name, seed), func(t *testing.T) {
				cfg := seedConfig(ix, seed)
				trace, want, err := Generate(cfg)
				if err != nil {
					t.Fatal(err)
				}
				got, err := decodeNative(t, trace, ix)
				if err != nil {
					t.Fatalf("decode: %v", err)
				}
				if d := Diff(want, got); d != "" {
					t.Fatalf("config %+v\n%s", cfgSummary(cfg), d)
				}
			})
		}
	}
}

// TestRoundTripHand covers raw addresses (code object 0, no
// instrumentation) with the hand-written kernel.
func TestRoundTripHand(t *testing.T) {
	ix := handIndex(0, loopKernel)
	for seed := uint64(1); seed <= 10; seed++ {
		cfg := seedConfig(ix, seed)
		cfg.Instrument, cfg.LateLoad, cfg.PerfInterval = false, false, 0
		cfg.Kernels = []Kernel{{Entry: 0x100}}
		trace, want, err := Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeNative(t, trace, ix)
		if err != nil {
			t.Fatalf("seed %d: decode: %v", seed, err)
		}
		if d := Diff(want, got); d != "" {
			t.Fatalf("seed %d: config %+v\n%s", seed, cfgSummary(cfg), d)
		}
	}
}

func cfgSummary(c Config) string {
	c.Index, c.ISA, c.Emit = nil, nil, nil
	return fmt.Sprintf("%+v", c)
}
