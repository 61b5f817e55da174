package sqttgen

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/sqtt"
	"github.com/attkit/attkit/internal/testutil"
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
	// The fields are drawn in this order: changing it changes every
	// seed's configuration.
	var cfg Config
	cfg.Index = ix
	cfg.Seed = seed
	cfg.GFX9.Version2 = uint8(4 + r.intn(3))
	cfg.GFX9.TargetCU = uint8(r.intn(16))
	cfg.GFX9.SE = uint8(r.intn(4))
	cfg.GFX9.SIMDs = 1 + r.intn(4)
	cfg.WavesPerSIMD = 1 + r.intn(10)
	cfg.WavesPerSlot = 1 + r.intn(3)
	cfg.OtherCUs = r.intn(4) - 1
	cfg.Instrument = true
	cfg.LateLoad = r.oneIn(4)
	cfg.Dispatch = r.oneIn(2)
	cfg.GFX9.Perf = r.oneIn(2)
	cfg.ShaderData = r.oneIn(2)
	cfg.Events = r.oneIn(2)
	cfg.PacketLoss = r.oneIn(3)
	cfg.GFX9.Replays = r.oneIn(2)
	cfg.GFX9.Pipeline = r.oneIn(2)
	cfg.GFX9.ContextSwitch = r.oneIn(3)
	cfg.GFX9.Traps = r.oneIn(3)
	cfg.GFX9.MergeIssues = r.oneIn(2)
	cfg.Truncate = r.oneIn(5)
	cfg.GFX9.BarrierMessages = r.oneIn(2)
	cfg.DoubleBuffer = r.oneIn(4)
	cfg.MaxTrips = []int{4, 64, 3000}[r.intn(3)]
	if cfg.GFX9.Perf && r.oneIn(2) {
		cfg.GFX9.PerfInterval = uint32(r.rangeIn(100, 2000))
	}
	cfg.GFX9.EndpgmMessage = seed%3 == 0
	return cfg
}

// decodeNative decodes trace with the native decoder. Every generated
// trace the tests decode must also pass the plausibility check that
// att-decode runs before any backend (sqtt-format.md 1.6).
func decodeNative(t testing.TB, trace []byte, ix *wire.Index) ([]wire.Batch, error) {
	if err := sqtt.CheckPlausible(trace); err != nil {
		t.Fatalf("a generated trace is refused: %v", err)
	}
	var got []wire.Batch
	err := sqtt.New().Decode(context.Background(), bytes.NewReader(trace), isa.NewTable(ix),
		func(b *wire.Batch) error {
			got = append(got, b.Clone())
			return nil
		})
	return got, err
}

// matchNative decodes trace with the native decoder and fails t unless it
// gives the records want; context (may be "") starts the messages.
func matchNative(t testing.TB, trace []byte, ix *wire.Index, want []wire.Batch, context string) {
	t.Helper()
	got, err := decodeNative(t, trace, ix)
	if err != nil {
		t.Fatalf("%sdecode: %v", context, err)
	}
	if d := Diff(want, got); d != "" {
		t.Fatalf("%s%s", context, d)
	}
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
				matchNative(t, trace, ix, want, fmt.Sprintf("config %+v\n", cfgSummary(cfg)))
			})
		}
	}
}

// TestRoundTripHand covers raw addresses (code object 0, no
// instrumentation) with the hand-written kernel.
func TestRoundTripHand(t *testing.T) {
	calls := 0
	for seed := uint64(1); seed <= 30; seed++ {
		ix, cfg := handSeedConfig(seed)
		trace, want, err := Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		matchNative(t, trace, ix, want, fmt.Sprintf("seed %d: config %+v\n", seed, cfgSummary(cfg)))
		for _, b := range want {
			for _, w := range b.Waves {
				for _, in := range w.Instructions {
					if in.PC.Address == 0x200 {
						calls++
					}
				}
			}
		}
	}
	if calls == 0 {
		t.Fatal("no wave called the function")
	}
}

