package sqttgen

import (
	"bytes"
	"testing"

	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/wire"
)

type row struct {
	a    uint64
	size uint64
	text string
}

func handIndex(id uint64, rows []row) *wire.Index {
	ix := &wire.Index{}
	for _, r := range rows {
		ix.Rows = append(ix.Rows, wire.Row{CodeObj: id, Vaddr: r.a, Size: r.size, Text: r.text})
	}
	return ix
}

// callKernel calls a function with s_swappc; the function returns with
// s_setpc.
var callKernel = []row{
	{0x100, 8, "s_load_dwordx2 s[0:1], s[4:5], 0x0"},
	{0x108, 4, "s_getpc_b64 s[16:17]"},
	{0x10c, 8, "s_add_u32 s16, s16, 0xf4"},
	{0x114, 4, "s_addc_u32 s17, s17, 0"},
	{0x118, 4, "s_swappc_b64 s[30:31], s[16:17]"},
	{0x11c, 4, "s_waitcnt lgkmcnt(0)"},
	{0x120, 4, "s_endpgm"},
	{0x200, 4, "v_add_u32_e32 v0, v0, v0"},
	{0x204, 4, "s_cbranch_execz 2"},
	{0x208, 8, "v_mul_lo_u32 v1, v0, v0"},
	{0x210, 4, "s_setpc_b64 s[30:31]"},
}

// mfmaKernel has gfx950 scaled MFMA instructions (the MFMA_SCALE stitch
// rule of spec §3.5) in a loop.
var mfmaKernel = []row{
	{0x100, 4, "s_mov_b32 s2, 0"},
	{0x104, 8, "v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[0:3], v20, v21"},
	{0x10c, 4, "v_add_u32_e32 v1, v1, v2"},
	{0x110, 8, "v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[0:3], v20, v21"},
	{0x118, 4, "s_add_u32 s2, s2, 1"},
	{0x11c, 4, "s_cmp_lt_u32 s2, 10"},
	{0x120, 4, "s_cbranch_scc1 65528"},
	{0x124, 4, "s_endpgm"},
}

func callIndex() *wire.Index {
	ix := handIndex(0, callKernel)
	ix.Rows = append(ix.Rows, wire.Row{Kind: wire.RowFunction, Vaddr: 0x200, Text: "; _helper", Source: "helper"})
	return ix
}

func TestClassify(t *testing.T) {
	for text, want := range map[string]lineClass{
		"s_load_dwordx2 s[0:1], s[4:5], 0x0": clsSMEM,
		"s_waitcnt vmcnt(0) lgkmcnt(0)":      clsImmed,
		"s_cbranch_scc1 65530":               clsBranch,
		"s_branch 65533":                     clsBranch,
		"s_barrier":                          clsGFX9Barrier,
		"v_mfma_f32_32x32x8f16 a[0:15]":      clsVALU,
		"v_mfma_scale_f32_16x16x128_f8f6f4":  clsMFMAScale,
		"global_load_dword v2, v[0:1], off":  clsVMEM,
		"flat_store_dword v[0:1], v2":        clsFLAT,
		"ds_read_b32 v1, v0":                 clsLDS,
		"s_code_end":                         clsSALU,
		"s_setprio 3":                        clsImmed,
		"s_setprio_inc 1":                    clsSALU,
		"s_dcache_wb":                        clsSMEM,
		"buffer_nop":                         clsSkip,
		"exp mrt0 off":                       clsDontKnow,
		"s_endpgm":                           clsImmed,
		"s_getpc_b64 s[0:1]":                 clsSALU,
	} {
		if got := classify(text); got != want {
			t.Errorf("classify(%q) = %d, want %d", text, got, want)
		}
	}
	for text, want := range map[string]int64{
		"s_cbranch_scc0 65534": -2, "s_branch 3": 3, "s_cbranch_vccnz label": 0, "s_branch -1": -1,
	} {
		if got := branchOffset(text); got != want {
			t.Errorf("branchOffset(%q) = %d, want %d", text, got, want)
		}
	}
}

// checkWant verifies properties every generated expectation must have.
func checkWant(t *testing.T, want []wire.Batch, ix *wire.Index) (waves, insts int) {
	t.Helper()
	known := map[wire.PC]bool{}
	for _, r := range ix.Rows {
		known[r.PC()] = true
	}
	if len(want) == 0 || want[0].Type != wire.TypeGFXIP || want[0].GFXIP != 9 {
		t.Fatalf("first batch is not GFXIP 9")
	}
	for _, b := range want {
		for _, w := range b.Waves {
			waves++
			var sum int64
			for _, s := range w.Timeline {
				sum += int64(s.Duration)
				if s.Duration < 0 {
					t.Fatalf("negative timeline entry in %+v", w.Timeline)
				}
			}
			if sum != w.EndTime-w.BeginTime {
				t.Fatalf("wave simd %d slot %d: timeline sums to %d, end-begin = %d", w.SIMD, w.WaveID, sum, w.EndTime-w.BeginTime)
			}
			last := w.BeginTime
			for _, in := range w.Instructions {
				insts++
				if !known[in.PC] {
					t.Fatalf("instruction PC %+v not in the index", in.PC)
				}
				if in.Time < last {
					t.Fatalf("instructions out of time order: %+v after time %d", in, last)
				}
				last = in.Time
			}
			if n := len(w.Instructions); n == 0 || w.Instructions[n-1].Category != wire.CatImmed {
				t.Fatalf("wave does not end with the s_endpgm IMMED")
			}
		}
	}
	return waves, insts
}

