package sqtt

import (
	"bytes"
	"context"
	"reflect"
	"testing"

	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

// Hand-built RDNA scenarios with expectations computed by hand from
// sqtt-format.md 2.3, 2.4, 3 and 4.

// scenarioJump: gfx12 with code-object instrumentation, a dispatch, an
// EVENT, and s_setpc (code 5) followed by a 72-bit NEW_PC.
func scenarioJump() []byte {
	return newRB(12).header(4, 0, 0, 0, 0, 0, 0).
		ud2(rocMagic).codeObject(0x10000, 0x100, 5, false).pgm(0, 0, 0x10000).
		regInit(0, 0, 2, 1).
		at(10).event(0x28, 0, 1, true).
		at(100).waveStart(0, 0, 0, 0, 0, 0, 1).
		at(104).inst(0, codeJump).at(106).newPC(0, 0x10040).
		at(110).valu(0).at(112).waveEnd(0, 0, 0, 0).pad()
}

func TestRDNAJumpInstrumentation(t *testing.T) {
	isa := newTable(5, "0x0 4 s_setpc_b64 s[0:1]", "0x40 4 v_add_f32_e32 v1, v0, v0", "0x44 4 s_endpgm")
	got, err := decodeAll(t, scenarioJump(), isa)
	if err != nil {
		t.Fatal(err)
	}
	want := []wire.Batch{
		gfxip(12),
		eventB(wire.Event{Type: wire.EventCodeObjectLoad, Payload: 5}),
		dispatchB(wire.Dispatch{VGPRs: 8, SGPRs: 128, EntryPoint: wire.PC{Address: 0, CodeObjectID: 5}}),
		eventB(wire.Event{Time: 10, Type: wire.EventBottomOfPipeTS, PipeID: 1, Flags: 3}),
		occB(rdnaOccStart(0, 5, 100, 0, 0, 0, 0, 0), rdnaOccEnd(0, 5, 112, 0, 0, 0)),
		waveB(wire.Wave{BeginTime: 100, EndTime: 112,
			Instructions: []wire.Instruction{
				in(wire.CatSALU, 104, 1, 0, 0x0, 5),
				in(wire.CatVALU, 110, 1, 0, 0x40, 5),
				in(wire.CatMessage, 111, 1, 0, 0x44, 5),
			},
			Timeline: tl(sIdle, 4, sExec, 8),
		}),
	}
	check(t, got, want)
}

// scenarioTwoWaves: gfx11, target WGP 2 SIMD 1, two waves, IMMEDIATE with
// a mask, an other-SIMD instruction, short shader data, a wave emitted at
// the next start in its slot, and a wave end without a start.
func scenarioTwoWaves() []byte {
	return newRB(11).header(3, 1, 2, 0, 0, 0, 0).pgm(0, 0, 0x1000).
		at(100).waveStart(0, 1, 2, 0, 0, 0, 1).at(101).waveStart(0, 1, 2, 1, 0, 0, 1).
		at(105).immediate(0b11).at(107).inst(1, 80).
		at(108).shaderData(true, 0, 1, 2, 1, 0x5a, 0).
		at(110).waveEnd(0, 1, 2, 0).at(112).waveEnd(0, 1, 2, 1).
		at(120).waveStart(0, 1, 2, 0, 0, 0, 1).
		at(125).waveEnd(0, 0, 3, 4).
		at(130).waveEnd(0, 1, 2, 0).pad()
}

func TestRDNATwoWaves(t *testing.T) {
	isa := newTable(0, "0x1000 4 s_waitcnt lgkmcnt(0)", "0x1004 4 s_endpgm")
	got, err := decodeAll(t, scenarioTwoWaves(), isa)
	if err != nil {
		t.Fatal(err)
	}
	first := wire.Wave{CU: 2, SIMD: 1, WaveID: 0, BeginTime: 100, EndTime: 110,
		Instructions: []wire.Instruction{
			in(wire.CatImmed, 105, 1, 0, 0x1000, 0),
			in(wire.CatMessage, 106, 4, 0, 0x1004, 0),
		},
		Timeline: tl(sIdle, 5, sWait, 1, sExec, 4),
	}
	want := []wire.Batch{
		gfxip(11),
		waveB(first),
		occB(
			wire.Occupancy{CU: 3, SIMD: 0, WaveID: 4, Start: true},
			rdnaOccStart(0x1000, 0, 100, 2, 1, 0, 0, 0),
			rdnaOccStart(0x1000, 0, 101, 2, 1, 1, 0, 0),
			rdnaOccEnd(0x1000, 0, 110, 2, 1, 0),
			rdnaOccEnd(0x1000, 0, 112, 2, 1, 1),
			rdnaOccStart(0x1000, 0, 120, 2, 1, 0, 0, 0),
			rdnaOccEnd(0, 0, 125, 3, 0, 4),
			rdnaOccEnd(0x1000, 0, 130, 2, 1, 0),
		),
		sdB(wire.ShaderData{Time: 108, Value: 0x5a, CU: 2, SIMD: 1, WaveID: 1, Flags: 1}),
		{Type: wire.TypeInstOtherSIMD, OtherSIMD: []wire.OtherSIMD{
			{Size: 24, Time: 107, Cycles: 1, WGP: 2, Category: wire.CatLDS}}},
		waveB(wire.Wave{CU: 2, SIMD: 1, WaveID: 0, BeginTime: 120, EndTime: 130,
			Timeline: tl(sIdle, 10)}),
		waveB(wire.Wave{CU: 2, SIMD: 1, WaveID: 1, BeginTime: 101, EndTime: 112,
			Instructions: []wire.Instruction{
				in(wire.CatImmed, 105, 1, 0, 0x1000, 0),
				in(wire.CatMessage, 106, 6, 0, 0x1004, 0),
			},
			Timeline: tl(sIdle, 4, sWait, 1, sExec, 6),
		}),
	}
	check(t, got, want)
}

// scenarioReorder: gfx10 with DPRate 3 (VALU code 12 lasts 4 cycles), a
// WAVE_READY delivered one cycle early and so before an IMM_ONE of the
// same time, and a MISC packet loss.
func scenarioReorder() []byte {
	return newRB(10).header(2, 0, 0, 0, 3, 0, 0).pgm(0, 0, 0x1000).
		at(100).waveStart(0, 0, 0, 0, 0, 0, 1).
		at(104).inst(0, 12).at(110).valu(0).
		at(115).immOne(0).ready(1).
		at(117).misc(0x01).
		at(120).inst(0, 1).at(125).waveEnd(0, 0, 0, 0).pad()
}

func TestRDNAReorderDPRatePacketLoss(t *testing.T) {
	isa := newTable(0, "0x1000 8 v_fma_f64 v[0:1], v[0:1], v[0:1], v[0:1]", "0x1008 4 v_add_f32_e32 v1, v0, v0",
		"0x100c 4 s_waitcnt vmcnt(0)", "0x1010 8 s_load_b32 s0, s[0:1], 0x0", "0x1018 4 s_endpgm")
	got, err := decodeAll(t, scenarioReorder(), isa)
	if err != nil {
		t.Fatal(err)
	}
	want := []wire.Batch{
		gfxip(10),
		eventB(wire.Event{Time: 117, Type: wire.EventPacketLoss}),
		occB(rdnaOccStart(0x1000, 0, 100, 0, 0, 0, 0, 0), rdnaOccEnd(0x1000, 0, 125, 0, 0, 0)),
		waveB(wire.Wave{BeginTime: 100, EndTime: 125,
			Instructions: []wire.Instruction{
				in(wire.CatVALU, 104, 4, 0, 0x1000, 0),
				in(wire.CatVALU, 110, 1, 0, 0x1008, 0),
				in(wire.CatImmed, 111, 5, 4, 0x100c, 0),
				in(wire.CatSMEM, 120, 1, 0, 0x1010, 0),
				in(wire.CatMessage, 121, 4, 0, 0x1018, 0),
			},
			Timeline: tl(sIdle, 4, sExec, 10, sWait, 2, sExec, 9),
		}),
		info(wire.InfoDataLost),
	}
	check(t, got, want)
}

// scenarioContext: gfx12 realtime and packet loss from TIMESTAMP tokens,
// WAVE_START_EXT with a workgroup id and an extension byte, private
// shader data, and a context save (MISC, count 66) and restore (count 68)
// with return from exception (117) and a NEW_PC.
func scenarioContext() []byte {
	r := newRB(12).header(4, 0, 0, 0, 0, 0, 0).pgm(0, 0, 0x3000).
		at(50).timestamp(0x12345, true, false).
		at(100).waveStartExt(0, 0, 0, 0, 0, 0, 1, 5)
	r.bits(0xA5, 8) // extension byte: first bit set, skipped
	return r.at(104).inst(0, 1).timestamp(0, false, true).
		at(108).shaderData(false, 0, 0, 0, 0, 0xdeadbeef, 1).
		at(110).misc(0x08).
		at(112).waveStart(0, 0, 0, 0, 0, 0, 66).
		at(150).waveStart(0, 0, 0, 0, 0, 0, 68).
		at(155).inst(0, codeReturnExc).at(156).newPC(0, 0x3010).
		at(160).valu(0).at(170).waveEnd(0, 0, 0, 0).pad()
}

func TestRDNAContextRealtimePacketLoss(t *testing.T) {
	isa := newTable(0, "0x3000 8 s_load_b32 s0, s[0:1], 0x0", "0x3008 4 s_nop 0",
		"0x3010 4 v_add_f32_e32 v1, v0, v0", "0x3014 4 s_endpgm")
	got, err := decodeAll(t, scenarioContext(), isa)
	if err != nil {
		t.Fatal(err)
	}
	want := []wire.Batch{
		gfxip(12),
		eventB(wire.Event{Time: 108, Type: wire.EventPacketLoss}),
		eventB(wire.Event{Time: 110, Type: wire.EventSaveContext}),
		occB(
			wire.Occupancy{PC: wire.PC{Address: 0x3000}, Time: 100, Start: true, IsExt: true, WorkgroupID: 5},
			rdnaOccEnd(0x3000, 0, 112, 0, 0, 0),
			rdnaOccStart(0x3000, 0, 150, 0, 0, 0, 0, 0),
			rdnaOccEnd(0x3000, 0, 170, 0, 0, 0),
		),
		rtB(wire.Realtime{ShaderClock: 50, RealtimeClock: 0x12345}),
		sdB(wire.ShaderData{Time: 108, Value: 0xdeadbeef, Flags: 2}),
		waveB(wire.Wave{BeginTime: 100, EndTime: 170, Contexts: 2, WorkgroupID: 5,
			Instructions: []wire.Instruction{
				in(wire.CatSMEM, 104, 1, 0, 0x3000, 0),
				in(wire.CatContext, 112, 44, 0, 0, 0),
				in(wire.CatVALU, 160, 1, 0, 0x3010, 0),
				in(wire.CatMessage, 161, 9, 0, 0x3014, 0),
			},
			Timeline: tl(sIdle, 4, sExec, 66),
		}),
		info(wire.InfoDataLost),
	}
	check(t, got, want)
}

// scenarioBarrier: gfx12 s_barrier_signal (code 122) followed by an
// s_barrier_wait that produced no token; header bit 59 set or not.
func scenarioBarrier(exclude bool) []byte {
	var extra uint64
	if exclude {
		extra = 1 << 59
	}
	return newRB(12).header(4, 0, 0, 0, 0, 0, extra).pgm(0, 0, 0x4000).
		at(100).waveStart(0, 0, 0, 0, 0, 0, 1).
		at(104).inst(0, 122).at(120).valu(0).at(125).waveEnd(0, 0, 0, 0).pad()
}

func TestRDNAExcludedBarrierWait(t *testing.T) {
	rows := []string{"0x4000 4 s_barrier_signal -1", "0x4004 4 s_barrier_wait 0xffff",
		"0x4008 4 v_add_f32_e32 v1, v0, v0", "0x400c 4 s_endpgm"}
	occ := occB(rdnaOccStart(0x4000, 0, 100, 0, 0, 0, 0, 0), rdnaOccEnd(0x4000, 0, 125, 0, 0, 0))
	// With the header bit, the stitcher inserts the barrier wait (3.6).
	got, err := decodeAll(t, scenarioBarrier(true), newTable(0, rows...))
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, []wire.Batch{gfxip(12), occ, waveB(wire.Wave{BeginTime: 100, EndTime: 125,
		Instructions: []wire.Instruction{
			in(wire.CatMessage, 104, 1, 0, 0x4000, 0),
			in(wire.CatImmed, 105, 15, 0, 0x4004, 0),
			in(wire.CatVALU, 120, 1, 0, 0x4008, 0),
			in(wire.CatMessage, 121, 4, 0, 0x400c, 0),
		},
		Timeline: tl(sIdle, 4, sExec, 1, sWait, 15, sExec, 5),
	})})
	// A wait that ends where its timeline segment ends: the empty rest of
	// the segment is kept (as 0.1.6 does, sqtt-format.md A.4 R7).
	data := newRB(12).header(4, 0, 0, 0, 0, 0, 1<<59).pgm(0, 0, 0x4000).
		at(100).waveStart(0, 0, 0, 0, 0, 0, 1).
		at(104).inst(0, 122).at(118).ready(1).at(120).valu(0).at(125).waveEnd(0, 0, 0, 0).pad()
	got, err = decodeAll(t, data, newTable(0, rows...))
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, []wire.Batch{gfxip(12), occ, waveB(wire.Wave{BeginTime: 100, EndTime: 125,
		Instructions: []wire.Instruction{
			in(wire.CatMessage, 104, 1, 0, 0x4000, 0),
			in(wire.CatImmed, 105, 13, 0, 0x4004, 0),
			in(wire.CatVALU, 118, 3, 2, 0x4008, 0),
			in(wire.CatMessage, 121, 4, 0, 0x400c, 0),
		},
		Timeline: tl(sIdle, 4, sExec, 1, sWait, 13, sExec, 0, sStall, 2, sExec, 5),
	})})
	// Without it, the wait line is passed over as a line without a token.
	got, err = decodeAll(t, scenarioBarrier(false), newTable(0, rows...))
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, []wire.Batch{gfxip(12), occ, waveB(wire.Wave{BeginTime: 100, EndTime: 125,
		Instructions: []wire.Instruction{
			in(wire.CatMessage, 104, 1, 0, 0x4000, 0),
			in(wire.CatVALU, 120, 1, 0, 0x4008, 0),
			in(wire.CatMessage, 121, 4, 0, 0x400c, 0),
		},
		Timeline: tl(sIdle, 4, sExec, 21),
	})})
}

