package sqtt

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/sqttgen"
	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

// loopISA is a small kernel with a loop: 5 instructions per iteration.
var loopISA = []string{
	"0x1000 8 s_load_dwordx2 s[0:1], s[4:5], 0x0",
	"0x1008 4 s_waitcnt lgkmcnt(0)",
	"0x100c 4 v_add_f32_e32 v0, v0, v1",
	"0x1010 4 v_mul_f32_e32 v1, v0, v0",
	"0x1014 4 s_add_u32 s2, s2, 1",
	"0x1018 4 s_cmp_lg_u32 s2, s3",
	"0x101c 4 s_cbranch_scc1 65531",
	"0x1020 8 global_store_dword v[2:3], v0, off",
	"0x1028 4 s_endpgm",
}

// synthTrace builds a gfx9 trace of rounds of 8 concurrent waves (SIMDs
// 0..3, slots 0..1 of the target CU) running loopISA for iters iterations,
// plus 4 waves per round on other CUs (occupancy only). It returns the
// trace and the number of instructions it holds.
func synthTrace(rounds, iters int) ([]byte, int) {
	t := newTB(5, 0, false).pgm(1, 0, 0x1000)
	// The program as (issue status, INST type) steps.
	type step struct{ st, typ int }
	prog := []step{{isInst, instSMEMRd}, {isImmed, 0}}
	for i := 0; i < iters; i++ {
		br := instJump
		if i == iters-1 {
			br = instNext
		}
		prog = append(prog, step{isInst, instVALU32}, step{isInst, instVALU32},
			step{isInst, instSALU32}, step{isInst, instSALU32}, step{isInst, br})
	}
	prog = append(prog, step{isInst, instVMEMWr}, step{isImmed, 0})
	insts := 0
	for r := 0; r < rounds; r++ {
		for k := 0; k < 8; k++ {
			t.waveStart(0, k%4, k/4, 1, 0, 1, 0)
		}
		for c := 1; c <= 4; c++ {
			t.waveStart(c, r%4, 0, 1, 0, 1, 0)
		}
		for _, s := range prog {
			for k := 0; k < 8; k++ {
				simd, slot := k%4, k/4
				t.put(tIssue|1<<4|uint64(simd)<<5|uint64(s.st)<<(8+2*slot), 4)
				if s.st == isInst {
					t.put(tInst|1<<4|uint64(slot)<<5|uint64(simd)<<9|uint64(s.typ)<<11, 2)
				}
				insts++
			}
		}
		for k := 0; k < 8; k++ {
			t.waveEnd(0, k%4, k/4)
		}
		for c := 1; c <= 4; c++ {
			t.waveEnd(c, r%4, 0)
		}
	}
	return t.bytes(), insts
}

func TestSynthTrace(t *testing.T) {
	data, insts := synthTrace(3, 50)
	got, err := decode(t, data, newTable(0, loopISA...))
	if err != nil {
		t.Fatal(err)
	}
	waves, n, occ := 0, 0, 0
	for _, b := range got {
		switch b.Type {
		case wire.TypeWave:
			w := b.Waves[0]
			waves++
			n += len(w.Instructions)
			for i, in := range w.Instructions {
				if in.PC.Address == 0 {
					t.Fatalf("wave %d instruction %d has no PC", waves, i)
				}
			}
			last := w.Instructions[len(w.Instructions)-1]
			if last.PC.Address != 0x1028 || w.Instructions[6].PC.Address != 0x101c ||
				w.Instructions[7].PC.Address != 0x100c {
				t.Fatalf("wave %d: loop not followed", waves)
			}
		case wire.TypeOccupancy:
			occ += len(b.Occupancy)
		case wire.TypeInfo:
			t.Errorf("info %v", b.Info)
		}
	}
	if waves != 24 || n != insts || occ != 3*12*2 {
		t.Errorf("%d waves, %d instructions (want %d), %d occupancy records", waves, n, insts, occ)
	}
}

