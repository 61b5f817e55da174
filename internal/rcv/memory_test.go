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
// 30 MB of wave files) its heap has grown by a few bytes a wave (the
// filenames.json entries wait in the spool file).
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
	if perWave := grown / nWaves; perWave > 16 {
		t.Errorf("heap grew %d bytes for %d waves (%d a wave) while writing %d bytes", grown, nWaves, perWave, sink.bytes)
	}
	t.Logf("heap grew %d bytes for %d waves, %d bytes of wave files", grown, nWaves, sink.bytes)
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
}

// The index files' records wait in the spool file: a run of 100,000
// occupancy records, 10,000 events, 10,000 perf-counter rows and 100,000
// shader-data records (10 MB of files; 8 MB as records in memory) grows
// the heap by less than a megabyte.
func TestMemoryFlatIndexFiles(t *testing.T) {
	f, err := NewFolder(t.TempDir()+"/ui", FolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(f, nil, fold.New(nil), Options{JSON: true})
	w.BeginTrace(&wire.Header{})
	occ := make([]wire.Occupancy, 1000)
	ev := make([]wire.Event, 100)
	perf := make([]wire.PerfEvent, 100)
	sd := make([]wire.ShaderData, 1000)
	batch := func(i int) error {
		for k := range occ {
			occ[k] = wire.Occupancy{Time: uint64(i*1000 + k), CU: uint8(k % 8), Start: k%2 == 0}
		}
		for k := range ev {
			ev[k] = wire.Event{Time: int64(i*1000 + 10*k), Type: wire.EventCSPartialFlush}
			perf[k] = wire.PerfEvent{Time: int64(i*1000 + 10*k), Bank: uint8(k % 2)}
		}
		for k := range sd {
			sd[k] = wire.ShaderData{Time: int64(i*1000 + k), Value: uint64(k)}
		}
		for _, b := range []wire.Batch{{Type: wire.TypeOccupancy, Occupancy: occ}, {Type: wire.TypeEvent, Events: ev},
			{Type: wire.TypePerfEvent, PerfEvents: perf}, {Type: wire.TypeShaderData, ShaderData: sd}} {
			if err := w.AddBatch(&b); err != nil {
				return err
			}
		}
		return nil
	}
	if err := batch(0); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 1; i < 100; i++ {
		if err := batch(i); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 1<<20 {
		t.Errorf("heap grew %d bytes over 100 batches", grown)
	}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if st := w.Stats(); st.Occupancy != 100000 || st.Bytes < 10<<20 {
		t.Errorf("stats %+v", st)
	}
	if err := CheckFolder(f.Dir()); err != nil {
		t.Error(err)
	}
}
