//go:build cgo

package cdec

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/sqtt"
	"github.com/attkit/attkit/internal/sqttgen"
	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

// generatedConfigs are the gfx9 scenarios of the real-library test: the
// hand loop kernel, and kernels compiled from testdata/kernels (the indexes
// of internal/sqttgen/testdata) with the generator's options varied. None
// uses OTHER_MSG barriers: the generator's 0.1.6 model turns them off
// (0.1.6 drops OTHER_MSG, sqtt-format.md A.3 item 2), which would change the
// trace; cmd/att-decode's TestRocmMatchesNative covers them on the sample.
// (Traps are on only where the trap handler's return does not land on an
// s_barrier stitch anchor, which the newest model covers with OTHER_MSG.)
func generatedConfigs(t *testing.T) map[string]sqttgen.Config {
	k0 := []sqttgen.Kernel{{Entry: 0x100}}
	k3 := []sqttgen.Kernel{{Entry: 0x100, CodeObjectID: 3}}
	cfgs := map[string]sqttgen.Config{
		"plain":        {Index: sqttgen.LoopIndex(0), Kernels: k0, Seed: 1},
		"perf-sd":      {Index: sqttgen.LoopIndex(0), Kernels: k0, Seed: 2, ShaderData: true, GFX9: sqttgen.GFX9{Perf: true, SIMDs: 2}},
		"instrumented": {Index: sqttgen.LoopIndex(3), Kernels: k3, Seed: 3, Instrument: true, GFX9: sqttgen.GFX9{Perf: true, PerfInterval: 300}},
		"late-load":    {Index: sqttgen.LoopIndex(3), Kernels: k3, Seed: 4, Instrument: true, LateLoad: true},
		"dispatch":     {Index: sqttgen.LoopIndex(0), Kernels: k0, Seed: 5, Dispatch: true, Events: true, GFX9: sqttgen.GFX9{Version2: 4}},
		"mi350":        {Index: sqttgen.LoopIndex(0), Kernels: k0, Seed: 6, WavesPerSIMD: 10, GFX9: sqttgen.GFX9{Version2: 6}},
	}
	for _, arch := range []string{"gfx90a", "gfx942"} {
		ix, err := wire.ReadIndexFile(filepath.Join("..", "sqttgen", "testdata", arch+".index"))
		if err != nil {
			t.Fatal(err)
		}
		for seed := uint64(1); seed <= 4; seed++ {
			cfgs[fmt.Sprintf("%s/seed%d", arch, seed)] = sqttgen.Config{Index: ix, Seed: seed, Instrument: true,
				WavesPerSIMD: int(1 + 3*seed%10), WavesPerSlot: 2, OtherCUs: int(seed % 3),
				LateLoad: seed == 2, Dispatch: seed%2 == 1, ShaderData: seed%2 == 0, Events: seed == 3,
				PacketLoss: seed == 4, Truncate: seed == 2, DoubleBuffer: seed == 1,
				MaxTrips: []int{4, 64, 3000, 200}[seed-1],
				GFX9: sqttgen.GFX9{SIMDs: int(1 + seed%4), Perf: seed != 3, PerfInterval: uint32(seed%2) * 500,
					Replays: seed == 4, ContextSwitch: seed == 1, Traps: seed == 4, Version2: uint8(4 + seed%3)}}
		}
	}
	return cfgs
}