// rdnaScenarioTraces are the scenario traces, as fuzz seeds.
func rdnaScenarioTraces() [][]byte {
	return [][]byte{scenarioJump(), scenarioTwoWaves(), scenarioReorder(), scenarioContext(),
		scenarioBarrier(true), scenarioBarrier(false), scenarioLostStart()}
}

// The instruction map assertions of the upstream gfx12 unit tests (7.3),
// plus the generations' differences for codes 10, 12, 15 and 80.
func TestRDNAInstructionMaps(t *testing.T) {
	type res struct {
		cat    wire.InstCategory
		cycles int64
		other  bool
	}
	for _, tc := range []struct {
		version        int
		dprate, derate int64
		code           uint64
		want           res
	}{
		{4, 1, 1, 0, res{wire.CatSALU, 1, false}},
		{4, 1, 1, 80, res{wire.CatLDS, 1, true}},
		{4, 1, 1, 102, res{}},
		{4, 1, 1, 79, res{}},
		{4, 1, 1, 160, res{}},
		{4, 1, 1, 188, res{wire.CatVMEM, 1, true}},
		{4, 1, 1, 190, res{wire.CatVMEM, 3, true}},
		{4, 1, 1, 221, res{wire.CatVMEM, 34, true}},
		{4, 1, 1, 222, res{wire.CatVMEM, 1, false}},
		{4, 1, 1, 255, res{wire.CatVMEM, 34, false}},
		{4, 4, 1, 146, res{wire.CatVALU, 4, false}},
		{4, 4, 2, 147, res{wire.CatVALU, 8, false}},
		{4, 4, 1, 15, res{wire.CatVALU, 16, false}},
		{3, 4, 1, 10, res{wire.CatVALU, 4, false}},
		{3, 4, 1, 15, res{wire.CatVALU, 4, false}},
		{3, 4, 1, 12, res{wire.CatVALU, 1, false}},
		{3, 1, 1, 90, res{wire.CatVMEM, 1, true}},
		{3, 1, 1, 118, res{wire.CatLDS, 6, false}},
		{4, 1, 1, 118, res{wire.CatBVH, 6, false}},
		{2, 4, 1, 12, res{wire.CatVALU, 4, false}},
		{2, 4, 1, 15, res{wire.CatVALU, 64, false}},
		{2, 1 << 14, 1, 15, res{wire.CatVALU, 16 << 14, false}},
		{2, 4, 1, 10, res{wire.CatVALU, 1, false}},
		{2, 1, 1, 80, res{}},
		{2, 1, 1, 30, res{wire.CatFLAT, 1, false}},
		{3, 1, 1, 30, res{wire.CatFLAT, 4, false}},
		{2, 1, 1, 35, res{wire.CatVMEM, 1, false}},
		{2, 1, 1, 36, res{wire.CatVMEM, 1, false}},
		{3, 1, 1, 36, res{wire.CatVMEM, 2, false}},
		{1, 1, 1, 19, res{wire.CatImmed, 1, false}},
		{4, 1, 1, 6, res{wire.CatContext, 1, false}},
		{4, 1, 1, 117, res{}},
	} {
		r := &rdna{ps: &parseState{}, version: tc.version, dprate: tc.dprate, derate: tc.derate}
		r.setInsts()
		m, c := r.mapInst(tc.code)
		if got := (res{m.cat, c, m.other}); got != tc.want {
			t.Errorf("version %d code %d: %+v, want %+v", tc.version, tc.code, got, tc.want)
		}
	}
}

