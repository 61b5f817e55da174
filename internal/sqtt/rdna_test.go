package sqtt

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

var b3Rows = []string{
	"0x2000 8 s_load_b32 s0, s[0:1], 0x0",
	"0x2008 4 v_mov_b32_e32 v0, s0",
	"0x200c 4 v_add_f32_e32 v1, v0, v0",
	"0x2010 4 s_nop 0",
	"0x2014 4 s_endpgm",
}

var b4Rows = []string{
	"0x2000 8 s_load_b32 s0, s[0:1], 0x0",
	"0x2008 4 v_mov_b32_e32 v0, s0",
	"0x200c 4 v_add_f32_e32 v1, v0, v0",
	"0x2010 4 s_barrier",
	"0x2014 4 v_add_f32_e32 v2, v0, v0",
	"0x2018 4 s_endpgm",
}

// rdnaOccStart and rdnaOccEnd build RDNA occupancy records (is_ext 0).
func rdnaOccStart(addr, coid, time uint64, cu, simd, wave, me, pipe uint8) wire.Occupancy {
	return wire.Occupancy{PC: wire.PC{Address: addr, CodeObjectID: coid}, Time: time, CU: cu, SIMD: simd,
		WaveID: wave, Start: true, MEID: me, PipeID: pipe}
}

func rdnaOccEnd(addr, coid, time uint64, cu, simd, wave uint8) wire.Occupancy {
	return wire.Occupancy{PC: wire.PC{Address: addr, CodeObjectID: coid}, Time: time, CU: cu, SIMD: simd,
		WaveID: wave}
}

func TestVectorB3(t *testing.T) {
	isa := newTable(0, b3Rows...)
	got, err := decodeAll(t, testutil.Unhex(t, testutil.VectorB3), isa)
	if err != nil {
		t.Fatal(err)
	}
	want := []wire.Batch{
		gfxip(12),
		occB(rdnaOccStart(0x2000, 0, 100, 0, 0, 0, 0, 0), rdnaOccEnd(0x2000, 0, 127, 0, 0, 0)),
		waveB(wire.Wave{BeginTime: 100, EndTime: 127, WorkgroupID: 0,
			Instructions: []wire.Instruction{
				in(wire.CatSMEM, 104, 1, 0, 0x2000, 0),
				in(wire.CatVALU, 107, 1, 0, 0x2008, 0),
				in(wire.CatVALU, 110, 6, 5, 0x200c, 0),
				in(wire.CatImmed, 116, 5, 4, 0x2010, 0),
				in(wire.CatMessage, 121, 6, 0, 0x2014, 0),
			},
			Timeline: tl(sIdle, 4, sExec, 6, sStall, 5, sExec, 1, sWait, 5, sExec, 6),
		}),
	}
	check(t, got, want)
	var wantQ []wire.PC
	for _, a := range []uint64{0x2000, 0x2008, 0x200c, 0x2010, 0x2014, 0x2018} {
		wantQ = append(wantQ, wire.PC{Address: a})
	}
	if !reflect.DeepEqual(isa.queries, wantQ) {
		t.Errorf("ISA queries %v, want %v", isa.queries, wantQ)
	}
}

func TestVectorB4(t *testing.T) {
	got, err := decodeAll(t, testutil.Unhex(t, testutil.VectorB4), newTable(0, b4Rows...))
	if err != nil {
		t.Fatal(err)
	}
	// Newest behaviour: the barrier IMMED is extended to the next token
	// as a MESSAGE (2.3.6 bx); 0.1.6 kept IMMED 116 5 4 (A.3).
	want := []wire.Batch{
		gfxip(11),
		occB(rdnaOccStart(0x2000, 0, 100, 0, 0, 0, 0, 0), rdnaOccEnd(0x2000, 0, 134, 0, 0, 0)),
		waveB(wire.Wave{BeginTime: 100, EndTime: 134,
			Instructions: []wire.Instruction{
				in(wire.CatSMEM, 104, 1, 0, 0x2000, 0),
				in(wire.CatVALU, 107, 1, 0, 0x2008, 0),
				in(wire.CatVALU, 109, 7, 6, 0x200c, 0),
				in(wire.CatMessage, 116, 11, 4, 0x2010, 0),
				in(wire.CatVALU, 127, 1, 0, 0x2014, 0),
				in(wire.CatMessage, 128, 6, 0, 0x2018, 0),
			},
			Timeline: tl(sIdle, 4, sExec, 5, sStall, 6, sExec, 1, sWait, 12, sExec, 6),
		}),
	}
	check(t, got, want)
}

