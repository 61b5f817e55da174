package sqtt

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/cdec"
	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/sqttgen"
	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

// decode016 decodes with Compat016.
func decode016(t *testing.T, data []byte, p *table) []wire.Batch {
	t.Helper()
	out, err := decodeWith(&Decoder{Compat: Lib016}, data, provider(p), cloneBatch)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCompat016Vectors(t *testing.T) {
	// B.1 as observed on 0.1.6: the wave ends at 220 with a last IDLE
	// segment of 8, and the records have the 0.1.6 layouts.
	w := b1Wave(0x1000, 0)
	w.Dispatcher, w.WorkgroupID, w.EndTime = 0, 0, 220
	w.Timeline[len(w.Timeline)-1] = wire.WaveState{Type: wire.StateIdle, Duration: 8}
	wb := wire.Batch{Type: wire.TypeWave, Waves: []wire.Wave{w}}
	occ := occB(
		wire.Occupancy{PC: wire.PC{Address: 0x1000}, Time: 100, Start: true},
		wire.Occupancy{PC: wire.PC{Address: 0x1000}, Time: 100, CU: 1, SIMD: 2, WaveID: 3, Start: true},
		wire.Occupancy{PC: wire.PC{Address: 0x1000}, Time: 220},
		wire.Occupancy{PC: wire.PC{Address: 0x1000}, Time: 228, CU: 1, SIMD: 2, WaveID: 3},
	)
	check(t, decode016(t, testutil.Unhex(t, testutil.VectorB1), newTable(0, b1Rows(0x1000)...)), []wire.Batch{
		gfxip(9), wb, occ,
		sdB(wire.ShaderData{Time: 204, Value: 0xabcd}),
		perfB(wire.PerfEvent{Time: 224, Events: [4]uint16{1, 2, 3, 4}}),
	})
	// B.2: no CODE_OBJECT_LOAD event in 0.1.6.
	w2 := b1Wave(0, 7)
	w2.Dispatcher, w2.WorkgroupID, w2.EndTime = 0, 0, 220
	w2.Timeline[len(w2.Timeline)-1] = wire.WaveState{Type: wire.StateIdle, Duration: 8}
	for i := range occ.Occupancy {
		occ.Occupancy[i].PC = wire.PC{CodeObjectID: 7}
	}
	check(t, decode016(t, testutil.Unhex(t, testutil.VectorB2), newTable(7, b1Rows(0)...)), []wire.Batch{
		gfxip(9), {Type: wire.TypeWave, Waves: []wire.Wave{w2}}, occ,
		rtB(wire.Realtime{ShaderClock: 208, RealtimeClock: 0x200000020}),
		sdB(wire.ShaderData{Time: 204, Value: 0xabcd}),
		rtFreq(100000000),
		perfB(wire.PerfEvent{Time: 224, Events: [4]uint16{1, 2, 3, 4}}),
	})
}

func TestCompat016DroppedMessage(t *testing.T) {
	// 0.1.6 drops OTHER_MSG but keeps its entry until the wave is emitted:
	// the barrier exit's IMMED starts at the OTHER_MSG's issue time.
	tr := start().at(100).waveStart(0, 0, 0, 1, 0, 1, 0).
		at(120).issue1(isInst).at(124).inst(0, 0, instSALU32).
		at(128).issue1(isInst).inst(0, 0, instOtherMsg).
		at(160).issue1(isImmed).
		at(172).waveEnd(0, 0, 0)
	got := decode016(t, tr.bytes(), newTable(0, "0x1000 4 s_mov_b32 s0, 0", "0x1004 4 s_barrier", "0x1008 4 s_endpgm"))
	check(t, got[1:2], []wire.Batch{{Type: wire.TypeWave, Waves: []wire.Wave{{BeginTime: 100, EndTime: 172,
		Instructions: []wire.Instruction{
			in(wire.CatSALU, 120, 4, 0, 0x1000, 0),
			in(wire.CatImmed, 128, 36, 36, 0x1004, 0),
		},
		Timeline: tl(sIdle, 20, sExec, 8, sWait, 36, sIdle, 8)}}}})
}

func TestCompat016LateAttributionAndPlaceholders(t *testing.T) {
	// A wave finished before a late load keeps its raw PC in 0.1.6 (its
	// occupancy is attributed); a wave still held at the end is attributed,
	// and its unresolved placeholder reads NONE.
	tr := newTB(5, 0, false).pgm(1, 0, 0x1000).
		at(100).waveStart(0, 0, 0, 1, 0, 1, 0).waveStart(0, 1, 0, 1, 0, 1, 0).
		at(104).issue(1, map[int]int{0: isInst}).at(108).inst(1, 0, instSALU32).
		at(120).issue1(isInst).at(124).inst(0, 0, instSALU32).
		issue(1, map[int]int{0: isInst}).
		at(140).waveEnd(0, 0, 0).
		at(152).roc().codeObject(0x1000, 0x100, 7, true, false)
	isa := newTable(7, "0x0 4 s_mov_b32 s0, 0")
	for pc, e := range newTable(0, "0x1000 4 s_mov_b32 s0, 0").m {
		isa.m[pc] = e
	}
	got := decode016(t, tr.bytes(), isa)
	check(t, got, []wire.Batch{
		gfxip(9),
		{Type: wire.TypeWave, Waves: []wire.Wave{{BeginTime: 100, EndTime: 140,
			Instructions: []wire.Instruction{in(wire.CatSALU, 120, 4, 0, 0x1000, 0)},
			Timeline:     tl(sIdle, 20, sIdle, 20)}}},
		occB(
			wire.Occupancy{PC: wire.PC{CodeObjectID: 7}, Time: 100, Start: true},
			wire.Occupancy{PC: wire.PC{CodeObjectID: 7}, Time: 100, SIMD: 1, Start: true},
			wire.Occupancy{PC: wire.PC{CodeObjectID: 7}, Time: 140},
		),
		info(wire.InfoWaveIncomplete),
		{Type: wire.TypeWave, Waves: []wire.Wave{{SIMD: 1, BeginTime: 100, EndTime: 128,
			Instructions: []wire.Instruction{in(wire.CatSALU, 104, 4, 0, 0, 7), in(wire.CatNone, 124, 0, 0, 0, 0)},
			Timeline:     tl(sIdle, 4, sExec, 20)}}},
	})
}

// TestCompat016MatchesLibrary decodes test traces with AMD's library and
// with the native decoder (Compat016 for a 0.1.x library, else the newest
// behaviour) and compares every record.
func TestCompat016MatchesLibrary(t *testing.T) {
	lib := os.Getenv(cdec.EnvLib)
	if lib == "" {
		t.Skip("set " + cdec.EnvLib + " to the path of librocprof-trace-decoder.so to compare the native decoder with AMD's")
	}
	d, err := cdec.Load(lib)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	old := d.API() == "v1" || strings.HasPrefix(d.Version(), "0.1")
	for _, c := range gfx9LibCases(t) {
		t.Run(c.name, func(t *testing.T) {
			var want, got []wire.Batch
			if err := d.Decode(context.Background(), bytes.NewReader(c.data), c.isa, func(b *wire.Batch) error {
				want = append(want, b.Clone())
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			n := &Decoder{Compat: CompatIf(old), PoolLimit: -1}
			if err := n.Decode(context.Background(), bytes.NewReader(c.data), c.isa, func(b *wire.Batch) error {
				got = append(got, b.Clone())
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			for _, bs := range [][]wire.Batch{want, got} {
				for i := range bs {
					for j := range bs[i].Waves {
						bs[i].Waves[j].Size = 0
					}
					for j := range bs[i].Events {
						bs[i].Events[j].Size = 0
					}
					for j := range bs[i].Dispatches {
						bs[i].Dispatches[j].Size = 0
					}
				}
			}
			if old {
				want, got = sqttgen.Normalize016(want), sqttgen.Normalize016(got)
			}
			if diff := sqttgen.Diff(want, got); diff != "" {
				t.Errorf("library (want) and native (got) differ: %s", diff)
			}
		})
	}
}

// gfx9LibCases are the gfx9 traces TestCompat016MatchesLibrary compares
// with the library: the vectors B.1 and B.2, the seed traces, and traces
// of the generator, one of them big enough for full shader-data and
// occupancy batches.
func gfx9LibCases(t *testing.T) []libCase {
	cases := []libCase{
		{"B.1", testutil.Unhex(t, testutil.VectorB1), newTable(0, b1Rows(0x1000)...)},
		{"B.2", testutil.Unhex(t, testutil.VectorB2), newTable(7, b1Rows(0)...)},
	}
	for i, tr := range seedTraces() {
		both := newTable(0, b1Rows(0x1000)...)
		for pc, e := range newTable(7, b1Rows(0)...).m {
			both.m[pc] = e
		}
		cases = append(cases, libCase{"seed" + sprintf("%d", i), tr, both})
	}
	ix, err := wire.ReadIndexFile(filepath.Join("..", "sqttgen", "testdata", "gfx942.index"))
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(1); seed <= 12; seed++ {
		cfg := sqttgen.Config{Index: ix, Seed: seed, Instrument: true, Dispatch: true, ShaderData: true,
			Events: true, LateLoad: seed == 6, Truncate: seed == 7,
			GFX9: sqttgen.GFX9{Perf: true, PerfInterval: uint32(seed % 3 * 200), Pipeline: seed%3 == 0,
				ContextSwitch: seed%4 == 0, Replays: seed%5 == 0, BarrierMessages: seed%2 == 1}}
		data, _, err := sqttgen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, libCase{"gen" + sprintf("%d", seed), data, isa.NewTable(ix)})
	}
	big, _, err := sqttgen.Generate(sqttgen.Config{Index: ix, Seed: 99, Instrument: true, ShaderData: true,
		OtherCUs: 8, TargetBytes: 4 << 20, GFX9: sqttgen.GFX9{ShaderDataEvery: 2, Perf: true}})
	if err != nil {
		t.Fatal(err)
	}
	return append(cases, libCase{"gen-big", big, isa.NewTable(ix)})
}
