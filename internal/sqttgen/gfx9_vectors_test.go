package sqttgen

import (
	"bytes"
	"testing"

	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

// b1ISA is the ISA table of B.1 (addresses relative to base, code object id).
func b1Index(base, id uint64) *wire.Index {
	rows := []struct {
		a    uint64
		size uint64
		text string
	}{
		{0x0, 8, "s_load_dword s0, s[0:1], 0x0"},
		{0x8, 4, "s_waitcnt lgkmcnt(0)"},
		{0xc, 4, "v_mov_b32_e32 v0, s0"},
		{0x10, 4, "s_cbranch_scc0 65534"},
		{0x14, 8, "global_store_dword v[0:1], v0, off"},
		{0x1c, 4, "s_endpgm"},
	}
	ix := &wire.Index{}
	for _, r := range rows {
		ix.Rows = append(ix.Rows, wire.Row{CodeObj: id, Vaddr: base + r.a, Size: r.size, Text: r.text})
	}
	return ix
}

// writeB1Body writes the B.1 token stream after its register writes; rt
// adds B.2's four USERDATA3 writes after the IMMED at 208.
func writeB1Body(e *enc, pc func(uint64) wire.PC, rt bool) {
	e.regCS(0, 1, 0, regPgmLo, 0x10)
	e.regCS(0, 1, 0, regPgmHi, 0)
	e.misc(25, miscTime)
	e.waveStart(0, 0, 0, 0, 0, 1, 0, 1, 0)
	e.waveStart(0, 0, 1, 2, 3, 1, 0, 1, 0)
	e.misc(5, miscTime)
	e.issue1(0, 0, 0, issueInst, pc(0x0))
	e.misc(1, miscTime)
	e.inst(0, 0, 0, instSMEMRd)
	e.misc(2, miscTime)
	e.issue1(0, 0, 0, issueImmed, pc(0x8))
	e.misc(3, miscTime)
	e.issue1(0, 0, 0, issueInst, pc(0xc))
	e.inst(1, 0, 0, instVALU32)
	e.issue1(1, 0, 0, issueInst, pc(0x10))
	e.inst(1, 0, 0, instJump)
	e.issue1(1, 0, 0, issueStall, wire.PC{})
	e.misc(2, miscTime)
	e.issue1(0, 0, 0, issueInst, pc(0xc))
	e.inst(1, 0, 0, instVALU32)
	e.issue1(1, 0, 0, issueInst, pc(0x10))
	e.inst(1, 0, 0, instNext)
	e.issue1(1, 0, 0, issueInst, pc(0x14))
	e.misc(4, miscTime)
	e.inst(0, 0, 0, instFLATWr)
	e.shaderData(1, 0, 0, 0, 0, 0xabcd)
	e.issue1(1, 0, 0, issueImmed, pc(0x1c))
	if rt {
		e.reg(0, 1, 0, regUserData3, 0x5)
		e.reg(0, 1, 0, regUserData3, 0x10)
		e.reg(0, 1, 0, regUserData3, 0x2)
		e.reg(0, 1, 0, regUserData3, 0x20)
	}
	e.misc(3, miscTime)
	e.waveEnd(0, 0, 0, 0, 0)
	e.perf(1, 0, 0, [4]uint16{1, 2, 3, 4})
	e.waveEnd(1, 0, 1, 2, 3)
	for i := 0; i < 4; i++ {
		e.misc(0, miscTime)
	}
}

func b1Header() Header { return Header{Version2: 5, SIMDMask: 0xF} }

// b1Want lists the records of B.1 as the specification states them
// (newest), with PCs made by pc.
func b1Want(pc func(uint64) wire.PC) []wire.Batch {
	in := func(c wire.InstCategory, t int64, d int32, s uint32, a uint64) wire.Instruction {
		return wire.Instruction{Category: c, Time: t, Duration: d, Stall: s, PC: pc(a)}
	}
	st := func(s wire.WaveStateType, d int32) wire.WaveState { return wire.WaveState{Type: s, Duration: d} }
	wave := wire.Wave{CU: 0, SIMD: 0, WaveID: 0, Contexts: 0, Dispatcher: 0x10, WorkgroupID: 1, Size: 64,
		BeginTime: 100, EndTime: 224,
		Instructions: []wire.Instruction{
			in(wire.CatSMEM, 120, 4, 0, 0x0), in(wire.CatImmed, 124, 12, 12, 0x8),
			in(wire.CatVALU, 144, 4, 0, 0xc), in(wire.CatJump, 152, 4, 0, 0x10),
			in(wire.CatVALU, 160, 12, 8, 0xc), in(wire.CatNext, 176, 4, 0, 0x10),
			in(wire.CatFLAT, 184, 20, 0, 0x14), in(wire.CatImmed, 204, 8, 8, 0x1c),
		},
		Timeline: []wire.WaveState{st(wire.StateIdle, 20), st(wire.StateExec, 4), st(wire.StateWait, 12),
			st(wire.StateExec, 24), st(wire.StateStall, 8), st(wire.StateExec, 36), st(wire.StateWait, 8),
			st(wire.StateExec, 12)},
	}
	occ := func(a uint64, t uint64, cu, simd, wv uint8, start bool) wire.Occupancy {
		o := wire.Occupancy{PC: pc(a), Time: t, CU: cu, SIMD: simd, WaveID: wv, Start: start, IsExt: true}
		if start {
			o.MEID = 1
		}
		return o
	}
	return []wire.Batch{
		{Type: wire.TypeGFXIP, GFXIP: 9},
		{Type: wire.TypeWave, Waves: []wire.Wave{wave}},
		{Type: wire.TypeOccupancy, Occupancy: []wire.Occupancy{
			occ(0, 100, 0, 0, 0, true), occ(0, 100, 1, 2, 3, true),
			occ(0, 220, 0, 0, 0, false), occ(0, 228, 1, 2, 3, false)}},
		{Type: wire.TypeShaderData, ShaderData: []wire.ShaderData{{Time: 204, Value: 0xabcd}}},
		{Type: wire.TypePerfEvent, PerfEvents: []wire.PerfEvent{{Time: 224, Events: [4]uint16{1, 2, 3, 4}}}},
	}
}

// collect returns a model that stitches with the ISA of ix and the list
// its records go to.
func collect(ix *wire.Index) (*model, *[]wire.Batch) {
	var got []wire.Batch
	m := newModel(func(b *wire.Batch) { got = append(got, b.Clone()) })
	m.isa = isa.NewTable(ix).ISA
	return m, &got
}

func TestVectorB1(t *testing.T) {
	m, got := collect(b1Index(0x1000, 0))
	var buf bytes.Buffer
	e := newEnc(&buf, m)
	e.header(b1Header())
	raw := func(a uint64) wire.PC { return wire.PC{Address: 0x1000 + a} }
	writeB1Body(e, raw, false)
	if err := e.end(); err != nil {
		t.Fatal(err)
	}
	if want := testutil.Unhex(t, testutil.VectorB1); !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("bytes differ from B.1:\n got %x\nwant %x", buf.Bytes(), want)
	}
	if d := Diff(b1Want(raw), *got); d != "" {
		t.Fatalf("records differ from B.1: %s", d)
	}
}