// The encoding tables: the gfx10 patterns are prefix-free (so their order
// does not matter), and the gfx11/gfx12 overrides land where 2.3.2 says.
func TestRDNATokenTables(t *testing.T) {
	seen := map[int]uint8{}
	for _, e := range gfx10Encodings {
		var p int
		for _, c := range e.pattern {
			p = p<<1 | int(c-'0')
		}
		n := len(e.pattern)
		for i := 0; i < 256; i++ {
			if i&(1<<n-1) == p {
				if o, ok := seen[i]; ok {
					t.Errorf("pattern %s of type %d overlaps type %d at %#x", e.pattern, e.typ, o, i)
				}
				seen[i] = e.typ
			}
		}
	}
	for _, tc := range []struct {
		table *[256]rdnaEntry
		index int
		want  rdnaEntry
	}{
		{gfx10Table, 0b010, rdnaEntry{rInst, 20, 4, 3}},
		{gfx12Table, 0b010, rdnaEntry{rInst, 20, 3, 3}},
		{gfx10Table, 0b0000001, rdnaEntry{rTimestamp, 64, 0, 0}},
		{gfx11Table, 0b0000001, rdnaEntry{rTimestamp, 48, 0, 0}},
		{gfx12Table, 0b0000001, rdnaEntry{rTimestamp, 64, 0, 0}},
		{gfx11Table, 0b0110001, rdnaEntry{rUtilCounter, 48, 7, 2}},
		{gfx11Table, 0b00110, rdnaEntry{rShaderData, 52, 5, 3}},
		{gfx12Table, 0b0000110, rdnaEntry{rShaderData, 56, 7, 3}},
		{gfx12Table, 0b0100110, rdnaEntry{rShaderData, 52, 5, 3}}, // left over from gfx10
		{gfx12Table, 0b1000110, rdnaEntry{rShaderDataShort, 32, 7, 3}},
		{gfx12Table, 0b1100110, rdnaEntry{rExecPopcount1, 24, 7, 3}},
		{gfx12Table, 0b010110, rdnaEntry{rExecPopcount3, 48, 6, 3}},
		{gfx12Table, 0b110110, rdnaEntry{rShaderDataShort, 28, 5, 3}},
		{gfx12Table, 0b0100001, rdnaEntry{rNewPC, 72, 8, 3}},
		{gfx12Table, 0b11100, rdnaEntry{rWaveStartExt, 40, 5, 2}},
		{gfx10Table, 0b1000001, rdnaEntry{rUnknown, 4, 0, 0}},
		{gfx10Table, 0b1000, rdnaEntry{rTime, 8, 4, 4}},
		{gfx10Table, 0b1010001, rdnaEntry{rMisc, 24, 7, 9}},
	} {
		for i := 0; i < 256; i += 1 << 7 {
			if got := tc.table[tc.index|i]; got != tc.want && tc.index|i < 256 {
				t.Errorf("index %#x: %+v, want %+v", tc.index|i, got, tc.want)
			}
		}
	}
}

