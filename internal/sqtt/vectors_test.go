package sqtt

import (
	"reflect"
	"testing"

	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

// b1Rows is the ISA of B.1 (and, as code-object offsets, of B.2).
func b1Rows(base uint64) []string {
	rows := []string{
		"0x%x 8 s_load_dword s0, s[0:1], 0x0",
		"0x%x 4 s_waitcnt lgkmcnt(0)",
		"0x%x 4 v_mov_b32_e32 v0, s0",
		"0x%x 4 s_cbranch_scc0 65534",
		"0x%x 8 global_store_dword v[0:1], v0, off",
		"0x%x 4 s_endpgm",
	}
	offs := []uint64{0, 8, 0xc, 0x10, 0x14, 0x1c}
	for i := range rows {
		rows[i] = sprintf(rows[i], base+offs[i])
	}
	return rows
}

// b1Wave is the expected WAVE of B.1 and B.2 (newest behaviour).
func b1Wave(base, coid uint64) wire.Wave {
	return wire.Wave{CU: 0, SIMD: 0, WaveID: 0, Dispatcher: 0x10, WorkgroupID: 1,
		BeginTime: 100, EndTime: 224,
		Instructions: []wire.Instruction{
			in(wire.CatSMEM, 120, 4, 0, base+0x0, coid),
			in(wire.CatImmed, 124, 12, 12, base+0x8, coid),
			in(wire.CatVALU, 144, 4, 0, base+0xc, coid),
			in(wire.CatJump, 152, 4, 0, base+0x10, coid),
			in(wire.CatVALU, 160, 12, 8, base+0xc, coid),
			in(wire.CatNext, 176, 4, 0, base+0x10, coid),
			in(wire.CatFLAT, 184, 20, 0, base+0x14, coid),
			in(wire.CatImmed, 204, 8, 8, base+0x1c, coid),
		},
		Timeline: tl(sIdle, 20, sExec, 4, sWait, 12, sExec, 24, sStall, 8, sExec, 36, sWait, 8, sExec, 12),
	}
}

func TestVectorB1(t *testing.T) {
	isa := newTable(0, b1Rows(0x1000)...)
	got, err := decode(t, testutil.Unhex(t, testutil.VectorB1), isa)
	if err != nil {
		t.Fatal(err)
	}
	want := []wire.Batch{
		gfxip(9),
		waveB(b1Wave(0x1000, 0)),
		occB(
			occStart(0x1000, 0, 100, 0, 0, 0, 1, 0, 0),
			occStart(0x1000, 0, 100, 1, 2, 3, 1, 0, 0),
			occEnd(0x1000, 0, 220, 0, 0, 0),
			occEnd(0x1000, 0, 228, 1, 2, 3),
		),
		sdB(wire.ShaderData{Time: 204, Value: 0xabcd}),
		perfB(wire.PerfEvent{Time: 224, Events: [4]uint16{1, 2, 3, 4}}),
	}
	check(t, got, want)
	// The ISA is asked once per PC, including the eager look-up past
	// s_endpgm.
	var wantQ []wire.PC
	for _, a := range []uint64{0x1000, 0x1008, 0x100c, 0x1010, 0x1014, 0x101c, 0x1020} {
		wantQ = append(wantQ, wire.PC{Address: a})
	}
	if !reflect.DeepEqual(isa.queries, wantQ) {
		t.Errorf("ISA queries %v, want %v", isa.queries, wantQ)
	}
}

func TestVectorB2(t *testing.T) {
	isa := newTable(7, b1Rows(0)...)
	got, err := decode(t, testutil.Unhex(t, testutil.VectorB2), isa)
	if err != nil {
		t.Fatal(err)
	}
	want := []wire.Batch{
		gfxip(9),
		eventB(wire.Event{Time: 0, Type: wire.EventCodeObjectLoad, MEID: 1, PipeID: 0, Flags: 1, Payload: 7}),
		waveB(b1Wave(0, 7)),
		occB(
			occStart(0, 7, 100, 0, 0, 0, 1, 0, 0),
			occStart(0, 7, 100, 1, 2, 3, 1, 0, 0),
			occEnd(0, 7, 220, 0, 0, 0),
			occEnd(0, 7, 228, 1, 2, 3),
		),
		rtB(wire.Realtime{ShaderClock: 208, RealtimeClock: 0x200000020}),
		sdB(wire.ShaderData{Time: 204, Value: 0xabcd}),
		rtFreq(100000000),
		perfB(wire.PerfEvent{Time: 224, Events: [4]uint16{1, 2, 3, 4}}),
	}
	check(t, got, want)
}

// TestTestdataVectors keeps testdata/b1.att and b2.att (the fuzz seeds)
// equal to the appendix B vectors; -update rewrites them.
func TestTestdataVectors(t *testing.T) {
	for name, v := range map[string]string{"b1.att": testutil.VectorB1, "b2.att": testutil.VectorB2} {
		testutil.Golden(t, name, testutil.Unhex(t, v))
	}
}
