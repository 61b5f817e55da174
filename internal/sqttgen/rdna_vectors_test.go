package sqttgen

import (
	"bytes"
	"testing"

	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

func rdVectorIndex(texts ...string) *wire.Index {
	ix := &wire.Index{}
	a := uint64(0x2000)
	for i, t := range texts {
		size := uint64(4)
		if i == 0 {
			size = 8
		}
		ix.Rows = append(ix.Rows, wire.Row{Vaddr: a, Size: size, Text: t})
		a += size
	}
	return ix
}

// rdVector writes the shared start of B.3 and B.4 (HEADER, PGM registers,
// clock to 100, WAVE_START) with a model collecting the records.
func rdVector(t *testing.T, gen int, version uint8, ix *wire.Index, compat bool) (*rdnaEncoder, *bytes.Buffer, *[]wire.Batch) {
	t.Helper()
	var got []wire.Batch
	m := newRDNAModel(gen, func(b *wire.Batch) { got = append(got, b.Clone()) })
	m.isa = isa.NewTable(ix).ISA
	m.checkWalk = true
	m.compat016 = compat
	m.fail = func(err error) { t.Error(err) }
	var buf bytes.Buffer
	e := newRDNAEncoder(gen, &buf, m, nil)
	e.header(RDNAHeader{Version: version})
	e.reg(0, 0, 0, true, regPgmLo, 0x20)
	e.reg(0, 0, 0, true, regPgmHi, 0)
	for i := 0; i < 5; i++ {
		e.timeTok(19)
	}
	e.timeTok(5)
	e.waveStart(100, false, 0, 0, 0, 0, 0, 0, 1, false, 0)
	return e, &buf, &got
}

func checkVectorBytes(t *testing.T, got []byte, hex string) {
	t.Helper()
	want := testutil.Unhex(t, hex)
	n := len(bytes.TrimRight(want, "\x00"))
	if len(got) < n || !bytes.Equal(got[:n], want[:n]) {
		t.Fatalf("bytes differ from the vector:\n got %x\nwant %x", got, want)
	}
	if len(bytes.TrimRight(got, "\x00")) != n || len(got)%32 != 0 || len(got)-n < 8 {
		t.Fatalf("trace of %d bytes: want the vector's %d data bytes, then zero padding (>= 8 bytes) to a 32-byte multiple", len(got), n)
	}
}

func rdIns(c wire.InstCategory, tm int64, d int32, s uint32, a uint64) wire.Instruction {
	return wire.Instruction{Category: c, Time: tm, Duration: d, Stall: s, PC: wire.PC{Address: a}}
}

func rdStates(v ...int32) []wire.WaveState {
	var out []wire.WaveState
	for i := 0; i < len(v); i += 2 {
		out = append(out, wire.WaveState{Type: wire.WaveStateType(v[i]), Duration: v[i+1]})
	}
	return out
}

const (
	sIdle  = int32(wire.StateIdle)
	sExec  = int32(wire.StateExec)
	sWait  = int32(wire.StateWait)
	sStall = int32(wire.StateStall)
)

func rdVectorWant(gfxip uint64, end int64, ins []wire.Instruction, tl []wire.WaveState) []wire.Batch {
	return []wire.Batch{
		{Type: wire.TypeGFXIP, GFXIP: gfxip},
		{Type: wire.TypeOccupancy, Occupancy: []wire.Occupancy{
			{PC: wire.PC{Address: 0x2000}, Time: 100, Start: true},
			{PC: wire.PC{Address: 0x2000}, Time: uint64(end)},
		}},
		{Type: wire.TypeWave, Waves: []wire.Wave{{WorkgroupID: 0, Size: 64, BeginTime: 100, EndTime: end,
			Instructions: ins, Timeline: tl}}},
	}
}

// TestVectorB3 writes Appendix B.3 with the RDNA encoder and checks the
// bytes and the model's records against the ones the specification lists
// (newest: occupancy before the wave; 0.1.6: the wave first).
func TestVectorB3(t *testing.T) {
	for _, compat := range []bool{false, true} {
		ix := rdVectorIndex("s_load_b32 s0, s[0:1], 0x0", "v_mov_b32_e32 v0, s0", "v_add_f32_e32 v1, v0, v0",
			"s_nop 0", "s_endpgm")
		e, buf, got := rdVector(t, 12, 4, ix, compat)
		pc := func(a uint64) wire.PC { return wire.PC{Address: a} }
		e.inst(104, 0, 1, pc(0x2000))
		e.valu(107, 0, pc(0x2008))
		e.masked(rtReady, 110, 0, wire.PC{})
		e.inst(115, 0, 10, pc(0x200c))
		e.immOne(120, 0, pc(0x2010))
		e.waveEnd(127, 0, 0, 0, 0, pc(0x2014))
		if err := e.end(); err != nil {
			t.Fatal(err)
		}
		checkVectorBytes(t, buf.Bytes(), testutil.VectorB3)
		want := rdVectorWant(12, 127, []wire.Instruction{
			rdIns(wire.CatSMEM, 104, 1, 0, 0x2000), rdIns(wire.CatVALU, 107, 1, 0, 0x2008),
			rdIns(wire.CatVALU, 110, 6, 5, 0x200c), rdIns(wire.CatImmed, 116, 5, 4, 0x2010),
			rdIns(wire.CatMessage, 121, 6, 0, 0x2014),
		}, rdStates(sIdle, 4, sExec, 6, sStall, 5, sExec, 1, sWait, 5, sExec, 6))
		if compat {
			want[1], want[2] = want[2], want[1]
		}
		if d := Diff(want, *got); d != "" {
			t.Fatalf("compat016 %v: records differ from B.3: %s", compat, d)
		}
	}
}

// TestVectorB4 is Appendix B.4 (gfx11): WAVE_READY taken one cycle early
// and the newest barrier extension (the barrier IMMED becomes a MESSAGE
// that lasts until the wave's next token).
func TestVectorB4(t *testing.T) {
	for _, compat := range []bool{false, true} {
		ix := rdVectorIndex("s_load_b32 s0, s[0:1], 0x0", "v_mov_b32_e32 v0, s0", "v_add_f32_e32 v1, v0, v0",
			"s_barrier", "v_add_f32_e32 v2, v0, v0", "s_endpgm")
		e, buf, got := rdVector(t, 11, 3, ix, compat)
		pc := func(a uint64) wire.PC { return wire.PC{Address: a} }
		e.inst(104, 0, 1, pc(0x2000))
		e.valu(107, 0, pc(0x2008))
		e.masked(rtReady, 110, 0, wire.PC{})
		e.inst(115, 0, 10, pc(0x200c))
		e.inst(120, 0, 19, pc(0x2010))
		e.valu(127, 0, pc(0x2014))
		e.waveEnd(134, 0, 0, 0, 0, pc(0x2018))
		if err := e.end(); err != nil {
			t.Fatal(err)
		}
		checkVectorBytes(t, buf.Bytes(), testutil.VectorB4)
		want := rdVectorWant(11, 134, []wire.Instruction{
			rdIns(wire.CatSMEM, 104, 1, 0, 0x2000), rdIns(wire.CatVALU, 107, 1, 0, 0x2008),
			rdIns(wire.CatVALU, 109, 7, 6, 0x200c), rdIns(wire.CatMessage, 116, 11, 4, 0x2010),
			rdIns(wire.CatVALU, 127, 1, 0, 0x2014), rdIns(wire.CatMessage, 128, 6, 0, 0x2018),
		}, rdStates(sIdle, 4, sExec, 5, sStall, 6, sExec, 1, sWait, 12, sExec, 6))
		if compat {
			// The 0.1.6 output B.4 lists: no barrier extension, the
			// wave before the occupancy batch.
			want = rdVectorWant(11, 134, []wire.Instruction{
				rdIns(wire.CatSMEM, 104, 1, 0, 0x2000), rdIns(wire.CatVALU, 107, 1, 0, 0x2008),
				rdIns(wire.CatVALU, 109, 7, 6, 0x200c), rdIns(wire.CatImmed, 116, 5, 4, 0x2010),
				rdIns(wire.CatVALU, 127, 1, 0, 0x2014), rdIns(wire.CatMessage, 128, 6, 0, 0x2018),
			}, rdStates(sIdle, 4, sExec, 5, sStall, 6, sExec, 1, sWait, 5, sExec, 13))
			want[1], want[2] = want[2], want[1]
		}
		if d := Diff(want, *got); d != "" {
			t.Fatalf("compat016 %v: records differ from B.4: %s", compat, d)
		}
	}
}
