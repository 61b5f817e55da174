package fold

import (
	"bytes"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

func csvOf(t *testing.T, f *Fold) string {
	t.Helper()
	var b bytes.Buffer
	if err := f.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestNewPCs: PCs the index lacks get line numbers in first-touch order
// (12, 13, 14 after the index's 11), are appended to code.json in line
// order and to the CSV in (code object, address) order.
func TestNewPCs(t *testing.T) {
	f := New(exampleIndex())
	f.AddWave(&wire.Wave{BeginTime: 0, Instructions: []wire.Instruction{
		inst(pc(2, 0x40), 0, 0, 4),        // line 12; idle 0, end 4
		inst(pc(0, 0xdead0000), 10, 1, 3), // line 13; idle 6, lat 3, end 13
		inst(pc(1, 4888), 12, 0, 5),       // in the index; idle 0, end 17
		inst(pc(2, 0x10), 20, 7, 2),       // line 14; idle 3, lat 7
		inst(pc(2, 0x40), 30, 0, 4),       // idle 3 (30-27)
	}})
	for p, line := range map[wire.PC]int64{pc(2, 0x40): 12, pc(0, 0xdead0000): 13, pc(2, 0x10): 14, pc(1, 4888): 8} {
		if got := f.Line(p); got != line {
			t.Errorf("Line(%v) = %d, want %d", p, got, line)
		}
	}
	got := csvOf(t, f)
	wantTail := "1,4896,s_endpgm,0,0,0,0,\r\n" +
		"0,3735879680,,1,3,1,6,\r\n" +
		"2,16,,1,7,7,3,\r\n" +
		"2,64,,2,8,0,3,\r\n"
	if !strings.HasSuffix(got, wantTail) {
		t.Errorf("CSV tail:\n%q\nwant suffix:\n%q", got, wantTail)
	}
	if !strings.Contains(got, "1,4888,\"s_cmp_lg_u32 s2, 0\",1,5,0,0,\r\n") {
		t.Errorf("CSV lacks the hit index row:\n%s", got)
	}
	testutil.Golden(t, "newpcs.code.json", f.CodeJSON())
	ix, err := wire.ParseCodeJSON(f.CodeJSON())
	if err != nil {
		t.Fatal(err)
	}
	n := len(ix.Rows)
	if n != 14 {
		t.Fatalf("code.json has %d rows, want 11 + 3", n)
	}
	for i, w := range []struct {
		p    wire.PC
		line int64
		hit  int64
	}{{pc(2, 0x40), 12, 2}, {pc(0, 0xdead0000), 13, 1}, {pc(2, 0x10), 14, 1}} {
		r := ix.Rows[11+i]
		if r.PC() != w.p || r.Line != w.line || r.Hit != w.hit || r.Text != "" {
			t.Errorf("appended row %d = %+v, want pc %v line %d hit %d", i, r, w.p, w.line, w.hit)
		}
	}
}

// TestNoIndex is CodeIndex([]): code.json is {"code", "header"} with one
// row per traced PC.
func TestNoIndex(t *testing.T) {
	f := New(nil)
	f.AddWave(&wire.Wave{BeginTime: 5, Instructions: []wire.Instruction{
		inst(pc(3, 8), 10, 2, 4),
		inst(wire.PC{}, 11, 0, 0),
		inst(pc(3, 4), 11, 0, 9),
	}})
	want := `{
  "code": [
    [
      "",
      0,
      1,
      "",
      3,
      8,
      1,
      4,
      2,
      5
    ],
    [
      "",
      0,
      2,
      "",
      3,
      4,
      1,
      9,
      0,
      0
    ]
  ],
  "header": "ISA, _, LineNumber, Source, Codeobj, Vaddr, Hit, Latency, Stall, Idle"
}`
	if got := string(f.CodeJSON()); got != want {
		t.Errorf("code.json:\n%s\nwant:\n%s", got, want)
	}
	wantCSV := "CodeObj,Vaddr,Instruction,Hitcount,Latency,Stall,Idle,Source\r\n" +
		"3,4,,1,9,0,0,\r\n" +
		"3,8,,1,4,2,5,\r\n"
	if got := csvOf(t, f); got != wantCSV {
		t.Errorf("CSV:\n%q\nwant:\n%q", got, wantCSV)
	}
}

// TestSeveralCodeObjects: two code objects with the same addresses keep
// apart; line numbers are shared; idle runs across code objects within one
// wave (it is a property of the wave, not of the code object).
func TestSeveralCodeObjects(t *testing.T) {
	ix := &wire.Index{Rows: []wire.Row{
		{Kind: wire.RowFunction, CodeObj: 1, Vaddr: 0x100, Text: "; _a", Source: "a", Line: 1},
		{CodeObj: 1, Vaddr: 0x100, Text: "s_nop 0", Source: "/s/a.hip:10", Line: 2},
		{CodeObj: 1, Vaddr: 0x104, Text: "s_endpgm", Source: "/s/a.hip:11", Line: 3},
		{Kind: wire.RowFunction, CodeObj: 2, Vaddr: 0x100, Text: "; _b", Source: "b", Line: 4},
		{CodeObj: 2, Vaddr: 0x100, Text: "s_nop 0", Source: "/s/b.hip:20 -> /s/b.hip:5", Line: 5},
		{CodeObj: 2, Vaddr: 0x104, Text: "s_endpgm", Source: "/s/b.hip:21", Line: 6},
	}, Doc: wire.DocMeta{Hsaco: []string{"/a.co", "/b.co"}}}
	f := New(ix)
	f.AddWave(&wire.Wave{BeginTime: 0, Instructions: []wire.Instruction{
		inst(pc(1, 0x100), 0, 0, 1), inst(pc(1, 0x104), 1, 0, 1),
	}})
	f.AddWave(&wire.Wave{BeginTime: 0, Instructions: []wire.Instruction{
		inst(pc(2, 0x100), 4, 0, 1), inst(pc(2, 0x104), 9, 1, 2),
	}})
	f.AddWave(&wire.Wave{BeginTime: 0, Instructions: []wire.Instruction{
		inst(pc(2, 0x100), 0, 0, 1),
	}})
	want := "CodeObj,Vaddr,Instruction,Hitcount,Latency,Stall,Idle,Source\r\n" +
		"1,256,; _a,0,0,0,0,a\r\n" +
		"1,256,s_nop 0,1,1,0,0,/s/a.hip:10\r\n" +
		"1,260,s_endpgm,1,1,0,0,/s/a.hip:11\r\n" +
		"2,256,; _b,0,0,0,0,b\r\n" +
		"2,256,s_nop 0,2,2,0,4,/s/b.hip:20 -> /s/b.hip:5\r\n" +
		"2,260,s_endpgm,1,2,1,4,/s/b.hip:21\r\n"
	if got := csvOf(t, f); got != want {
		t.Errorf("CSV:\n%q\nwant:\n%q", got, want)
	}
	testutil.Golden(t, "twocodeobjs.code.json", f.CodeJSON())
}

// TestDuplicateRows: when rows share a PC the last gives the entry's text;
// both rows are written with the entry's counters.
func TestDuplicateRows(t *testing.T) {
	ix := &wire.Index{Rows: []wire.Row{
		{CodeObj: 1, Vaddr: 0, Text: "old", Line: 1},
		{CodeObj: 1, Vaddr: 0, Text: "new", Line: 7},
	}}
	f := New(ix)
	f.AddWave(&wire.Wave{Instructions: []wire.Instruction{inst(pc(1, 0), 0, 0, 3)}})
	want := "CodeObj,Vaddr,Instruction,Hitcount,Latency,Stall,Idle,Source\r\n" +
		"1,0,new,1,3,0,0,\r\n1,0,new,1,3,0,0,\r\n"
	if got := csvOf(t, f); got != want {
		t.Errorf("CSV:\n%q\nwant:\n%q", got, want)
	}
	if got := f.Line(pc(9, 9)); got != 8 {
		t.Errorf("next line = %d, want 1 + largest entry line 7", got)
	}
}

// TestCSVQuoting: Python's minimal quoting.
func TestCSVQuoting(t *testing.T) {
	for in, want := range map[string]string{
		"":           ",",
		" padded ":   " padded ,",
		"a,b":        `"a,b",`,
		`say "hi"`:   `"say ""hi""",`,
		"line\nfeed": "\"line\nfeed\",",
		"cr\r":       "\"cr\r\",",
		`\.`:         `\.,`,
		"ümlaut":     "ümlaut,",
	} {
		if got := string(appendCSVField(nil, in, ',')); got != want {
			t.Errorf("field %q: got %q, want %q", in, got, want)
		}
	}
}

// TestOddRowsKept: rows not of the ten-column form (read with --lenient:
// a strict read refuses them) and PC-sampling columns go through code.json
// unchanged and are not in the CSV.
func TestOddRowsKept(t *testing.T) {
	in := `{
  "code": [
    [
      "short",
      1
    ],
    [
      "v_add_f32 v0, v1, v2",
      0,
      1,
      null,
      1,
      16,
      5,
      5,
      5,
      5,
      7,
      8,
      [
        0,
        1,
        2,
        3,
        4,
        5,
        6,
        7,
        8,
        9
      ]
    ]
  ],
  "header": [
    "ISA",
    "_",
    "LineNumber",
    "Source",
    "Codeobj",
    "Vaddr",
    "Hit",
    "Latency",
    "Stall",
    "Idle",
    "PC_Issued",
    "PC_Stalled",
    "Stall_Reasons"
  ],
  "extra": {
    "z": 1
  }
}`
	ix, err := wire.ParseCodeJSONWith([]byte(in), wire.ReadOptions{Lenient: true})
	if err != nil || ix.Skipped != 1 {
		t.Fatalf("%v, %d rows skipped", err, ix.Skipped)
	}
	f := New(ix)
	f.AddWave(&wire.Wave{Instructions: []wire.Instruction{inst(pc(1, 16), 0, 1, 2)}})
	want := strings.Replace(in, "null,\n      1,\n      16,\n      5,\n      5,\n      5,\n      5,",
		"null,\n      1,\n      16,\n      1,\n      2,\n      1,\n      0,", 1) // a null Source stays null, as upstream keeps it
	if got := string(f.CodeJSON()); got != want {
		t.Errorf("code.json:\n%s\nwant:\n%s", got, want)
	}
	wantCSV := "CodeObj,Vaddr,Instruction,Hitcount,Latency,Stall,Idle,Source\r\n" +
		"1,16,\"v_add_f32 v0, v1, v2\",1,2,1,0,None\r\n"
	if got := csvOf(t, f); got != wantCSV {
		t.Errorf("CSV:\n%q\nwant:\n%q", got, wantCSV)
	}
}

func TestOrdered(t *testing.T) {
	ix := &wire.Index{Rows: []wire.Row{
		{CodeObj: 1, Vaddr: 8, Text: "b", Line: 1},
		{CodeObj: 1, Vaddr: 0, Text: "a", Line: 2},
		{CodeObj: 1, Vaddr: 8, Text: "b2", Line: 3},
	}}
	f := New(ix)
	f.Line(pc(3, 0))
	f.Line(pc(2, 4))
	var got []wire.PC
	for _, e := range f.Ordered() {
		got = append(got, e.PC)
	}
	want := []wire.PC{pc(1, 8), pc(1, 0), pc(2, 4), pc(3, 0)}
	if len(got) != len(want) {
		t.Fatalf("Ordered = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Ordered = %v, want %v", got, want)
		}
	}
}

// TestAskLines is the wave writer's get_or_create of every instruction
// (python-layer §5.6) after the fold: the unresolved PC (0, 0) gets an
// entry with zero counters and the line after the PCs its wave made new,
// once, and its row "0,0,,0,0,0,0," comes first among the PCs the index
// lacks, by (code object, address). A wave without an unresolved
// instruction asks for nothing new.
func TestAskLines(t *testing.T) {
	f := New(exampleIndex())
	plain := workedWave()
	plain.Instructions = append(plain.Instructions[:2:2], plain.Instructions[3:]...)
	f.AddWave(plain)
	f.AskLines(plain)
	if e := f.Entry(wire.PC{}); e != nil || f.Len() != 8 {
		t.Fatalf("a wave without unresolved instructions made entries: (0,0) %+v, %d entries", e, f.Len())
	}
	w := workedWave()
	w.Instructions = append(w.Instructions, inst(pc(2, 0x40), 150, 0, 4))
	for range 2 {
		f.AddWave(w)
		f.AskLines(w)
	}
	e := f.Entry(wire.PC{})
	if e == nil || e.Line != 13 || e.Hit != 0 || e.Latency != 0 || e.Stall != 0 || e.Idle != 0 || e.InIndex {
		t.Fatalf("(0,0) entry %+v, want line 13 (after 2:64's 12) and zero counters", e)
	}
	if f.Len() != 10 {
		t.Errorf("%d entries, want the 8 rows, 2:64 and (0,0)", f.Len())
	}
	got := csvOf(t, f)
	wantTail := "1,4896,s_endpgm,0,0,0,0,\r\n" +
		"0,0,,0,0,0,0,\r\n" +
		"2,64,,2,8,0,0,\r\n"
	if !strings.HasSuffix(got, wantTail) {
		t.Errorf("CSV tail:\n%q\nwant suffix:\n%q", got, wantTail)
	}
	if strings.Count(got, "\r\n0,0,") != 1 {
		t.Errorf("CSV has not exactly one (0,0) row:\n%s", got)
	}
	ix, err := wire.ParseCodeJSON(f.CodeJSON())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(ix.Rows); n != 13 || ix.Rows[11].PC() != pc(2, 0x40) || ix.Rows[12].PC() != (wire.PC{}) || ix.Rows[12].Line != 13 {
		t.Errorf("code.json rows %+v: want 2:64 (line 12) then (0,0) (line 13) after the 11 index rows", ix.Rows)
	}
}