// End of buffer (2.3.1): gfx12 decodes a token only when 64 bits from its
// start lie in the buffer; gfx10/gfx11 decode every token that starts in
// it, reading zeros past the end.
func TestRDNAEndOfBuffer(t *testing.T) {
	b3 := testutil.Unhex(t, testutil.VectorB3)
	full, err := decodeAll(t, b3, newTable(0, b3Rows...))
	if err != nil {
		t.Fatal(err)
	}
	// The B.3 WAVE_END starts at bit 360: 53 bytes hold its 64 bits.
	got, err := decodeAll(t, b3[:53], newTable(0, b3Rows...))
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, full)
	got, err = decodeAll(t, b3[:52], newTable(0, b3Rows...))
	if err != nil {
		t.Fatal(err)
	}
	// No WAVE_END: an incomplete wave, ending 4 after its last instruction.
	check(t, got, []wire.Batch{
		gfxip(12),
		occB(rdnaOccStart(0x2000, 0, 100, 0, 0, 0, 0, 0)),
		info(wire.InfoWaveIncomplete),
		waveB(wire.Wave{BeginTime: 100, EndTime: 125,
			Instructions: []wire.Instruction{
				in(wire.CatSMEM, 104, 1, 0, 0x2000, 0),
				in(wire.CatVALU, 107, 1, 0, 0x2008, 0),
				in(wire.CatVALU, 110, 6, 5, 0x200c, 0),
				in(wire.CatImmed, 116, 5, 4, 0x2010, 0),
			},
			Timeline: tl(sIdle, 4, sExec, 6, sStall, 5, sExec, 1, sWait, 5),
		}),
	})
	// gfx11: the B.4 WAVE_END starts at bit 380; 49 bytes keep its first
	// three nibbles, the rest reads as zero.
	b4 := testutil.Unhex(t, testutil.VectorB4)
	full, err = decodeAll(t, b4, newTable(0, b4Rows...))
	if err != nil {
		t.Fatal(err)
	}
	got, err = decodeAll(t, b4[:49], newTable(0, b4Rows...))
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, full)
}

