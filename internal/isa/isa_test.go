package isa

import (
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

func TestTable(t *testing.T) {
	ix := &wire.Index{Rows: []wire.Row{
		{Kind: wire.RowFunction, Text: "; _k", Source: "k", CodeObj: 1, Vaddr: 0x100},
		{Text: "s_load_dwordx2 s[0:1], s[4:5], 0x0", CodeObj: 1, Vaddr: 0x100},
		{Text: "s_nop 0", CodeObj: 1, Vaddr: 0x108},
		{Text: "s_endpgm", CodeObj: 1, Vaddr: 0x10c},
		{Text: "v_mov_b32_e32 v0, 1", CodeObj: 2, Vaddr: 0x100, Size: 8},
		{Text: "s_endpgm", CodeObj: 2, Vaddr: 0x200},
		{Raw: []byte(`["x"]`)},
	}}
	tab := NewTable(ix)
	for _, tc := range []struct {
		pc   wire.PC
		text string
		size uint64
		ok   bool
	}{
		{wire.PC{Address: 0x100, CodeObjectID: 1}, "s_load_dwordx2 s[0:1], s[4:5], 0x0", 8, true},
		{wire.PC{Address: 0x108, CodeObjectID: 1}, "s_nop 0", 4, true},
		{wire.PC{Address: 0x10c, CodeObjectID: 1}, "s_endpgm", 4, true},
		{wire.PC{Address: 0x100, CodeObjectID: 2}, "v_mov_b32_e32 v0, 1", 8, true}, // size from the index wins
		{wire.PC{Address: 0x200, CodeObjectID: 2}, "s_endpgm", 4, true},
		{wire.PC{Address: 0x104, CodeObjectID: 1}, "", 0, false},
		{wire.PC{}, "", 0, false},
	} {
		text, size, ok := tab.ISA(tc.pc)
		if text != tc.text || size != tc.size || ok != tc.ok {
			t.Errorf("ISA(%+v) = %q, %d, %v; want %q, %d, %v", tc.pc, text, size, ok, tc.text, tc.size, tc.ok)
		}
	}
	if tab.Len() != 5 {
		t.Errorf("Len = %d", tab.Len())
	}
}