func TestVectorB2(t *testing.T) {
	m, got := collect(b1Index(0, 7))
	var buf bytes.Buffer
	e := newEnc(&buf, m)
	e.header(b1Header())
	for _, v := range []uint32{0x434F5200, 0x186A0006, 0x204, 0x1000, 0x304, 0, 0x104, 0x100, 0x004, 0x1E} {
		e.reg(0, 1, 0, regUserData2, v)
	}
	co := func(a uint64) wire.PC { return wire.PC{Address: a, CodeObjectID: 7} }
	writeB1Body(e, co, true)
	if err := e.end(); err != nil {
		t.Fatal(err)
	}
	if want := testutil.Unhex(t, testutil.VectorB2); !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("bytes differ from B.2:\n got %x\nwant %x", buf.Bytes(), want)
	}
	b1 := b1Want(co)
	want := []wire.Batch{b1[0],
		{Type: wire.TypeEvent, Events: []wire.Event{{Size: 40, Time: 0, Type: wire.EventCodeObjectLoad,
			MEID: 1, PipeID: 0, Flags: 1, Payload: 7}}},
		b1[1], b1[2],
		{Type: wire.TypeRealtime, Realtime: []wire.Realtime{{ShaderClock: 208, RealtimeClock: 0x200000020}}},
		b1[3],
		{Type: wire.TypeRTFrequency, RTFrequency: 100000000},
		b1[4],
	}
	if d := Diff(want, *got); d != "" {
		t.Fatalf("records differ from B.2: %s", d)
	}
}

// TestVectorB1Legacy checks the 0.1.6 values B.1 lists: the wave ends at
// 220 and its last timeline segment is IDLE 8.
func TestVectorB1Legacy(t *testing.T) {
	m, got := collect(b1Index(0x1000, 0))
	m.v016 = true
	e := newEnc(nil, m)
	e.header(b1Header())
	writeB1Body(e, func(uint64) wire.PC { return wire.PC{} }, false)
	e.end()
	want := b1Want(func(a uint64) wire.PC { return wire.PC{Address: 0x1000 + a} })
	w := &want[1].Waves[0]
	w.EndTime = 220
	w.Timeline[len(w.Timeline)-1] = wire.WaveState{Type: wire.StateIdle, Duration: 8}
	if d := Diff(Normalize016(want), Normalize016(*got)); d != "" {
		t.Fatalf("records differ from B.1 (0.1.6): %s", d)
	}
}