// BenchmarkDecode decodes, per sub-benchmark, a synthetic trace of a loop
// kernel ("loop", built here from valid tokens), a trace of the independent
// generator running the gfx942 test kernels ("gen", internal/sqttgen), and
// the trace named by SQTT_BENCH_TRACE with the index named by
// SQTT_BENCH_INDEX ("file", e.g. a 100 MB trace from scripts/gentrace). It
// reports MB/s, instructions/s and allocations (per decode and per
// instruction decoded), and the same per CPU second, which says more on a
// shared machine.
func BenchmarkDecode(b *testing.B) {
	b.Run("loop", func(b *testing.B) {
		data, _ := synthTrace(400, 1000) // about 48 MB
		benchDecode(b, data, newTable(0, loopISA...), false)
	})
	b.Run("gen", func(b *testing.B) {
		ix, err := wire.ReadIndexFile(filepath.Join("..", "sqttgen", "testdata", "gfx942.index"))
		if err != nil {
			b.Skip(err)
		}
		data, _, err := sqttgen.Generate(sqttgen.Config{Index: ix, Seed: 1, Instrument: true,
			ShaderData: true, TargetBytes: 16 << 20, GFX9: sqttgen.GFX9{Perf: true, Pipeline: true}})
		if err != nil {
			b.Fatal(err)
		}
		benchDecode(b, data, isa.NewTable(ix), false)
	})
	b.Run("file", func(b *testing.B) {
		path := os.Getenv("SQTT_BENCH_TRACE")
		if path == "" {
			b.Skip("set SQTT_BENCH_TRACE (and SQTT_BENCH_INDEX) to decode a trace file")
		}
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		var prov isa.Provider
		if ip := os.Getenv("SQTT_BENCH_INDEX"); ip != "" {
			ix, err := wire.ReadIndexFile(ip)
			if err != nil {
				b.Fatal(err)
			}
			prov = isa.NewTable(ix)
		}
		benchDecode(b, data, prov, false)
	})
}

// benchDecode decodes data with prov per iteration and reports the
// throughput; with heap, also the peak heap above the input, sampled every
// 256 callbacks.
func benchDecode(b *testing.B, data []byte, prov isa.Provider, heap bool) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	insts := 0
	var ms runtime.MemStats
	var base, peak uint64
	if heap {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		base = ms.HeapAlloc
	}
	runtime.ReadMemStats(&ms)
	mallocs := ms.Mallocs
	cpu0 := testutil.CPUTime()
	for b.Loop() {
		insts = 0
		calls := 0
		err := New().Decode(context.Background(), bytes.NewReader(data), prov, func(bt *wire.Batch) error {
			for i := range bt.Waves {
				insts += len(bt.Waves[i].Instructions)
			}
			if calls++; heap && calls%256 == 0 {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapAlloc-min(base, ms.HeapAlloc))
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	cpu := (testutil.CPUTime() - cpu0).Seconds()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.Mallocs-mallocs)/float64(max(insts*b.N, 1)), "allocs/inst")
	b.ReportMetric(float64(insts)*float64(b.N)/b.Elapsed().Seconds(), "inst/s")
	b.ReportMetric(float64(insts), "inst/op")
	b.ReportMetric(float64(len(data))*float64(b.N)/1e6/cpu, "MB/cpu-s")
	b.ReportMetric(float64(insts)*float64(b.N)/cpu, "inst/cpu-s")
	if heap {
		b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
	}
}

// TestMemoryBounded checks that memory does not grow with trace length:
// decoding a trace ten times longer (more waves, same waves in flight)
// needs about the same heap. (Pooled records are bounded by PoolLimit,
// lowered here so that the pools do not hide growth elsewhere.)
func TestMemoryBounded(t *testing.T) {
	checkMemoryBounded(t, func(rounds int) []byte {
		data, _ := synthTrace(rounds, 100)
		return data
	})
}

// checkMemoryBounded decodes trace(40) and trace(400), with PoolLimit 4096,
// and fails when the larger one needs more than 1 MB more heap.
func checkMemoryBounded(t *testing.T, trace func(rounds int) []byte) {
	if testing.Short() {
		t.Skip("slow")
	}
	peak := func(rounds int) uint64 {
		data := trace(rounds)
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapAlloc
		var top uint64
		n := 0
		d := &Decoder{PoolLimit: 4096}
		err := d.Decode(context.Background(), bytes.NewReader(data), newTable(0, loopISA...), func(b *wire.Batch) error {
			if n++; n%64 == 0 {
				runtime.ReadMemStats(&ms)
				top = max(top, ms.HeapAlloc-min(base, ms.HeapAlloc))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return top
	}
	small, large := peak(40), peak(400)
	t.Logf("heap above the input: %d KB for 40 rounds, %d KB for 400", small>>10, large>>10)
	if large > small+1<<20 {
		t.Errorf("heap grew from %d KB to %d KB with a 10x longer trace", small>>10, large>>10)
	}
}
