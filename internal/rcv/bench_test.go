package rcv

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/attkit/attkit/internal/fold"
	"github.com/attkit/attkit/internal/wire"
)

// BenchmarkWaveFiles writes a run of 12,000 waves (40 instructions each,
// over a 400-instruction index) into a real folder: wave files per second
// and MB/s of files written.
func BenchmarkWaveFiles(b *testing.B) {
	const nWaves, nInsts = 12000, 40
	ix := &wire.Index{}
	for i := 0; i < 400; i++ {
		ix.Rows = append(ix.Rows, wire.Row{CodeObj: 1, Vaddr: uint64(0x1000 + 4*i), Text: "v_nop", Line: int64(i + 1)})
	}
	waves := make([]wire.Wave, 100)
	for k := range waves {
		wv := &waves[k]
		wv.CU, wv.SIMD, wv.WaveID = uint8(k%8), uint8(k%4), uint8(k%16)
		wv.BeginTime, wv.EndTime = int64(k*1000), int64(k*1000+5000)
		wv.Timeline = []wire.WaveState{{Type: wire.StateExec, Duration: 4000}, {Type: wire.StateIdle, Duration: 1000}}
		for i := 0; i < nInsts; i++ {
			wv.Instructions = append(wv.Instructions, wire.Instruction{Category: wire.CatVALU, Stall: uint32(i % 3),
				Duration: 4, Time: wv.BeginTime + int64(8*i), PC: pc(1, uint64(0x1000+4*((k+i)%400)))})
		}
	}
	batch := wire.Batch{Type: wire.TypeWave, Waves: waves}
	var st Stats
	base := b.TempDir()
	n := 0
	for b.Loop() {
		n++
		f, err := NewFolder(filepath.Join(base, "ui"+strconv.Itoa(n)), FolderOptions{})
		if err != nil {
			b.Fatal(err)
		}
		w := NewWriter(f, ix, fold.New(ix), Options{JSON: true})
		w.BeginTrace(&wire.Header{})
		for i := 0; i < nWaves/len(waves); i++ {
			if err := w.AddBatch(&batch); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Finish(); err != nil {
			b.Fatal(err)
		}
		if err := f.Commit(); err != nil {
			b.Fatal(err)
		}
		st = w.Stats()
		b.SetBytes(st.Bytes)
	}
	b.ReportMetric(float64(st.WaveFiles)*float64(n)/b.Elapsed().Seconds(), "wavefiles/s")
	b.ReportMetric(float64(st.WaveFiles), "wavefiles/op")
}
