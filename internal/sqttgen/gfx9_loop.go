package sqttgen

import "github.com/attkit/attkit/internal/wire"

// loopKernel is a hand-written gfx9 kernel at 0x100 with a loop, a forward
// branch, a barrier, LDS, SMEM, VMEM and VALU instructions.
var loopKernel = []struct {
	a, size uint64
	text    string
}{
	{0x100, 8, "s_load_dwordx2 s[0:1], s[4:5], 0x0"},
	{0x108, 4, "s_mov_b32 s2, 0"},
	{0x10c, 4, "v_mov_b32_e32 v1, 0"},
	{0x110, 4, "s_waitcnt lgkmcnt(0)"},
	{0x114, 8, "global_load_dword v2, v[0:1], off"},
	{0x11c, 4, "v_add_u32_e32 v1, v1, v2"},
	{0x120, 4, "s_add_u32 s2, s2, 1"},
	{0x124, 4, "s_cmp_lt_u32 s2, 10"},
	{0x128, 8, "ds_write_b32 v0, v1"},
	{0x130, 4, "s_cbranch_scc1 65530"},
	{0x134, 4, "s_cbranch_execz 2"},
	{0x138, 4, "s_barrier"},
	{0x13c, 4, "s_nop 0"},
	{0x140, 8, "global_store_dword v[0:1], v1, off"},
	{0x148, 4, "s_endpgm"},
}

// LoopIndex returns the index of a small hand-written gfx9 kernel at 0x100
// under code object id coid: a loop (so that waves run long), a forward
// branch, a barrier, LDS, SMEM, VMEM and VALU instructions. Tests and
// benchmarks generate traces of it with Kernels: []Kernel{{Entry: 0x100}}.
func LoopIndex(coid uint64) *wire.Index {
	ix := &wire.Index{}
	for _, r := range loopKernel {
		ix.Rows = append(ix.Rows, wire.Row{CodeObj: coid, Vaddr: r.a, Size: r.size, Text: r.text})
	}
	return ix
}
