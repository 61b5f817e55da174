package fold

import (
	"testing"

	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

// benchIndex is a kernel of n instructions of 4 bytes in code object 1.
func benchIndex(n int) *wire.Index {
	ix := &wire.Index{}
	for i := range n {
		ix.Rows = append(ix.Rows, wire.Row{CodeObj: 1, Vaddr: 0x1000 + 4*uint64(i), Text: "v_nop", Line: int64(i + 1)})
	}
	return ix
}

// benchWave runs a kernel of n instructions with a loop over its middle
// part, so that PCs repeat and branch back as real waves do.
func benchWave(n, iters int) *wire.Wave {
	w := &wire.Wave{BeginTime: 1000}
	t := int64(1000)
	add := func(i int) {
		w.Instructions = append(w.Instructions, wire.Instruction{
			Category: wire.CatVALU, Stall: uint32(i % 3), Duration: int32(4 + i%5), Time: t,
			PC: wire.PC{Address: 0x1000 + 4*uint64(i), CodeObjectID: 1},
		})
		t += int64(3 + i%7)
	}
	for i := range n / 4 {
		add(i)
	}
	for range iters {
		for i := n / 4; i < 3*n/4; i++ {
			add(i)
		}
	}
	for i := 3 * n / 4; i < n; i++ {
		add(i)
	}
	return w
}

// BenchmarkAddWave folds waves of about 10 000 instructions; the goal is at
// least 20 million instructions per second on one core.
func BenchmarkAddWave(b *testing.B) {
	w := benchAddWave(b, benchIndex(512))
	b.ReportMetric(float64(len(w.Instructions)), "instructions/op")
}

// BenchmarkAddWaveNoIndex: every PC is new to the fold at first, and the
// fold builds its entries from the trace.
func BenchmarkAddWaveNoIndex(b *testing.B) {
	benchAddWave(b, nil)
}

// benchAddWave folds benchWave(512, 38) into a fold over ix until b stops,
// reports instructions per second and per CPU second, and returns the wave.
func benchAddWave(b *testing.B, ix *wire.Index) *wire.Wave {
	w := benchWave(512, 38)
	f := New(ix)
	b.ReportAllocs()
	n := 0
	cpu0 := testutil.CPUTime()
	for b.Loop() {
		f.AddWave(w)
		n += len(w.Instructions)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "instructions/s")
	b.ReportMetric(float64(n)/(testutil.CPUTime()-cpu0).Seconds(), "instructions/cpu-s")
	return w
}