// scenarioLostStart: gfx12 packet loss (TIMESTAMP pl) consumed by a wave
// start for a location still running: an END at time-1 without PC, and a
// second wave pushed over the first, which never ends. (On gfx10/gfx11 the
// VALU would still sit in the reorder queue when the TIMESTAMP is read,
// and it would consume the flag: the parser consumes it, 2.3.6.)
func scenarioLostStart() []byte {
	return newRB(12).header(4, 0, 0, 0, 0, 0, 0).pgm(0, 0, 0x1000).
		at(100).waveStart(0, 0, 0, 0, 0, 0, 1).
		at(104).valu(0).timestamp(0, false, true).
		at(110).waveStart(0, 0, 0, 0, 0, 0, 1).
		at(120).waveEnd(0, 0, 0, 0).pad()
}

func TestRDNALostWaveStart(t *testing.T) {
	got, err := decodeAll(t, scenarioLostStart(), newTable(0, "0x1000 4 v_add_f32_e32 v1, v0, v0", "0x1004 4 s_endpgm"))
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, []wire.Batch{
		gfxip(12),
		eventB(wire.Event{Time: 110, Type: wire.EventPacketLoss}),
		occB(
			rdnaOccStart(0x1000, 0, 100, 0, 0, 0, 0, 0),
			rdnaOccEnd(0, 0, 109, 0, 0, 0),
			rdnaOccStart(0x1000, 0, 110, 0, 0, 0, 0, 0),
			rdnaOccEnd(0x1000, 0, 120, 0, 0, 0),
		),
		info(wire.InfoWaveIncomplete),
		waveB(wire.Wave{BeginTime: 100, EndTime: 109,
			Instructions: []wire.Instruction{in(wire.CatVALU, 104, 1, 0, 0x1000, 0)},
			Timeline:     tl(sIdle, 4)}),
		waveB(wire.Wave{BeginTime: 110, EndTime: 120, Timeline: tl(sIdle, 10)}),
		info(wire.InfoDataLost),
	})
}

