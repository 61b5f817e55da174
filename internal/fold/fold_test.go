package fold

import (
	"bytes"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

func pc(co, addr uint64) wire.PC { return wire.PC{Address: addr, CodeObjectID: co} }

func inst(p wire.PC, time int64, stall uint32, dur int32) wire.Instruction {
	return wire.Instruction{Category: wire.CatSALU, Stall: stall, Duration: dur, Time: time, PC: p}
}

// exampleIndex is the two-label kernel of python-layer §3.7 (code object 1,
// no DWARF) with source text on two rows.
func exampleIndex() *wire.Index {
	row := func(kind wire.RowKind, text string, line int64, src string, vaddr uint64) wire.Row {
		return wire.Row{Kind: kind, CodeObj: 1, Vaddr: vaddr, Text: text, Source: src, Line: line}
	}
	return &wire.Index{
		Rows: []wire.Row{
			row(wire.RowFunction, "; _mykernel", 1, "mykernel", 4864),
			row(wire.RowInstruction, "s_load_dwordx2 s[0:1], s[4:5], 0x0", 2, "/src/k.cl:3", 4864),
			row(wire.RowInstruction, "s_cmp_eq_u32 s2, 0", 3, "/src/k.cl:4", 4872),
			row(wire.RowInstruction, "s_cbranch_scc1 4", 4, "", 4876),
			row(wire.RowInstruction, "v_mov_b32_e32 v0, 1", 5, "", 4880),
			row(wire.RowLabel, "; _label_loop", 6, "", 4884),
			row(wire.RowInstruction, "s_sub_u32 s2, s2, 1", 7, "", 4884),
			row(wire.RowInstruction, "s_cmp_lg_u32 s2, 0", 8, "", 4888),
			row(wire.RowInstruction, "s_cbranch_scc1 65533", 9, "", 4892),
			row(wire.RowLabel, "; _label_end", 10, "", 4896),
			row(wire.RowInstruction, "s_endpgm", 11, "", 4896),
		},
		Kernels: []wire.Kernel{{Address: 4864, CodeObj: 1, Name: "mykernel", Demangled: "mykernel"}},
		Doc:     wire.DocMeta{Hsaco: []string{"/abs/k.hsaco"}},
	}
}

// workedWave is the wave of the worked example of §4.1 (begin 100) on the
// first four instructions of exampleIndex, with an unresolved instruction
// in the middle that must change nothing.
func workedWave() *wire.Wave {
	return &wire.Wave{BeginTime: 100, EndTime: 200, Instructions: []wire.Instruction{
		inst(pc(1, 4864), 100, 0, 8),
		inst(pc(1, 4872), 110, 2, 6),
		inst(wire.PC{}, 111, 50, 500),
		inst(pc(1, 4876), 112, 0, 20),
		inst(pc(1, 4880), 140, 10, 4),
	}}
}

func TestWorkedExample(t *testing.T) {
	f := New(exampleIndex())
	f.AddWave(workedWave())
	// The table of §4.1: latency added, idle added per instruction.
	want := map[wire.PC][4]int64{ // hit, latency, stall, idle
		pc(1, 4864): {1, 8, 0, 0},
		pc(1, 4872): {1, 6, 2, 2},
		pc(1, 4876): {1, 20, 0, 0},
		pc(1, 4880): {1, 10, 10, 8},
		pc(1, 4884): {0, 0, 0, 0},
	}
	for p, w := range want {
		e := f.Entry(p)
		if e == nil {
			t.Fatalf("no entry for %v", p)
		}
		if got := [4]int64{e.Hit, e.Latency, e.Stall, e.Idle}; got != w {
			t.Errorf("%v: got %v, want %v", p, got, w)
		}
	}
	if e := f.Entry(wire.PC{}); e != nil {
		t.Errorf("PC (0,0) got an entry: %+v", e)
	}
	if f.Len() != 8 {
		t.Errorf("Len = %d, want the 8 instruction rows", f.Len())
	}
}

func TestCSVWorkedExample(t *testing.T) {
	f := New(exampleIndex())
	f.AddWave(workedWave())
	f.AddWave(workedWave())
	var b bytes.Buffer
	if err := f.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	// Hand-computed: twice the §4.1 table; label rows with zero counts and
	// their column 3; never-hit instructions with zero counts.
	want := "CodeObj,Vaddr,Instruction,Hitcount,Latency,Stall,Idle,Source\r\n" +
		"1,4864,; _mykernel,0,0,0,0,mykernel\r\n" +
		"1,4864,\"s_load_dwordx2 s[0:1], s[4:5], 0x0\",2,16,0,0,/src/k.cl:3\r\n" +
		"1,4872,\"s_cmp_eq_u32 s2, 0\",2,12,4,4,/src/k.cl:4\r\n" +
		"1,4876,s_cbranch_scc1 4,2,40,0,0,\r\n" +
		"1,4880,\"v_mov_b32_e32 v0, 1\",2,20,20,16,\r\n" +
		"1,4884,; _label_loop,0,0,0,0,\r\n" +
		"1,4884,\"s_sub_u32 s2, s2, 1\",0,0,0,0,\r\n" +
		"1,4888,\"s_cmp_lg_u32 s2, 0\",0,0,0,0,\r\n" +
		"1,4892,s_cbranch_scc1 65533,0,0,0,0,\r\n" +
		"1,4896,; _label_end,0,0,0,0,\r\n" +
		"1,4896,s_endpgm,0,0,0,0,\r\n"
	if got := b.String(); got != want {
		t.Errorf("CSV:\n%q\nwant:\n%q", got, want)
	}
}

func TestCodeJSONWorkedExample(t *testing.T) {
	f := New(exampleIndex())
	f.AddWave(workedWave())
	got := f.CodeJSON()
	testutil.Golden(t, "worked.code.json", got)
	if bytes.HasSuffix(got, []byte("\n")) {
		t.Error("code.json ends in a newline")
	}
	if !strings.Contains(string(got), "[\n      \"v_mov_b32_e32 v0, 1\",\n      0,\n      5,\n      \"\",\n      1,\n      4880,\n      1,\n      10,\n      10,\n      8\n    ]") {
		t.Error("row of v_mov_b32_e32 does not carry the §4.1 counters 1, 10, 10, 8")
	}
}