func TestGenerateHandKernel(t *testing.T) {
	ix := LoopIndex(0)
	cfg := Config{Index: ix, Kernels: []Kernel{{Entry: 0x100}}, Seed: 1, ShaderData: true,
		Dispatch: true, Events: true, GFX9: GFX9{Perf: true, BarrierMessages: true}}
	trace, want, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(trace)%32 != 0 {
		t.Errorf("trace length %d is not a multiple of 32", len(trace))
	}
	waves, insts := checkWant(t, want, ix)
	if waves != 4*3*2 {
		t.Errorf("%d waves, want %d", waves, 4*3*2)
	}
	if insts < waves*10 {
		t.Errorf("only %d instructions", insts)
	}
	again, want2, err := Generate(cfg)
	if err != nil || !bytes.Equal(trace, again) || Diff(want, want2) != "" {
		t.Fatalf("same seed gave a different trace or records (err %v)", err)
	}
	cfg.Seed = 2
	other, _, _ := Generate(cfg)
	if bytes.Equal(trace, other) {
		t.Fatalf("seeds 1 and 2 gave the same trace")
	}
}

func TestGenerateInstrumented(t *testing.T) {
	ix := LoopIndex(3)
	for _, late := range []bool{false, true} {
		trace, want, err := Generate(Config{Index: ix, Kernels: []Kernel{{Entry: 0x100, CodeObjectID: 3}},
			Seed: 7, Instrument: true, LateLoad: late, GFX9: GFX9{Perf: true, PerfInterval: 300}})
		if err != nil {
			t.Fatal(err)
		}
		checkWant(t, want, ix)
		var loads, rt, freq int
		for _, b := range want {
			for _, e := range b.Events {
				if e.Type == wire.EventCodeObjectLoad && e.Payload == 3 {
					loads++
				}
			}
			rt += len(b.Realtime)
			if b.Type == wire.TypeRTFrequency {
				freq++
			}
			for _, o := range b.Occupancy {
				if o.PC.CodeObjectID != 3 && o.CU == 0 {
					t.Fatalf("late=%v: occupancy PC %+v not attributed", late, o.PC)
				}
			}
		}
		if loads != 1 || rt == 0 || freq != 1 || len(trace) == 0 {
			t.Fatalf("late=%v: %d loads, %d realtime, %d frequency", late, loads, rt, freq)
		}
	}
	if _, _, err := Generate(Config{Index: ix, Kernels: []Kernel{{Entry: 0x100, CodeObjectID: 3}}}); err == nil {
		t.Fatal("code object 3 without instrumentation: want an error")
	}
}

func TestGenerateLongLoop(t *testing.T) {
	ix := LoopIndex(0)
	// Trip counts come from the seed: some wave among a few seeds must run
	// a loop thousands of times.
	longest := 0
	for seed := uint64(1); seed <= 20 && longest < 3000; seed++ {
		_, want, err := Generate(Config{Index: ix, Kernels: []Kernel{{Entry: 0x100}}, Seed: seed, MaxTrips: 5000,
			WavesPerSIMD: 10, WavesPerSlot: 3, GFX9: GFX9{SIMDs: 1}})
		if err != nil {
			t.Fatal(err)
		}
		checkWant(t, want, ix)
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

// TestGenerateFromProvider generates from an isa.Provider and a kernel
// entry instead of an index, and gets the same trace.
func TestGenerateFromProvider(t *testing.T) {
	ix := LoopIndex(0)
	base := Config{Kernels: []Kernel{{Entry: 0x100}}, Seed: 9, GFX9: GFX9{Perf: true}}
	a, b := base, base
	a.Index = ix
	b.ISA = isa.NewTable(ix)
	ta, wa, err := Generate(a)
	if err != nil {
		t.Fatal(err)
	}
	tb, wb, err := Generate(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ta, tb) || Diff(wa, wb) != "" {
		t.Fatal("index and provider give different traces")
	}
	if _, _, err := Generate(Config{ISA: isa.NewTable(ix), Kernels: []Kernel{{Entry: 0x104}}}); err == nil {
		t.Fatal("misaligned entry: want an error")
	}
	if _, _, err := Generate(Config{ISA: isa.NewTable(ix), Kernels: []Kernel{{Entry: 0x200}}}); err == nil {
		t.Fatal("entry not in the ISA: want an error")
	}
	if _, _, err := Generate(Config{Index: &wire.Index{}}); err == nil {
		t.Fatal("no kernels: want an error")
	}
}
