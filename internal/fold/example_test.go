package fold_test

import (
	"fmt"

	"github.com/attkit/attkit/internal/fold"
	"github.com/attkit/attkit/internal/wire"
)

// The worked example of python-layer §4.1: a wave that begins at 100 and
// issues four instructions; idle is measured from the furthest completion
// so far, so the overlapping third instruction adds none.
func Example() {
	ix := &wire.Index{Rows: []wire.Row{
		{CodeObj: 1, Vaddr: 0x1300, Text: "s_load_dwordx2 s[0:1], s[4:5], 0x0", Line: 1},
		{CodeObj: 1, Vaddr: 0x1308, Text: "s_cmp_eq_u32 s2, 0", Line: 2},
		{CodeObj: 1, Vaddr: 0x130c, Text: "s_cbranch_scc1 4", Line: 3},
		{CodeObj: 1, Vaddr: 0x1310, Text: "v_mov_b32_e32 v0, 1", Line: 4},
	}}
	f := fold.New(ix)
	pc := func(a uint64) wire.PC { return wire.PC{Address: a, CodeObjectID: 1} }
	f.AddWave(&wire.Wave{BeginTime: 100, Instructions: []wire.Instruction{
		{Time: 100, Stall: 0, Duration: 8, PC: pc(0x1300)},
		{Time: 110, Stall: 2, Duration: 6, PC: pc(0x1308)},
		{Time: 112, Stall: 0, Duration: 20, PC: pc(0x130c)},
		{Time: 140, Stall: 10, Duration: 4, PC: pc(0x1310)},
		{Time: 150, Stall: 0, Duration: 4, PC: pc(0x2000)}, // not in the index
	}})
	for _, e := range f.Entries() {
		fmt.Printf("line %d %#x %-20q hit %d latency %2d stall %2d idle %d\n",
			e.Line, e.PC.Address, e.Text, e.Hit, e.Latency, e.Stall, e.Idle)
	}
	// Output:
	// line 1 0x1300 "s_load_dwordx2 s[0:1], s[4:5], 0x0" hit 1 latency  8 stall  0 idle 0
	// line 2 0x1308 "s_cmp_eq_u32 s2, 0" hit 1 latency  6 stall  2 idle 2
	// line 3 0x130c "s_cbranch_scc1 4"   hit 1 latency 20 stall  0 idle 0
	// line 4 0x1310 "v_mov_b32_e32 v0, 1" hit 1 latency 10 stall 10 idle 8
	// line 5 0x2000 ""                   hit 1 latency  4 stall  0 idle 0
}
