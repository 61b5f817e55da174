package rollup

import (
	"bytes"
	"testing"

	"github.com/attkit/attkit/internal/fold"
	"github.com/attkit/attkit/internal/hidden"
	"github.com/attkit/attkit/internal/wire"
)

// testIndex: kernel k1 in code object 1 inlining helper mix (two call
// sites of one helper line), a padding instruction without source, and
// kernel k2 in code object 2 whose rows have no chain.
func testIndex() *wire.Index {
	in := func(co, va uint64, src string, frames ...wire.InlineFrame) wire.Row {
		return wire.Row{Kind: wire.RowInstruction, CodeObj: co, Vaddr: va, Size: 4, Text: "s_nop 0", Source: src, Inline: frames}
	}
	label := func(co, va uint64, name string) wire.Row {
		return wire.Row{Kind: wire.RowFunction, CodeObj: co, Vaddr: va, Text: "; _" + name, Source: name}
	}
	return &wire.Index{
		Rows: []wire.Row{
			label(1, 0x100, "k1"),
			in(1, 0x100, "k.cl:5", wire.InlineFrame{Function: "k1", File: "k.cl", Line: 5}),
			in(1, 0x104, "h.h:2 -> k.cl:6", wire.InlineFrame{Function: "mix", File: "h.h", Line: 2}, wire.InlineFrame{Function: "k1", File: "k.cl", Line: 6}),
			in(1, 0x108, "h.h:2 -> k.cl:9", wire.InlineFrame{Function: "mix", File: "h.h", Line: 2}, wire.InlineFrame{Function: "k1", File: "k.cl", Line: 9}),
			in(1, 0x10c, "k.cl:?", wire.InlineFrame{Function: "k1", File: "k.cl"}),
			in(1, 0x110, ""),
			{Kind: wire.RowLabel, CodeObj: 1, Vaddr: 0x114, Text: "; _label_x"},
			label(2, 0x200, "k2"),
			in(2, 0x200, "k.cl:10"),
		},
		Kernels: []wire.Kernel{{Address: 0x200, CodeObj: 2, Name: "k2", Demangled: "k2(int)"}},
	}
}

func testFold() (*fold.Fold, map[wire.PC]hidden.Latency) {
	fo := fold.New(testIndex())
	pc := func(co, va uint64) wire.PC { return wire.PC{CodeObjectID: co, Address: va} }
	w := wire.Wave{BeginTime: 0, Instructions: []wire.Instruction{
		{PC: pc(1, 0x100), Time: 10, Stall: 2, Duration: 4}, // hit, lat 4, stall 2, idle 10
		{PC: pc(1, 0x104), Time: 14, Stall: 1, Duration: 3}, // lat 3, idle 0
		{PC: pc(1, 0x108), Time: 20, Stall: 0, Duration: 5}, // idle 3
		{PC: pc(1, 0x10c), Time: 25, Duration: 1},           // 0
		{PC: pc(1, 0x110), Time: 30, Duration: 2},           // idle 4
		{PC: pc(2, 0x200), Time: 40, Duration: 6, Stall: 6}, // idle 8
		{PC: pc(3, 0x300), Time: 50, Duration: 1},           // not in the index, idle 4
	}}
	fo.AddWave(&w)
	hid := map[wire.PC]hidden.Latency{
		pc(1, 0x104): {Idle: 5, Stall: 1, Issue: 1}, // idle bound 0: hidden 2
		pc(1, 0x108): {Idle: 2, Issue: 1},           // hidden 3
		pc(2, 0x200): {Idle: 20, Stall: 3},          // hidden 3 + 8
	}
	return fo, hid
}

func keys(gs []Group) []string {
	var out []string
	for _, g := range gs {
		out = append(out, g.Key)
	}
	return out
}

