package sqtt

import (
	"testing"

	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

// BenchmarkStitch stitches the waves of the synthetic loop traces
// (synthTrace, rdnaSynthTrace gfx11) again and again, their PCs cleared
// and the start PC as the one pc_info, and reports instructions stitched
// per CPU second: the stitcher alone, which the decode benchmarks hold
// among much else.
func BenchmarkStitch(b *testing.B) {
	gfx9, _ := synthTrace(8, 1000)
	rdna, _ := rdnaSynthTrace(11, 8, 1000)
	b.Run("gfx9", func(b *testing.B) {
		benchStitch(b, gfx9, 9, func(ps *parseState, w *wave) { ps.stitchGFX9(w) })
	})
	b.Run("rdna", func(b *testing.B) {
		benchStitch(b, rdna, 11, func(ps *parseState, w *wave) { ps.stitchRDNA(w) })
	})
}

func benchStitch(b *testing.B, data []byte, gfxip int, stitch func(*parseState, *wave)) {
	got, err := decodeAll(b, data, newTable(0, loopISA...))
	if err != nil {
		b.Fatal(err)
	}
	var waves [][]wire.Instruction
	for _, bt := range got {
		if bt.Type == wire.TypeWave && len(bt.Waves[0].Instructions) > 0 {
			waves = append(waves, bt.Waves[0].Instructions)
		}
	}
	ps := &parseState{cache: newISACache(newTable(0, loopISA...), gfxip)}
	var w wave
	n := 0
	cpu0 := testutil.CPUTime()
	for b.Loop() {
		for _, insts := range waves {
			w.insts = append(w.insts[:0], insts...)
			for i := range w.insts {
				w.insts[i].PC = wire.PC{}
			}
			w.pcInfos = append(w.pcInfos[:0], pcInfo{0, insts[0].PC})
			stitch(ps, &w)
			n += len(insts)
		}
	}
	b.ReportMetric(float64(n)/(testutil.CPUTime()-cpu0).Seconds(), "inst/cpu-s")
}