// TestRealLibraryGenerated decodes generated gfx9 traces with the library
// and with the native decoder. The library's records must equal the
// generator's for the library's version (Config.Compat016 for 0.1.x, which
// models sqtt-format.md A.3 items 1-2 and the 0.1.6 behaviours observed on
// AMD's build, listed in the internal/sqtt package doc; layouts of §4.6 by
// sqttgen.Normalize016), and the native
// decoder's must equal the generator's newest ones, on the same trace bytes:
// together this shows the two backends differ exactly by the modelled 0.1.6
// differences. With a 0.1.x library the native decoder's Compat016 mode
// must also give the library's records (layouts of §4.6 aside).
func TestRealLibraryGenerated(t *testing.T) {
	d := realDecoder(t)
	old := is01(d.Version())
	for name, cfg := range generatedConfigs(t) {
		t.Run(name, func(t *testing.T) {
			trace, newest, err := sqttgen.Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			p := isa.NewTable(cfg.Index)
			var native collector
			if err := sqtt.New().Decode(context.Background(), bytes.NewReader(trace), p, native.emit); err != nil {
				t.Fatalf("native decoder: %v", err)
			}
			if diff := sqttgen.Diff(newest, native.batches); diff != "" {
				t.Errorf("native decoder (got) and generator, newest model (want) differ: %s", diff)
			}
			want := newest
			if old {
				cfg.Compat016 = true
				trace016, want016, err := sqttgen.Generate(cfg)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(trace016, trace) {
					t.Fatal("the generator's 0.1.6 model wrote a different trace: the comparison would not be on the same bytes")
				}
				want = sqttgen.Normalize016(want016)
			}
			var got collector
			if err := d.Decode(context.Background(), bytes.NewReader(trace), p, got.emit); err != nil {
				t.Fatal(err)
			}
			if diff := sqttgen.Diff(want, got.batches); diff != "" {
				t.Errorf("library %s (got) and generator, 0.1.6 model %v (want) differ: %s", d.Version(), old, diff)
			}
			if old {
				// The native decoder's own 0.1.6 mode, batching as the
				// library does (cmd/att-decode --compat 0.1.6).
				n016 := sqtt.New()
				n016.Compat, n016.PoolLimit = sqtt.Lib016, -1
				var c collector
				if err := n016.Decode(context.Background(), bytes.NewReader(trace), p, c.emit); err != nil {
					t.Fatalf("native decoder, Compat Lib016: %v", err)
				}
				if diff := sqttgen.Diff(sqttgen.Normalize016(c.batches), got.batches); diff != "" {
					t.Errorf("library (got) and native decoder with Compat Lib016 (want) differ: %s", diff)
				}
			}
		})
	}
}

// records counts what the bare C loop counts: the sum of the callbacks'
// record counts, and the instructions inside waves.
func records(b *wire.Batch) (recs, insts int64) {
	for _, w := range b.Waves {
		insts += int64(len(w.Instructions))
	}
	switch b.Type {
	case wire.TypeGFXIP:
		return 0, 0
	case wire.TypeRTFrequency:
		return 1, 0
	}
	return int64(b.Len()), insts
}

func benchDecode(b *testing.B, d *Decoder, trace []byte, p isa.Provider) {
	var recs, insts int64
	b.SetBytes(int64(len(trace)))
	b.ResetTimer()
	start, cpu0 := time.Now(), testutil.CPUTime()
	for b.Loop() {
		err := d.Decode(context.Background(), bytes.NewReader(trace), p, func(bt *wire.Batch) error {
			r, i := records(bt)
			recs += r
			insts += i
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	sec := time.Since(start).Seconds()
	b.ReportMetric(float64(recs)/sec, "records/s")
	b.ReportMetric(float64(insts)/sec, "insts/s")
	if recs > 0 {
		// CPU time of the process per record: steadier than wall time
		// on a loaded machine.
		b.ReportMetric(float64(testutil.CPUTime()-cpu0)/float64(recs), "cpu-ns/record")
	}
}

// BenchmarkFixture measures the binding's own cost: the fixture library
// makes wave callbacks (64 instructions each) as fast as C can, so the time
// is the copy into the session's ring, the hand-over to Go and the record
// conversion. Compare with
// scripts/bench-cdec run on the same fixture script.
func BenchmarkFixture(b *testing.B) {
	lib := buildFixture(b, b.TempDir(), "fixture.so")
	d, err := Load(lib)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	benchDecode(b, d, []byte(fmt.Sprintf("bench %d 64\n", 100000)), noISA)
}

// BenchmarkRealLibrary decodes a generated gfx9 trace of about 32 MiB
// through the library (set ROCPROF_TRACE_DECODER_LIB).
func BenchmarkRealLibrary(b *testing.B) {
	d := realDecoder(b)
	ix := sqttgen.LoopIndex(0)
	trace, _, err := sqttgen.Generate(sqttgen.Config{Index: ix, Kernels: []sqttgen.Kernel{{Entry: 0x100}},
		Seed: 9, TargetBytes: 32 << 20, ShaderData: true, GFX9: sqttgen.GFX9{Perf: true}})
	if err != nil {
		b.Fatal(err)
	}
	benchDecode(b, d, trace, isa.NewTable(ix))
}
