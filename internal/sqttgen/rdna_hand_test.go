package sqttgen

import (
	"fmt"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

// rdHandKernel is a hand-written RDNA kernel at 0x100 with a loop, a call
// through s_swappc into a function at 0x200 that returns with s_setpc
// (INST code 5 + NEW_PC), a SKIP line (s_delay_alu), a line the stitcher
// does not know (exp), BVH, LDS, a barrier, a barrier wait followed by an
// IMMED line (the gfx12 look-ahead of spec §3.5 step 9) and v_mov_b64
// (V_MOV_B64 on gfx12, spec §3.2 and §3.5 step 10).
var rdHandKernel = []row{
	{0x100, 8, "s_load_b64 s[0:1], s[4:5], 0x0"},
	{0x108, 4, "s_delay_alu instid0(VALU_DEP_1)"},
	{0x10c, 4, "v_mov_b32_e32 v1, 0"},
	{0x110, 4, "s_waitcnt lgkmcnt(0)"},
	{0x114, 4, "s_getpc_b64 s[2:3]"},
	{0x118, 8, "s_add_u32 s2, s2, 0xe8"},
	{0x120, 4, "s_swappc_b64 s[30:31], s[2:3]"},
	{0x124, 8, "global_load_b32 v2, v[0:1], off"},
	{0x12c, 4, "v_add_nc_u32_e32 v1, v1, v2"},
	{0x130, 8, "image_bvh_intersect_ray v[4:7], v[8:18], s[8:11]"},
	{0x138, 4, "s_cmp_lt_u32 s2, 10"},
	{0x13c, 8, "ds_store_b32 v0, v1"},
	{0x144, 4, "s_cbranch_scc1 65521"},
	{0x148, 4, "s_barrier"},
	{0x14c, 4, "s_barrier_wait 0xffff"},
	{0x150, 4, "s_wait_loadcnt 0x0"},
	{0x154, 8, "exp mrt0 off, off, off, off"},
	{0x15c, 8, "v_mov_b64_e32 v[2:3], 0"},
	{0x164, 4, "s_nop 0"},
	{0x168, 8, "flat_store_b32 v[0:1], v1"},
	{0x170, 4, "s_endpgm"},
	{0x200, 4, "v_add_f32_e32 v3, v3, v3"},
	{0x204, 8, "ds_bvh_stack_rtn_b32 v1, v0, v2, v[3:6]"},
	{0x20c, 4, "s_setpc_b64 s[30:31]"},
}

func rdHandIndex(id uint64) *wire.Index {
	ix := handIndex(id, rdHandKernel)
	ix.Rows = append(ix.Rows, wire.Row{Kind: wire.RowFunction, CodeObj: id, Vaddr: 0x200, Text: "; _func"})
	return ix
}

// TestRoundTripRDNAHand covers jumps (NEW_PC), SKIP and unknown lines, BVH
// and V_MOV_B64 with raw addresses (code object 0, no instrumentation) and
// with an instrumented code object.
func TestRoundTripRDNAHand(t *testing.T) {
	for _, gfxip := range []int{10, 11, 12} {
		for _, id := range []uint64{0, 5} {
			ix := rdHandIndex(id)
			calls := 0
			for seed := uint64(1); seed <= 12; seed++ {
				t.Run(fmt.Sprintf("gfx%d/co%d/seed%d", gfxip, id, seed), func(t *testing.T) {
					cfg, o := rdSeedConfig(ix, gfxip, seed)
					cfg.Kernels = []Kernel{{Entry: 0x100, CodeObjectID: id}}
					cfg.Instrument = id != 0
					cfg.LateLoad = cfg.LateLoad && id != 0
					cfg.MaxTrips = min(cfg.MaxTrips, 300) // the tight loop makes 3000 trips slow
					trace, want, err := GenerateRDNA(cfg, o)
					if err != nil {
						t.Fatal(err)
					}
					checkRDNAWantT(t, want, ix, gfxip, cfg.Truncate)
					for _, b := range want {
						for _, w := range b.Waves {
							for _, in := range w.Instructions {
								if in.PC.Address == 0x200 {
									calls++
								}
							}
						}
					}
					matchNative(t, trace, ix, want, fmt.Sprintf("config %s %+v\n", cfgSummary(cfg), o))
				})
			}
			if calls == 0 {
				t.Errorf("gfx%d code object %d: no wave called the function", gfxip, id)
			}
		}
	}
}

// TestGenerateRDNALongLoop checks that trip counts from the seed make some
// wave run a loop thousands of times.
func TestGenerateRDNALongLoop(t *testing.T) {
	ix := rdHandIndex(0)
	longest := 0
	for seed := uint64(1); seed <= 30 && longest < 3000; seed++ {
		_, want, err := GenerateRDNA(Config{Index: ix, Kernels: []Kernel{{Entry: 0x100}}, Seed: seed, MaxTrips: 5000,
			WavesPerSIMD: 16, WavesPerSlot: 2}, RDNA{GFXIP: 11})
		if err != nil {
			t.Fatal(err)
		}
		checkRDNAWant(t, want, ix, 11)
		for _, b := range want {
			for _, w := range b.Waves {
				longest = max(longest, len(w.Instructions))
			}
		}
	}
	if longest < 3000 {
		t.Fatalf("longest wave has %d instructions: the loops did not run thousands of trips", longest)
	}
}

// TestGenerateRDNALookahead checks that with Lookahead the hand kernel's
// IMMED after its excluded barrier wait runs the stitcher's look-ahead
// (spec §3.5 step 9) both ways: gaps kept and gaps refused.
func TestGenerateRDNALookahead(t *testing.T) {
	ix := rdHandIndex(0)
	var runs [2]int
	for seed := uint64(1); seed <= 8; seed++ {
		cfg := Config{Index: ix, Kernels: []Kernel{{Entry: 0x100}}, Seed: seed, WavesPerSIMD: 8, MaxTrips: 8,
			Emit: func(*wire.Batch) error { return nil }}
		g, err := newRDNAGen(nil, cfg, RDNA{GFXIP: 12, ExcludeBarrierWait: true, Lookahead: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.run(); err != nil {
			t.Fatal(err)
		}
		runs[0] += g.m.lookahead[0]
		runs[1] += g.m.lookahead[1]
	}
	if runs[0] == 0 && runs[1] == 0 {
		t.Fatal("no look-ahead ran")
	}
	t.Logf("look-aheads: %d kept the gap, %d refused it", runs[0], runs[1])
}