// Memory does not grow with the trace length (more waves, same waves in
// flight).
func TestRDNAMemoryBounded(t *testing.T) {
	checkMemoryBounded(t, func(rounds int) []byte {
		data, _ := rdnaSynthTrace(12, rounds, 100)
		return data
	})
}

// A gfx10 DPRate of 15 makes VALU code 15 last 16 << 14 cycles: the
// duration is not cut to 16 bits (sqtt-format.md A.4 R1).
func TestRDNALargeDPRate(t *testing.T) {
	data := newRB(10).header(1, 0, 0, 0, 15, 0, 0).pgm(0, 0, 0x1000).
		at(100).waveStart(0, 0, 0, 0, 0, 0, 1).at(104).inst(0, 15).at(110).waveEnd(0, 0, 0, 0).pad()
	got, err := decodeAll(t, data, newTable(0, "0x1000 8 v_fma_f64 v[0:1], v[0:1], v[0:1], v[0:1]", "0x1008 4 s_endpgm"))
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, []wire.Batch{
		gfxip(10),
		occB(rdnaOccStart(0x1000, 0, 100, 0, 0, 0, 0, 0), rdnaOccEnd(0x1000, 0, 110, 0, 0, 0)),
		waveB(wire.Wave{BeginTime: 100, EndTime: 110,
			Instructions: []wire.Instruction{in(wire.CatVALU, 104, 16<<14, 0, 0x1000, 0)},
			Timeline:     tl(sIdle, 4, sExec, 6)}),
	})
}

// MISC flags and EVENT ids map to events in bit order (2.3.6); on header
// versions <= 2 REG tokens with CS=1 also feed the USERDATA2 protocol.
func TestRDNAEvents(t *testing.T) {
	r := newRB(10).header(2, 0, 0, 0, 0, 0, 0)
	r.reg(true, 0, 0, regUserData2, rocMagic)
	r.reg(true, 0, 0, regUserData2, opCodeObj|coAddrLo<<8).reg(true, 0, 0, regUserData2, 0x1000)
	r.reg(true, 0, 0, regUserData2, opCodeObj|coSizeLo<<8).reg(true, 0, 0, regUserData2, 0x100)
	r.reg(true, 0, 0, regUserData2, opCodeObj|coTail<<8).reg(true, 0, 0, regUserData2, 9<<2)
	data := r.at(10).misc(0xFA).
		at(20).event(7, 3, 2, false).event(4, 0, 0, true).event(0x36, 1, 3, false).event(0x10, 0, 0, false).
		at(30).misc(0x01).pad()
	got, err := decodeAll(t, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	ev := func(time int64, typ wire.EventType, me, pipe uint8, flags uint16, payload uint64) wire.Batch {
		return eventB(wire.Event{Time: time, Type: typ, MEID: me, PipeID: pipe, Flags: flags, Payload: payload})
	}
	check(t, got, []wire.Batch{
		gfxip(10),
		ev(0, wire.EventCodeObjectLoad, 0, 0, 0, 9),
		ev(10, wire.EventGCRinse, 0, 0, 0, 0),
		ev(10, wire.EventSaveContext, 0, 0, 0, 0),
		ev(10, wire.EventTTStallBegin, 0, 0, 0, 0),
		ev(10, wire.EventTTStallEnd, 0, 0, 0, 0),
		ev(10, wire.EventDIDTStallBegin, 0, 0, 0, 0),
		ev(10, wire.EventDIDTStallEnd, 0, 0, 0, 0),
		ev(20, wire.EventCSPartialFlush, 1, 2, 1, 0),
		ev(20, wire.EventCacheFlush, 0, 0, 3, 0),
		ev(20, wire.EventTTFlush, 1, 3, 1, 0),
		ev(30, wire.EventPacketLoss, 0, 0, 0, 0),
		info(wire.InfoDataLost),
	})
	// gfx11: MISC bit 16 is an SPM sample, and CS=1 writes skip USERDATA2.
	r = newRB(11).header(3, 0, 0, 0, 0, 0, 0)
	r.reg(true, 0, 0, regUserData2, rocMagic).reg(true, 0, 0, regUserData2, opAgentInfo|100<<12)
	r.ud2(rocMagic).ud2(opAgentInfo | 200<<12)
	got, err = decodeAll(t, r.at(30).misc(0x01).pad(), nil)
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, []wire.Batch{gfxip(11), ev(30, wire.EventSPMSample, 0, 0, 0, 0), rtFreq(200000)})
}