func TestSumKeysAndOrder(t *testing.T) {
	fo, hid := testFold()
	for _, c := range []struct {
		by   By
		keys []string
		pcs  []int
		hits []int64
	}{
		{ByLine, []string{"k.cl:?", "k.cl:5", "k.cl:10", "h.h:2", ""}, nil, nil},
		{ByFunction, []string{"k1", "mix", "k2(int)", ""}, []int{3, 2, 1, 1}, []int64{3, 2, 1, 1}},
		{ByKernel, []string{"k1", "k2(int)", ""}, []int{5, 1, 1}, nil},
	} {
		gs, err := Sum(fo, hid, c.by)
		if err != nil {
			t.Fatal(err)
		}
		got := keys(gs)
		if c.by == ByLine {
			// by file, then line: h.h before k.cl
			c.keys = []string{"h.h:2", "k.cl:?", "k.cl:5", "k.cl:10", ""}
		}
		if len(got) != len(c.keys) {
			t.Fatalf("%s: keys %q, want %q", c.by, got, c.keys)
		}
		for i := range got {
			if got[i] != c.keys[i] {
				t.Errorf("%s: keys %q, want %q", c.by, got, c.keys)
				break
			}
			if c.pcs != nil && gs[i].PCs != c.pcs[i] {
				t.Errorf("%s %q: %d PCs, want %d", c.by, got[i], gs[i].PCs, c.pcs[i])
			}
			if c.hits != nil && gs[i].Hit != c.hits[i] {
				t.Errorf("%s %q: %d hits, want %d", c.by, got[i], gs[i].Hit, c.hits[i])
			}
		}
	}
	// The helper line sums its two call sites; the kernel groups name
	// their code object and label address.
	gs, _ := Sum(fo, hid, ByLine)
	if h := gs[0]; h.Key != "h.h:2" || h.PCs != 2 || h.Latency != 8 || h.Stall != 1 || h.Idle != 3 ||
		h.HiddenIdle != 7 || h.HiddenStall != 1 || h.HiddenIssue != 2 || h.Hidden != 2+3 || h.Exposed != 8+3-5 ||
		h.File != "h.h" || h.Line != 2 {
		t.Errorf("h.h:2 group %+v", h)
	}
	gs, _ = Sum(fo, hid, ByKernel)
	if gs[1].CodeObj != 2 || gs[1].Vaddr != 0x200 || gs[2].CodeObj != 3 || gs[2].Vaddr != 0 {
		t.Errorf("kernel groups %+v", gs)
	}
	if k2 := gs[1]; k2.Hidden != 11 || k2.Exposed != 6+8-11 {
		t.Errorf("k2 group %+v", k2)
	}
	if _, err := Sum(fo, hid, "file"); err == nil {
		t.Error("an unknown key was accepted")
	}
}

// TestSumsAreExact: every roll-up's totals are the per-PC totals.
func TestSumsAreExact(t *testing.T) {
	fo, hid := testFold()
	pcs, _ := Sum(fo, hid, ByPC)
	var want Counters
	for _, g := range pcs {
		want.Add(g.Counters)
	}
	if len(pcs) != fo.Len() || want.Hit != 7 {
		t.Fatalf("%d PC groups for %d entries, %d hits", len(pcs), fo.Len(), want.Hit)
	}
	for _, by := range []By{ByLine, ByFunction, ByKernel} {
		gs, _ := Sum(fo, hid, by)
		var got Counters
		n := 0
		for _, g := range gs {
			got.Add(g.Counters)
			n += g.PCs
		}
		if got != want || n != fo.Len() {
			t.Errorf("%s: totals %+v over %d PCs, want %+v over %d", by, got, n, want, fo.Len())
		}
	}
}

func TestWriteCSVAndJSON(t *testing.T) {
	fo, hid := testFold()
	gs, _ := Sum(fo, hid, ByKernel)
	var b bytes.Buffer
	if err := WriteCSV(&b, gs, ByKernel); err != nil {
		t.Fatal(err)
	}
	want := "CodeObj,Kernel,Hitcount,Latency,Stall,Idle,HiddenIdle,HiddenStall,HiddenIssue,Hidden,Exposed,PCs\r\n" +
		"1,k1,5,15,3,17,7,1,2,5,27,5\r\n" +
		"2,k2(int),1,6,6,8,20,3,0,11,3,1\r\n" +
		"3,,1,1,0,4,0,0,0,0,5,1\r\n"
	if b.String() != want {
		t.Errorf("CSV:\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	gs, _ = Sum(fo, hid, ByLine)
	if err := WriteJSON(&b, gs[:1], ByLine); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != `{"source":"h.h:2","hitcount":2,"latency":8,"stall":1,"idle":3,"hidden_idle":7,"hidden_stall":1,"hidden_issue":2,"hidden":5,"exposed":6,"pcs":2}`+"\n" {
		t.Errorf("JSON %s", got)
	}
}

func TestSplitSource(t *testing.T) {
	for _, c := range []struct {
		in   string
		file string
		line int64
	}{{"a/b.cl:12", "a/b.cl", 12}, {"b.cl:?", "b.cl", 0}, {"None", "None", 0}, {"c:d:3", "c:d", 3}, {"x:y", "x:y", 0}, {"", "", 0}} {
		if f, l := SplitSource(c.in); f != c.file || l != c.line {
			t.Errorf("SplitSource(%q) = %q, %d", c.in, f, l)
		}
	}
	if FirstSource(" h.h:2 -> k.cl:6") != "h.h:2" {
		t.Error("FirstSource")
	}
}
