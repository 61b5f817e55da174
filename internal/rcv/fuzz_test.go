package rcv

import (
	"bytes"
	"testing"

	"github.com/attkit/attkit/internal/fold"
	"github.com/attkit/attkit/internal/pyjson"
	"github.com/attkit/attkit/internal/wire"
)

// seedStream encodes a small run with every record type the writer reads.
func seedStream(tb testing.TB, se int, batches ...wire.Batch) []byte {
	var buf bytes.Buffer
	if err := wire.WriteStream(&buf, &wire.Header{Trace: wire.Trace{SE: se, Run: 1}}, batches...); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzWriter feeds arbitrary record streams through the wire reader into a
// Writer (with marker correction on): it must never panic, and every file
// it writes must be JSON.
func FuzzWriter(f *testing.F) {
	in := wire.Instruction{Category: wire.CatSALU, Time: 10, Duration: 4, PC: pc(7, 0x100)}
	f.Add(seedStream(f, 0,
		wire.Batch{Type: wire.TypeGFXIP, GFXIP: 11},
		wire.Batch{Type: wire.TypeOccupancy, Occupancy: []wire.Occupancy{{PC: pc(7, 0x100), Time: 1, CU: 1, SIMD: 2, WaveID: 3, Start: true}}},
		wire.Batch{Type: wire.TypeWave, Waves: []wire.Wave{wave(2, 3, 1, 50, 1, in, wire.Instruction{})}},
		wire.Batch{Type: wire.TypeShaderData, ShaderData: []wire.ShaderData{sdAt(2, 0x1080, 0x101<<20|12), sdAt(2, 0x1010, 0x100<<20|12)}},
		wire.Batch{Type: wire.TypeDispatch, Dispatches: []wire.Dispatch{{Time: 3, EntryPoint: pc(7, 0x100)}}},
		wire.Batch{Type: wire.TypeEvent, Events: []wire.Event{{Time: 2, Type: wire.EventClusterBarrier}}},
		wire.Batch{Type: wire.TypePerfEvent, PerfEvents: []wire.PerfEvent{{Time: 4}}},
		wire.Batch{Type: wire.TypeInstOtherSIMD, OtherSIMD: []wire.OtherSIMD{{Time: 5, Cycles: 2}}},
		wire.Batch{Type: wire.TypeRealtime, Realtime: []wire.Realtime{{ShaderClock: 1, RealtimeClock: 2}}},
	))
	f.Add(append(seedStream(f, 3), seedStream(f, 1, wire.Batch{Type: wire.TypeWave, Waves: []wire.Wave{wave(0, 0, 0, 0, 3)}})...))
	ix := &wire.Index{FuncmapLayout: layout7, Funcmap: funcmap7,
		Kernels: []wire.Kernel{{Address: 0x100, CodeObj: 7, Name: "k\u00e9\x01"}}}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		sink := memSink{}
		w := NewWriter(sink, ix, fold.New(ix), Options{JSON: true, DecodeMarkers: true})
		rd := wire.NewReader(bytes.NewReader(data), "fuzz")
		for rd.Scan() {
			var err error
			if rd.Kind() == wire.KindHeader {
				err = w.BeginTrace(rd.Header())
			} else {
				err = w.AddBatch(rd.Batch())
			}
			if err != nil {
				return
			}
		}
		if rd.Err() != nil {
			return
		}
		if err := w.Finish(); err != nil {
			t.Fatal(err)
		}
		for name, data := range sink {
			if _, err := pyjson.Decode(data); err != nil {
				t.Fatalf("%s is not JSON: %v\n%s", name, err, data)
			}
		}
	})
}