// The hand encoder reproduces the appendix streams bit for bit.
func TestRBEncodesVectors(t *testing.T) {
	for _, tc := range []struct {
		name string
		want string
		rb   *rb
	}{
		{"B.3", testutil.VectorB3, newRB(12).header(4, 0, 0, 0, 0, 0, 0).pgm(0, 0, 0x2000).
			at(95).at(100).waveStart(0, 0, 0, 0, 0, 0, 1).
			at(104).inst(0, 1).at(107).valu(0).at(110).ready(1).at(115).inst(0, 10).
			at(120).immOne(0).at(127).waveEnd(0, 0, 0, 0)},
		{"B.4", testutil.VectorB4, newRB(11).header(3, 0, 0, 0, 0, 0, 0).pgm(0, 0, 0x2000).
			at(95).at(100).waveStart(0, 0, 0, 0, 0, 0, 1).
			at(104).inst(0, 1).at(107).valu(0).at(110).ready(1).at(115).inst(0, 10).
			at(120).inst(0, 19).at(127).valu(0).at(134).waveEnd(0, 0, 0, 0)},
	} {
		got := tc.rb.bytes()
		want := testutil.Unhex(t, tc.want)
		if !bytes.Equal(got, want[:len(got)]) || !bytes.Equal(want[len(got):], make([]byte, len(want)-len(got))) {
			t.Errorf("%s:\n got % x\nwant % x", tc.name, got, want)
		}
	}
}

// TestRDNAGeneratedTraces decodes small traces of the test kernels
// (gfx1030, gfx1100, gfx1201) written by the independent trace generator,
// and compares every record with the generator's expectation. The files in
// testdata/rdna were made with
//
//	go run ./scripts/gentrace -index K.index -arch gfxN -seed 11 -simds 2 -waves 3 \
//	    -per-slot 2 -other-cus 1 -max-trips 8 -all -o gfxN.att -expect gfxN.rec
//
// and the gfxN-plain ones with -seed 12 and without -all (no WAVE_START_EXT,
// other-SIMD instructions or ignored tokens, which AMD's 0.1.6 library
// does not handle the same way; see rdna_lib_test.go).
// (K.index: co-index of testdata/kernels/K/kernels_code_object_id_1.hsaco).
func TestRDNAGeneratedTraces(t *testing.T) {
	for _, tc := range []struct{ gen, kernels string }{
		{"gfx10", "gfx1030"}, {"gfx11", "gfx1100"}, {"gfx12", "gfx1201"},
		{"gfx10-plain", "gfx1030"}, {"gfx11-plain", "gfx1100"}, {"gfx12-plain", "gfx1201"},
	} {
		dir := filepath.Join("testdata", "rdna")
		ix, err := wire.ReadIndexFile(filepath.Join(dir, tc.kernels+".index"))
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(dir, tc.gen+".att"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeWith(New(), data, isa.NewTable(ix), cloneAll)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(filepath.Join(dir, tc.gen+".rec"))
		if err != nil {
			t.Fatal(err)
		}
		var want []wire.Batch
		rd := wire.NewReader(f, tc.gen+".rec")
		for rd.Scan() {
			if rd.Kind() == wire.KindBatch {
				want = append(want, cloneAll(rd.Batch()))
			}
		}
		f.Close()
		if err := rd.Err(); err != nil {
			t.Fatal(err)
		}
		waves := 0
		for _, b := range want {
			waves += len(b.Waves)
		}
		if waves == 0 {
			t.Fatalf("%s: no waves expected", tc.gen)
		}
		check(t, got, want)
	}
}

// TestRDNATokenNibbles checks what scanRun's window relies on: every RDNA
// token is a whole number of nibbles long, so a token starts at a multiple
// of 4 bits, and its time field lies in its first 60 bits (the window
// scanRun reads the clock from, also for the longer tokens).
func TestRDNATokenNibbles(t *testing.T) {
	for name, table := range map[string]*[256]rdnaEntry{
		"gfx10": gfx10Table, "gfx11": gfx11Table, "gfx12": gfx12Table,
		"gfx10-016": gfx10Table016, "gfx11-016": gfx11Table016, "gfx12-016": gfx12Table016,
	} {
		for i, e := range table {
			if e.bits == 0 || e.bits%4 != 0 {
				t.Errorf("%s: entry %#x (type %d) is %d bits long", name, i, e.typ, e.bits)
			}
			if e.tw > 0 && int(e.tb)+int(e.tw) > 60 {
				t.Errorf("%s: entry %#x (type %d): time field at bit %d, %d wide", name, i, e.typ, e.tb, e.tw)
			}
		}
	}
}