// handSeedConfig is seedConfig for one of the hand-written kernels, chosen
// by the seed, at raw addresses (code object 0, no instrumentation).
func handSeedConfig(seed uint64) (*wire.Index, Config) {
	ix := LoopIndex(0)
	switch seed % 3 {
	case 1:
		ix = callIndex()
	case 2:
		ix = handIndex(0, mfmaKernel)
	}
	cfg := seedConfig(ix, seed)
	cfg.Instrument, cfg.LateLoad, cfg.GFX9.PerfInterval = false, false, 0
	cfg.Kernels = []Kernel{{Entry: 0x100}}
	return ix, cfg
}

func cfgSummary(c Config) string {
	c.Index, c.ISA, c.Emit = nil, nil, nil
	return fmt.Sprintf("%+v", c)
}

// TestScenarios016Native decodes the 0.1.6 scenarios with the native
// decoder under Compat016.
func TestScenarios016Native(t *testing.T) {
	for i := range scenarios016 {
		s := &scenarios016[i]
		t.Run(s.name, func(t *testing.T) {
			trace, want := buildScenario(s, true)
			var got []wire.Batch
			err := (&sqtt.Decoder{Compat: sqtt.Lib016}).Decode(context.Background(), bytes.NewReader(trace), isa.NewTable(s.ix),
				func(b *wire.Batch) error {
					got = append(got, b.Clone())
					return nil
				})
			if err != nil {
				t.Fatal(err)
			}
			if d := Diff(Normalize016(want), Normalize016(got)); d != "" {
				t.Fatal(d)
			}
		})
	}
}

// TestScenariosNative decodes the appendix A.2 and B traces with the native
// decoder.
func TestScenariosNative(t *testing.T) {
	for i := range scenarios {
		s := &scenarios[i]
		t.Run(s.name, func(t *testing.T) {
			trace, want := buildScenario(s, false)
			matchNative(t, trace, s.ix, want, "")
		})
	}
	for _, v := range []struct {
		name string
		hex  string
		ix   *wire.Index
		rt   bool
	}{{"B.1", testutil.VectorB1, b1Index(0x1000, 0), false}, {"B.2", testutil.VectorB2, b1Index(0, 7), true}} {
		t.Run(v.name, func(t *testing.T) {
			m, want := collect(v.ix)
			e := newEnc(nil, m)
			e.header(b1Header())
			if v.rt {
				for _, x := range []uint32{0x434F5200, 0x186A0006, 0x204, 0x1000, 0x304, 0, 0x104, 0x100, 0x004, 0x1E} {
					e.reg(0, 1, 0, regUserData2, x)
				}
			}
			writeB1Body(e, func(uint64) wire.PC { return wire.PC{} }, v.rt)
			e.end()
			matchNative(t, testutil.Unhex(t, v.hex), v.ix, *want, "")
		})
	}
}

// TestMalformedNative checks the A.2 "malformed" and "truncated token"
// rows: a wave slot above 9 fails the buffer after GFXIP; an all-zero
// header and a 6-byte buffer are not traces; a truncated last token is
// ignored.
func TestMalformedNative(t *testing.T) {
	ix := b1Index(0x1000, 0)
	var buf bytes.Buffer
	e := newEnc(&buf, nil)
	e.header(b1Header())
	e.inst(0, 0, 12, instSALU32)
	e.end()
	got, err := decodeNative(t, buf.Bytes(), ix)
	if err == nil || len(got) != 1 || got[0].Type != wire.TypeGFXIP {
		t.Errorf("wave slot 12: err %v, %d batches; want an error after GFXIP only", err, len(got))
	}
	for _, b := range [][]byte{make([]byte, 64), {0x11, 0xa0, 0x0f, 0, 0, 0}} {
		got, err := decodeNative(t, b, ix)
		if err == nil || len(got) != 0 {
			t.Errorf("%x: err %v, %d batches; want an error and no records", b, err, len(got))
		}
	}
	trace := append(testutil.Unhex(t, testutil.VectorB1), 0x05, 0x18, 0x10)
	got, err = decodeNative(t, trace, ix)
	if err != nil {
		t.Fatalf("truncated REG_CS: %v", err)
	}
	if d := Diff(b1Want(func(a uint64) wire.PC { return wire.PC{Address: 0x1000 + a} }), got); d != "" {
		t.Fatalf("truncated REG_CS: %s", d)
	}
}