// Decoding stops when the context ends, even in a stream of NOPs.
func TestRDNACancel(t *testing.T) {
	data := append(newRB(12).header(4, 0, 0, 0, 0, 0, 0).bytes(), make([]byte, 1<<20)...)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := New().Decode(ctx, bytes.NewReader(data), nil, func(*wire.Batch) error { return nil })
	if err != context.Canceled {
		t.Errorf("err %v, want context.Canceled", err)
	}
}

// NEW_PC carries 46 (gfx10/11) or 55 (gfx12, over the 64-bit boundary of
// the 72-bit token) bits of dword address.
func TestRDNANewPCWidth(t *testing.T) {
	for _, tc := range []struct {
		gen, version int
		dest         uint64
	}{
		{11, 3, 1<<47 + 0x1000},
		{12, 4, 1<<55 + 1<<50 + 0x1000},
	} {
		data := newRB(tc.gen).header(tc.version, 0, 0, 0, 0, 0, 0).pgm(0, 0, 0x1000).
			at(100).waveStart(0, 0, 0, 0, 0, 0, 1).
			at(104).inst(0, codeJump).at(106).newPC(0, tc.dest).
			at(110).valu(0).at(112).waveEnd(0, 0, 0, 0).pad()
		isa := newTable(0, "0x1000 4 s_setpc_b64 s[0:1]", "0x1004 4 s_endpgm")
		isa.m[wire.PC{Address: tc.dest}] = tableEntry{"v_add_f32_e32 v1, v0, v0", 4}
		isa.m[wire.PC{Address: tc.dest + 4}] = tableEntry{"s_endpgm", 4}
		got, err := decodeAll(t, data, isa)
		if err != nil {
			t.Fatal(err)
		}
		var pcs []uint64
		for _, b := range got {
			for _, w := range b.Waves {
				for _, in := range w.Instructions {
					pcs = append(pcs, in.PC.Address)
				}
			}
		}
		if want := []uint64{0x1000, tc.dest, tc.dest + 4}; !reflect.DeepEqual(pcs, want) {
			t.Errorf("gfx%d: PCs %#x, want %#x", tc.gen, pcs, want)
		}
	}
}

