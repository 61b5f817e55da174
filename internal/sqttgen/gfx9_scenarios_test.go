package sqttgen

import (
	"bytes"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

// The gfx9 scenarios of spec appendix A.2, written with the token encoder;
// each checks that the model's records state what the appendix says. The
// round-trip test decodes the same traces with the native decoder.

type scenario struct {
	name  string
	ix    *wire.Index
	build func(e *enc)
	check func(t *testing.T, want []wire.Batch)
}

func rawIndex(rows ...row) *wire.Index { return handIndex(0, rows) }

// coIndex is an index of code object id loaded at 0x1000 (offsets).
func coIndex(id uint64, rows ...row) *wire.Index { return handIndex(id, rows) }

// loadAt writes the '\0ROC' activation and a code-object load of
// [0x1000, 0x1100) with legacy id.
func loadAt(e *enc, id uint32) {
	for _, v := range []uint32{rocMagic, 0x204, 0x1000, 0x304, 0, 0x104, 0x100, 0x004, 0x2 | id<<2} {
		e.reg(0, 1, 0, regUserData2, v)
	}
}

// startWave writes the PGM registers for 0x1000 and a wave start at 100 on
// CU 0, SIMD 0, slot 0.
func startWave(e *enc) {
	e.regCS(0, 1, 0, regPgmLo, 0x10)
	e.regCS(0, 1, 0, regPgmHi, 0)
	e.waveStart(e.at(100), 0, 0, 0, 0, 1, 0, 1, 0)
}

// in issues one instruction of INST type typ: ISSUE at t, INST at tn.
func in(e *enc, t, tn int64, typ uint64) {
	e.issue1(e.at(t), 0, 0, issueInst, wire.PC{})
	e.inst(e.at(tn), 0, 0, typ)
}

func immedAt(e *enc, t int64) { e.issue1(e.at(t), 0, 0, issueImmed, wire.PC{}) }

func batchesOf(want []wire.Batch, typ wire.RecordType) []*wire.Batch {
	var out []*wire.Batch
	for i := range want {
		if want[i].Type == typ {
			out = append(out, &want[i])
		}
	}
	return out
}

func onlyWave(t *testing.T, want []wire.Batch) *wire.Wave {
	t.Helper()
	ws := batchesOf(want, wire.TypeWave)
	if len(ws) != 1 || len(ws[0].Waves) != 1 {
		t.Fatalf("want exactly one wave, have %d batches", len(ws))
	}
	return &ws[0].Waves[0]
}

func pcsOf(w *wire.Wave) []wire.PC {
	var out []wire.PC
	for _, in := range w.Instructions {
		out = append(out, in.PC)
	}
	return out
}

var scenarios = []scenario{
	{
		name: "state after IMMED",
		ix:   b1Index(0x1000, 0),
		build: func(e *enc) {
			startWave(e)
			in(e, 120, 120, instSMEMRd)
			immedAt(e, 128)
			in(e, 140, 140, instVALU32)
			in(e, 144, 144, instNext)
			in(e, 148, 148, instFLATWr)
			immedAt(e, 156)
			e.waveEnd(e.at(164), 0, 0, 0, 0)
		},
		check: func(t *testing.T, want []wire.Batch) {
			w := onlyWave(t, want)
			tl := w.Timeline
			if len(tl) < 4 || tl[2].Type != wire.StateWait || tl[3].Type != wire.StateExec {
				t.Fatalf("timeline after the IMMED: %v, want WAIT then EXEC", tl)
			}
			if in := w.Instructions[1]; in.Category != wire.CatImmed || in.Time != 124 || in.Duration != 8 || in.Stall != 8 {
				t.Fatalf("IMMED %+v, want time 124 duration 8 stall 8", in)
			}
		},
	},
	{
		name: "packet loss and missing wave end",
		ix:   b1Index(0x1000, 0),
		build: func(e *enc) {
			startWave(e)
			in(e, 120, 124, instSMEMRd)
			e.at(140)
			e.misc(1, miscPacketLost)
		},
		check: func(t *testing.T, want []wire.Batch) {
			var types []wire.RecordType
			for _, b := range want {
				types = append(types, b.Type)
			}
			wantTypes := []wire.RecordType{wire.TypeGFXIP, wire.TypeEvent, wire.TypeOccupancy, wire.TypeInfo, wire.TypeWave, wire.TypeInfo}
			if !equalTypes(types, wantTypes) {
				t.Fatalf("batch types %v, want %v", types, wantTypes)
			}
			if want[3].Info[0] != wire.InfoWaveIncomplete || want[5].Info[0] != wire.InfoDataLost {
				t.Fatalf("infos %v %v, want wave_incomplete then data_lost", want[3].Info, want[5].Info)
			}
			if ev := want[1].Events[0]; ev.Type != wire.EventPacketLoss || ev.Time != 140 {
				t.Fatalf("event %+v, want packet_loss at 140", ev)
			}
			if o := want[2].Occupancy; len(o) != 1 || !o[0].Start {
				t.Fatalf("occupancy %+v, want the start only", o)
			}
			if w := want[4].Waves[0]; w.EndTime != 128 || w.BeginTime != 100 {
				t.Fatalf("wave begin %d end %d, want 100 and 128", w.BeginTime, w.EndTime)
			}
		},
	},
	{
		name: "stitch failure",
		ix:   coIndex(5, row{0x0, 8, "s_load_dword s0, s[0:1], 0x0"}, row{0x8, 4, "s_waitcnt lgkmcnt(0)"}, row{0xc, 4, "s_endpgm"}),
		build: func(e *enc) {
			loadAt(e, 5)
			startWave(e)
			in(e, 120, 120, instSMEMRd)
			in(e, 128, 128, instSMEMRd)
			immedAt(e, 136)
			e.waveEnd(e.at(144), 0, 0, 0, 0)
		},
		check: func(t *testing.T, want []wire.Batch) {
			for i, b := range want {
				if b.Type == wire.TypeWave {
					if i == 0 || want[i-1].Type != wire.TypeInfo || want[i-1].Info[0] != wire.InfoStitchIncomplete {
						t.Fatalf("the wave is not preceded by stitch_incomplete")
					}
					pcs := pcsOf(&b.Waves[0])
					if pcs[0] != (wire.PC{Address: 0, CodeObjectID: 5}) || pcs[1] != (wire.PC{}) {
						t.Fatalf("PCs %v, want {0 5} then {0 0}", pcs)
					}
					return
				}
			}
			t.Fatal("no wave")
		},
	},
	{
		name: "s_setpc",
		ix: coIndex(5, row{0x0, 4, "s_getpc_b64 s[0:1]"}, row{0x4, 4, "s_setpc_b64 s[0:1]"},
			row{0x8, 4, "s_endpgm"}, row{0x40, 4, "v_mov_b32_e32 v0, 0"}, row{0x44, 4, "s_endpgm"}),
		build: func(e *enc) {
			loadAt(e, 5)
			startWave(e)
			in(e, 120, 120, instSALU64)
			in(e, 128, 128, instPC)
			e.instPC(0, 0, 0, 0x1040)
			in(e, 136, 136, instVALU32)
			immedAt(e, 144)
			e.waveEnd(e.at(152), 0, 0, 0, 0)
		},
		check: func(t *testing.T, want []wire.Batch) {
			pcs := pcsOf(onlyWave(t, want))
			exp := []wire.PC{{Address: 0x0, CodeObjectID: 5}, {Address: 0x4, CodeObjectID: 5},
				{Address: 0x40, CodeObjectID: 5}, {Address: 0x44, CodeObjectID: 5}}
			if len(pcs) != 4 || pcs[0] != exp[0] || pcs[1] != exp[1] || pcs[2] != exp[2] || pcs[3] != exp[3] {
				t.Fatalf("PCs %v, want %v", pcs, exp)
			}
		},
	},
	{
		name: "time reset",
		ix:   b1Index(0x1000, 0),
		build: func(e *enc) {
			startWave(e)
			e.misc(0, miscTimeReset)
			e.misc(3, miscTime)
			e.timeToken(0, 5000)
			e.issue1(1, 0, 0, issueInst, wire.PC{})
			e.inst(0, 0, 0, instSMEMRd)
			immedAt(e, 120)
			immedAt(e, 128)
			e.waveEnd(e.at(136), 0, 0, 0, 0)
		},
		check: func(t *testing.T, want []wire.Batch) {
			if in := onlyWave(t, want).Instructions[0]; in.Time != 112 {
				t.Fatalf("first issue at %d, want 112", in.Time)
			}
		},
	},
	{
		name: "barrier",
		ix:   rawIndex(row{0x1000, 4, "s_mov_b32 s0, 0"}, row{0x1004, 4, "s_barrier"}, row{0x1008, 4, "s_endpgm"}),
		build: func(e *enc) {
			startWave(e)
			in(e, 120, 120, instSALU32)
			in(e, 128, 128, instOtherMsg)
			immedAt(e, 160)
			immedAt(e, 168)
			e.waveEnd(e.at(176), 0, 0, 0, 0)
		},
		check: func(t *testing.T, want []wire.Batch) {
			w := onlyWave(t, want)
			if len(w.Instructions) != 4 || w.Instructions[1].Category != wire.CatMessage ||
				w.Instructions[1].PC.Address != 0x1004 || w.Instructions[2].PC.Address != 0x1004 ||
				w.Instructions[3].PC.Address != 0x1008 {
				t.Fatalf("instructions %+v, want MESSAGE and IMMED at 0x1004", w.Instructions)
			}
		},
	},
	{
		name: "context save and restore",
		ix: rawIndex(row{0x1000, 4, "s_mov_b32 s0, 0"}, row{0x1004, 4, "v_mov_b32_e32 v0, 0"},
			row{0x1040, 4, "v_add_u32_e32 v0, v0, v0"}, row{0x1044, 4, "s_endpgm"}),
		build: func(e *enc) {
			startWave(e)
			in(e, 120, 120, instSALU32)
			e.at(160)
			e.misc(1, miscSaveContext)
			e.waveStart(e.at(164), 0, 0, 0, 0, 1, 0, 70, 0)
			e.waveStart(e.at(200), 0, 0, 0, 0, 1, 0, 70, 0)
			e.inst(e.at(208), 0, 0, instPC)
			e.instPC(0, 0, 0, 0x1040)
			in(e, 220, 220, instVALU32)
			immedAt(e, 228)
			e.waveEnd(e.at(236), 0, 0, 0, 0)
		},
		check: func(t *testing.T, want []wire.Batch) {
			w := onlyWave(t, want)
			c := w.Instructions[1]
			if w.Contexts != 1 || c.Category != wire.CatContext || c.Time != 164 || c.Time+int64(c.Duration) != 212 {
				t.Fatalf("contexts %d, instruction %+v; want 1 and CONTEXT 164..212", w.Contexts, c)
			}
			if pcs := pcsOf(w); pcs[2].Address != 0x1040 || pcs[3].Address != 0x1044 {
				t.Fatalf("PCs %v, want the restore at 0x1040", pcs)
			}
			if o := batchesOf(want, wire.TypeOccupancy); len(o) != 1 || len(o[0].Occupancy) != 2 {
				t.Fatalf("occupancy %+v, want one start and one end", o)
			}
		},
	},
	{
		name: "XNACK replay and perf interval",
		ix: rawIndex(row{0x1000, 8, "global_load_dword v1, v[2:3], off"}, row{0x1008, 4, "v_mov_b32_e32 v0, 0"},
			row{0x100c, 4, "s_waitcnt vmcnt(0)"}, row{0x1010, 4, "s_endpgm"}),
		build: func(e *enc) {
			e.reg(0, 1, 0, regUserData2, rocMagic)
			e.reg(0, 1, 0, regUserData2, opAgentInfo|agentPerfInt<<8|64<<12)
			startWave(e)
			in(e, 120, 124, instVMEMRd)
			in(e, 132, 132, instVALU32)
			in(e, 140, 180, 21) // VMEM_RD_REPLAY
			e.perf(e.at(184), 0, 0, [4]uint16{1, 2, 3, 4})
			immedAt(e, 200)
			immedAt(e, 276)
			e.waveEnd(e.at(290-2), 0, 0, 0, 0)
			e.perf(e.at(384), 0, 0, [4]uint16{5, 6, 7, 8})
		},
		check: func(t *testing.T, want []wire.Batch) {
			if v := onlyWave(t, want).Instructions[0]; v.Category != wire.CatVMEM || v.Duration != 64 || v.Stall != 56 {
				t.Fatalf("VMEM %+v, want duration 64 stall 56", v)
			}
			p := batchesOf(want, wire.TypePerfEvent)
			if len(p) != 1 {
				t.Fatalf("%d perf batches", len(p))
			}
			var times []int64
			var zero []bool
			for _, r := range p[0].PerfEvents {
				times = append(times, r.Time)
				zero = append(zero, r.Events == [4]uint16{})
			}
			if len(times) != 4 || times[0] != 184 || times[1] != 384 || !zero[1] || times[2] != 384 || zero[2] ||
				times[3] != 448 || !zero[3] {
				t.Fatalf("perf times %v zero %v, want 184, zero 384, 384, zero 448", times, zero)
			}
		},
	},
	{
		name: "lost wave start",
		ix:   b1Index(0x1000, 0),
		build: func(e *enc) {
			e.regCS(0, 1, 0, regPgmLo, 0x10)
			e.inst(e.at(100), 1, 3, instSALU32)
		},
		check: func(t *testing.T, want []wire.Batch) {
			w := onlyWave(t, want)
			if w.BeginTime != 100 || w.SIMD != 1 || w.WaveID != 3 || len(w.Instructions) != 0 {
				t.Fatalf("wave %+v, want one beginning at 100 on simd 1 slot 3", w)
			}
			if i := batchesOf(want, wire.TypeInfo); len(i) != 1 || i[0].Info[0] != wire.InfoWaveIncomplete {
				t.Fatalf("infos %+v, want wave_incomplete", i)
			}
		},
	},
	{
		name: "one ISSUE token for two waves",
		ix:   b1Index(0x1000, 0),
		build: func(e *enc) {
			startWave(e)
			e.waveStart(0, 0, 0, 0, 1, 1, 0, 2, 0)
			st := [10]uint8{issueInst, issueInst}
			e.issue(e.at(120), 0, &st, &[10]wire.PC{})
			e.inst(0, 0, 1, instSMEMRd)
			e.inst(e.at(124), 0, 0, instSMEMRd)
			st = [10]uint8{issueImmed, issueStall}
			e.issue(e.at(132), 0, &st, &[10]wire.PC{})
			st = [10]uint8{issueNone, issueImmed}
			e.issue(e.at(140), 0, &st, &[10]wire.PC{})
			e.waveEnd(e.at(160), 0, 0, 0, 1)
			e.waveEnd(0, 0, 0, 0, 0)
		},
		check: func(t *testing.T, want []wire.Batch) {
			ws := batchesOf(want, wire.TypeWave)
			if len(ws) != 2 {
				t.Fatalf("%d waves, want 2", len(ws))
			}
			for _, b := range ws {
				w := b.Waves[0]
				if len(w.Instructions) != 2 || w.Instructions[0].Category != wire.CatSMEM ||
					w.Instructions[1].Category != wire.CatImmed || w.Instructions[1].PC.Address != 0x1008 {
					t.Fatalf("wave slot %d: %+v", w.WaveID, w.Instructions)
				}
			}
		},
	},
	{
		// Not an A.2 row: spec §2.1.3 delayed attribution of occupancy
		// records, ends included (AMD's 0.1.6 does it too).
		name: "late code object load attributes ended waves",
		ix:   coIndex(5, row{0x0, 8, "s_load_dword s0, s[0:1], 0x0"}, row{0x8, 4, "s_endpgm"}),
		build: func(e *enc) {
			e.regCS(0, 1, 0, regPgmLo, 0x10)
			e.regCS(0, 1, 0, regPgmHi, 0)
			e.waveStart(e.at(100), 0, 2, 1, 1, 1, 0, 1, 0)
			e.waveEnd(e.at(140), 0, 2, 1, 1)
			e.waveStart(e.at(160), 0, 3, 1, 1, 1, 0, 1, 0)
			e.at(200)
			loadAt(e, 5)
			e.waveEnd(e.at(240), 0, 3, 1, 1)
		},
		check: func(t *testing.T, want []wire.Batch) {
			o := batchesOf(want, wire.TypeOccupancy)
			if len(o) != 1 || len(o[0].Occupancy) != 4 {
				t.Fatalf("occupancy %+v, want 4 records", o)
			}
			for _, r := range o[0].Occupancy {
				if r.PC != (wire.PC{Address: 0, CodeObjectID: 5}) {
					t.Fatalf("occupancy %+v: PC not attributed to code object 5", r)
				}
			}
		},
	},
	{
		name: "end without start",
		ix:   b1Index(0x1000, 0),
		build: func(e *enc) {
			e.waveEnd(e.at(100), 0, 2, 1, 1)
			e.waveEnd(e.at(104), 0, 0, 1, 1)
		},
		check: func(t *testing.T, want []wire.Batch) {
			o := batchesOf(want, wire.TypeOccupancy)
			if len(o) != 1 || len(o[0].Occupancy) != 2 {
				t.Fatalf("occupancy %+v, want a synthetic start and end", o)
			}
			s, e := o[0].Occupancy[0], o[0].Occupancy[1]
			if !s.Start || e.Start || s.Time != 0 || e.Time != 0 || s.CU != 2 || e.CU != 2 || s.PC != (wire.PC{}) {
				t.Fatalf("occupancy %+v, want START and END at time 0 on CU 2", o[0].Occupancy)
			}
			if len(batchesOf(want, wire.TypeWave)) != 0 {
				t.Fatal("a wave from a WAVE_END alone")
			}
		},
	},
}

func equalTypes(a, b []wire.RecordType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// buildScenario returns the trace and the model's records.
func buildScenario(s *scenario, v016 bool) ([]byte, []wire.Batch) {
	m, got := collect(s.ix)
	m.v016 = v016
	var buf bytes.Buffer
	e := newEnc(&buf, m)
	e.header(Header{Version2: 5, SIMDMask: 0xF})
	s.build(e)
	for i := 0; i < 4; i++ {
		e.misc(0, miscTime)
	}
	e.end()
	return buf.Bytes(), *got
}

func TestScenariosA2(t *testing.T) {
	for i := range scenarios {
		s := &scenarios[i]
		t.Run(s.name, func(t *testing.T) {
			_, want := buildScenario(s, false)
			s.check(t, want)
		})
	}
}

// scenarios016 are traces of the 0.1.6 OTHER_MSG rules (spec A.4 items
// 8.3 and 8.8: the message's entry is deleted at its INST token, its time
// kept); each check states what the 0.1.6 model gives. The native decoder
// (Compat016) decodes them in TestScenarios016Native, AMD's library in
// TestDifferentialROCm.
var scenarios016 = []scenario{
	{
		name: "message mid-wave after a stall",
		ix:   rawIndex(row{0x1000, 4, "v_mov_b32 v0, 0"}, row{0x1004, 4, "s_mov_b32 s0, 0"}, row{0x1008, 4, "s_endpgm"}),
		build: func(e *enc) {
			startWave(e)
			in(e, 120, 124, instVALU32)
			e.issue1(e.at(128), 0, 0, issueStall, wire.PC{})
			in(e, 136, 136, instOtherMsg)
			in(e, 140, 144, instSALU32)
			e.waveEnd(e.at(160), 0, 0, 0, 0)
		},
		check: func(t *testing.T, want []wire.Batch) {
			// The SALU takes the stall from 128 (not cut at the message),
			// and the message comes back after it, from its end (144) to
			// 4 cycles past its issue (140): -4 cycles.
			w := onlyWave(t, want)
			if len(w.Instructions) != 3 || w.Instructions[1].Time != 128 || w.Instructions[1].Stall != 12 ||
				w.Instructions[2].Category != wire.CatMessage || w.Instructions[2].Time != 144 || w.Instructions[2].Duration != -4 {
				t.Fatalf("instructions %+v, want SALU {128, 16, stall 12} and MESSAGE {144, -4}", w.Instructions)
			}
		},
	},
	{
		name: "message deletion shifts the issue indices",
		ix:   rawIndex(row{0x1000, 4, "v_mov_b32 v0, 0"}, row{0x1004, 4, "s_mov_b32 s0, 0"}),
		build: func(e *enc) {
			startWave(e)
			for _, t := range []int64{120, 124, 140, 144} {
				e.issue1(e.at(t), 0, 0, issueInst, wire.PC{})
			}
			e.inst(e.at(160), 0, 0, instVALU32)
			e.inst(0, 0, 0, instOtherMsg)
			e.inst(e.at(164), 0, 0, instSALU32)
			e.waveEnd(e.at(200), 0, 0, 0, 0)
		},
		check: func(t *testing.T, want []wire.Batch) {
			// The SALU resolves the entry issued at 144; the one issued
			// at 140 stays unresolved.
			w := onlyWave(t, want)
			if len(w.Instructions) != 3 || w.Instructions[1].Category != wire.CatNone || w.Instructions[2].Time != 144 {
				t.Fatalf("instructions %+v, want VALU, the entry of 140 unresolved (NONE, spec A.4 item 8.2), SALU at 144", w.Instructions)
			}
		},
	},
	{
		name: "closing message after a stall issued after it",
		ix:   rawIndex(row{0x1000, 4, "v_mov_b32 v0, 0"}, row{0x1004, 4, "s_endpgm"}),
		build: func(e *enc) {
			startWave(e)
			in(e, 120, 124, instVALU32)
			e.issue1(e.at(128), 0, 0, issueStall, wire.PC{})
			e.issue1(e.at(136), 0, 0, issueInst, wire.PC{})
			e.issue1(e.at(140), 0, 0, issueStall, wire.PC{})
			e.inst(e.at(144), 0, 0, instOtherMsg)
			e.waveEnd(e.at(148), 0, 0, 0, 0)
		},
		check: func(t *testing.T, want []wire.Batch) {
			// The last stall (140) began after the message issued: no
			// stall; the timeline's last segment (EXEC 136..140) loses
			// 136 - 124 cycles.
			w := onlyWave(t, want)
			if len(w.Instructions) != 2 || w.Instructions[1].Time != 124 || w.Instructions[1].Duration != 16 || w.Instructions[1].Stall != 0 {
				t.Fatalf("instructions %+v, want MESSAGE {124, 16, stall 0}", w.Instructions)
			}
			if n := len(w.Timeline); n < 3 || w.Timeline[n-3].Duration != -8 {
				t.Fatalf("timeline %+v, want EXEC -8, WAIT 16, IDLE 8 at the end", w.Timeline)
			}
		},
	},
}

func TestScenarios016(t *testing.T) {
	for i := range scenarios016 {
		s := &scenarios016[i]
		t.Run(s.name, func(t *testing.T) {
			_, want := buildScenario(s, true)
			s.check(t, want)
		})
	}
}