// TestRoundTripBigBatches crosses the 65536-record limit of shader data
// batches, flushed while decoding (spec §2.2.6, §4.3).
func TestRoundTripBigBatches(t *testing.T) {
	if testing.Short() {
		t.Skip("large trace")
	}
	ix := loadIndex(t, "gfx90a.index")
	cfg := Config{Index: ix, Seed: 11, Instrument: true, WavesPerSIMD: 2, ShaderData: true,
		TargetBytes: 3 << 20, GFX9: GFX9{SIMDs: 1, ShaderDataEvery: 1}}
	bigBatches(t, ix, cfg, wire.TypeShaderData)
}

// TestRoundTripDoubleBuffer crosses the 65536-record limit of occupancy
// batches in double-buffer mode: gfx9 flushes them at a WAVE_END once
// 65536 or more are pending (spec §2.2.6 WAVE_END step 3).
func TestRoundTripDoubleBuffer(t *testing.T) {
	if testing.Short() {
		t.Skip("large trace")
	}
	ix := loadIndex(t, "gfx90a.index")
	// Seed 3 passes 65536 at a wave start: the batch is flushed at the
	// next wave end with 65539 records.
	cfg := Config{Index: ix, Seed: 3, Instrument: true, DoubleBuffer: true, OtherCUs: 15, WavesPerSIMD: 1, TargetBytes: 2 << 20, GFX9: GFX9{SIMDs: 1}}
	bigBatches(t, ix, cfg, wire.TypeOccupancy)
}

func bigBatches(t *testing.T, ix *wire.Index, cfg Config, typ wire.RecordType) {
	trace, want, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, b := range want {
		if b.Type == typ {
			sizes = append(sizes, b.Len())
		}
	}
	if len(sizes) < 2 || sizes[0] < 65536 {
		t.Fatalf("%s batches %v: want a first one of 65536 or more", typ, sizes)
	}
	t.Logf("%s batches of %v records", typ, sizes)
	matchNative(t, trace, ix, want, "")
}

// TestParallelSegments checks the segmented generation of large traces
// (no expected records): the native decoder finds every wave, complete,
// with every instruction stitched.
func TestParallelSegments(t *testing.T) {
	defer func(n int64) { segmentBytes = n }(segmentBytes)
	segmentBytes = 128 << 10
	ix := loadIndex(t, "gfx942.index")
	cfg := seedConfig(ix, 5)
	cfg.Truncate, cfg.PacketLoss = false, false
	cfg.TargetBytes = 5 * segmentBytes
	var buf bytes.Buffer
	st, err := GenerateTo(&buf, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if st.Bytes != int64(buf.Len()) || st.Bytes < cfg.TargetBytes || st.Bytes%32 != 0 {
		t.Fatalf("stats %+v for %d bytes", st, buf.Len())
	}
	got, err := decodeNative(t, buf.Bytes(), ix)
	if err != nil {
		t.Fatal(err)
	}
	waves := 0
	for _, b := range got {
		if b.Type == wire.TypeInfo {
			t.Fatalf("info %v", b.Info)
		}
		for _, w := range b.Waves {
			waves++
			for _, in := range w.Instructions {
				if in.PC.CodeObjectID != 1 && in.Category != wire.CatContext {
					t.Fatalf("unstitched instruction %+v", in)
				}
			}
		}
	}
	if int64(waves) != st.Waves {
		t.Fatalf("decoded %d waves, generated %d", waves, st.Waves)
	}
}

// FuzzRoundTrip explores generator seeds: every seed's trace must decode to
// the generator's records (go test -fuzz FuzzRoundTrip ./internal/sqttgen).
func FuzzRoundTrip(f *testing.F) {
	ix90a, ix942 := loadIndex(f, "gfx90a.index"), loadIndex(f, "gfx942.index")
	for _, s := range []uint64{1, 2, 3, 1000, 1 << 40} {
		f.Add(s, false)
	}
	f.Add(uint64(7), true)
	f.Fuzz(func(t *testing.T, seed uint64, other bool) {
		ix := ix90a
		if other {
			ix = ix942
		}
		cfg := seedConfig(ix, seed)
		cfg.MaxTrips = min(cfg.MaxTrips, 200) // keep each input fast
		trace, want, err := Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeNative(t, trace, ix)
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		if d := Diff(want, got); d != "" {
			t.Fatalf("seed %d: config %s\n%s", seed, cfgSummary(cfg), d)
		}
	})
}
