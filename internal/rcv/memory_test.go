package rcv

import (
	"runtime"
	"testing"

	"github.com/attkit/attkit/internal/fold"
	"github.com/attkit/attkit/internal/wire"
)

// countSink discards files, counting bytes.
type countSink struct{ files, bytes int64 }

func (c *countSink) WriteFile(name string, data []byte) error {
	c.files++
	c.bytes += int64(len(data))
	return nil
}

// The writer keeps no wave: after 10,000 waves of 100 instructions (about
// 30 MB of wave files) its heap has grown by what filenames.json needs,
// a few dozen bytes a wave.
func TestMemoryBoundedByWaves(t *testing.T) {
	const nWaves, nInsts = 10000, 100
	waves := make([]wire.Wave, 10)
	for k := range waves {
		wv := &waves[k]
		wv.SIMD, wv.WaveID = uint8(k%4), uint8(k)
		for i := 0; i < nInsts; i++ {
			wv.Instructions = append(wv.Instructions, wire.Instruction{Time: int64(i), Duration: 4, PC: pc(1, uint64(4*i))})
		}
	}
	batch := wire.Batch{Type: wire.TypeWave, Waves: waves}
	sink := &countSink{}
	w := NewWriter(sink, nil, fold.New(nil), Options{JSON: true})
	w.BeginTrace(&wire.Header{})
	w.AddBatch(&batch) // warm up: fold entries, buffers
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 1; i < nWaves/len(waves); i++ {
		if err := w.AddBatch(&batch); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if sink.files != nWaves || sink.bytes < 20<<20 {
		t.Fatalf("wrote %d files, %d bytes", sink.files, sink.bytes)
	}
	if perWave := grown / nWaves; perWave > 200 {
		t.Errorf("heap grew %d bytes for %d waves (%d a wave) while writing %d bytes", grown, nWaves, perWave, sink.bytes)
	}
	t.Logf("heap grew %d bytes for %d waves, %d bytes of wave files", grown, nWaves, sink.bytes)
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
}