// The w64 (wave64) bit of INST and VALU_INST: ignored by the newest source,
// doubling the cycles under 0.1.6; other-SIMD cycles stay (sqtt-format.md
// A.4 R6, W1).
func TestRDNAWave64(t *testing.T) {
	for _, gen := range []int{11, 12} {
		w64 := uint64(1) << 6
		inst := func(r *rb, code int) *rb {
			if gen == 11 {
				return r.tok(0b010, 20, 4, 6, 1<<7|uint64(code)<<13)
			}
			return r.tok(0b010, 20, 3, 5, w64|uint64(code)<<12)
		}
		r := newRB(gen).header(gen-8, 0, 0, 0, 0, 0, 0).pgm(0, 0, 0x1000).at(100).waveStart(0, 0, 0, 0, 0, 0, 1)
		inst(r.at(104), 11)
		inst(r.at(110), 80)
		r.at(115).tok(0b011, 12, 3, 5, w64)
		data := r.at(120).waveEnd(0, 0, 0, 0).pad()
		isa := newTable(0, "0x1000 4 v_exp_f32 v0, v1", "0x1004 4 v_add_f32_e32 v1, v0, v0", "0x1008 4 s_endpgm")
		got, err := decodeAll(t, data, isa)
		if err != nil {
			t.Fatal(err)
		}
		occ := occB(rdnaOccStart(0x1000, 0, 100, 0, 0, 0, 0, 0), rdnaOccEnd(0x1000, 0, 120, 0, 0, 0))
		other := wire.Batch{Type: wire.TypeInstOtherSIMD, OtherSIMD: []wire.OtherSIMD{{Size: 24, Time: 110, Cycles: 1, Category: wire.CatLDS}}}
		// Newest: the wave64 bit is parsed and ignored (2.3.6).
		check(t, got, []wire.Batch{gfxip(uint64(gen)), occ, other,
			waveB(wire.Wave{BeginTime: 100, EndTime: 120,
				Instructions: []wire.Instruction{
					in(wire.CatVALU, 104, 4, 0, 0x1000, 0),
					in(wire.CatVALU, 115, 1, 0, 0x1004, 0),
					in(wire.CatMessage, 116, 4, 0, 0x1008, 0),
				},
				Timeline: tl(sIdle, 4, sExec, 16)}),
		})
		// 0.1.6 doubles the cycles of a wave64 instruction (and emits the
		// wave at its WAVE_END).
		w := waveB(wire.Wave{BeginTime: 100, EndTime: 120,
			Instructions: []wire.Instruction{
				in(wire.CatVALU, 104, 8, 0, 0x1000, 0),
				in(wire.CatVALU, 115, 2, 0, 0x1004, 0),
				in(wire.CatMessage, 117, 3, 0, 0x1008, 0),
			},
			Timeline: tl(sIdle, 4, sExec, 16)})
		w.Waves[0].Size = 0
		got, err = decodeWith(&Decoder{Compat: Lib016}, data, provider(isa), cloneAll)
		if err != nil {
			t.Fatal(err)
		}
		check(t, got, []wire.Batch{gfxip(uint64(gen)), w, occ, other})
	}
}

// Realtime samples not newer than the previous pair are averaged into it:
// on gfx12 away from the end of the buffer, on gfx10/gfx11 only at its
// end (the reader's tail), as AMD's 0.1.6 library does.
func TestRDNARealtimeAveraging(t *testing.T) {
	pairs := [][2]int64{{50, 100}, {50, 200}, {60, 150}, {70, 300}}
	averaged := []wire.Realtime{{ShaderClock: 55, RealtimeClock: 150}, {ShaderClock: 70, RealtimeClock: 300}}
	apart := []wire.Realtime{{ShaderClock: 50, RealtimeClock: 100}, {ShaderClock: 50, RealtimeClock: 200},
		{ShaderClock: 60, RealtimeClock: 150}, {ShaderClock: 70, RealtimeClock: 300}}
	// gfx11, k 0: the tokens before the last two start more than 128 bits
	// before the end; (60, 150) is averaged into (50, 200).
	tail := []wire.Realtime{{ShaderClock: 50, RealtimeClock: 100}, {ShaderClock: 55, RealtimeClock: 175},
		{ShaderClock: 70, RealtimeClock: 300}}
	for _, tc := range []struct {
		gen, k int
		want   []wire.Realtime
	}{
		{12, 40, averaged}, {11, 40, apart}, {10, 40, apart},
		// k 0: the samples after a token starting 128 bits or less before
		// the end are in the tail: the last two on gfx11 (48-bit
		// TIMESTAMPs), only the last one on gfx10 and gfx12 (64 bits).
		{11, 0, tail}, {10, 0, apart},
		{12, 0, []wire.Realtime{{ShaderClock: 55, RealtimeClock: 150}, {ShaderClock: 70, RealtimeClock: 300}}},
	} {
		got, err := decodeAll(t, rtTail(tc.gen, tc.k, pairs), nil)
		if err != nil {
			t.Fatal(err)
		}
		check(t, got, []wire.Batch{gfxip(uint64(tc.gen)), rtB(tc.want...)})
	}
}

// Occupancy batches of a double-buffered gfx12 capture: flushed after a
// wave start once 65536 records are pending, as the library does (2.3.6
// WAVE_START step 5; sqtt-format.md A.4 R8). Without double buffering the
// pool is bounded by PoolLimit (batches of 65536 by default).
func TestRDNADoubleBufferFlush(t *testing.T) {
	for _, tc := range []struct {
		double bool
		want   []int
	}{{true, []int{65537, 19}}, {false, []int{65536, 20}}} {
		var extra uint64
		if tc.double {
			extra = 1 << 43
		}
		r := newRB(12).header(4, 0, 0, 0, 0, 0, extra)
		for i := 0; i < 32768+10; i++ {
			r.waveStart(0, 0, 1, 0, 0, 0, 1).waveEnd(0, 0, 1, 0)
		}
		var sizes []int
		err := New().Decode(context.Background(), bytes.NewReader(r.pad()), nil, func(b *wire.Batch) error {
			if b.Type == wire.TypeOccupancy {
				sizes = append(sizes, len(b.Occupancy))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(sizes, tc.want) {
			t.Errorf("double buffer %v: occupancy batches %v, want %v", tc.double, sizes, tc.want)
		}
	}
}
