package wire

import (
	"bytes"
	"io"
	"testing"
)

// benchStream builds a stream of waves with 1000 instructions each, the
// shape of a real trace's bulk.
func benchStream(tb testing.TB, waves int) ([]byte, int) {
	w := Wave{CU: 1, SIMD: 2, WaveID: 3, Size: 64, BeginTime: 1000, EndTime: 900000}
	for i := 0; i < 1000; i++ {
		w.Instructions = append(w.Instructions, Instruction{Category: InstCategory(i % 12), Stall: uint32(i % 40),
			Duration: int32(4 + i%16), Time: int64(1000 + 8*i), PC: PC{Address: 0x1600 + uint64(4*(i%300)), CodeObjectID: 1}})
	}
	w.Timeline = []WaveState{{StateExec, 500}, {StateStall, 20}, {StateIdle, 80}}
	bs := make([]Batch, waves)
	for i := range bs {
		bs[i] = Batch{Type: TypeWave, Waves: []Wave{w}}
	}
	return encodeStream(tb, sampleHeader(), bs), waves * len(w.Instructions)
}

func BenchmarkWriteRecords(b *testing.B) {
	_, n := benchStream(b, 1)
	w := Wave{Size: 64}
	for i := 0; i < n; i++ {
		w.Instructions = append(w.Instructions, Instruction{Category: InstCategory(i % 12), Stall: uint32(i % 40),
			Duration: int32(4 + i%16), Time: int64(1000 + 8*i), PC: PC{Address: 0x1600 + uint64(4*(i%300)), CodeObjectID: 1}})
	}
	batch := Batch{Type: TypeWave, Waves: []Wave{w}}
	wr := NewWriter(io.Discard)
	wr.WriteHeader(&Header{})
	bytesOut := len(AppendBatch(nil, &batch))
	b.ReportAllocs()
	for b.Loop() {
		wr.WriteBatch(&batch)
	}
	wr.Flush()
	b.SetBytes(int64(bytesOut))
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "insts/s")
}

func BenchmarkReadRecords(b *testing.B) {
	data, n := benchStream(b, 100)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	rd := NewReader(bytes.NewReader(data), "bench")
	for b.Loop() {
		rd.Reset(bytes.NewReader(data), "bench")
		for rd.Scan() {
		}
		if rd.Err() != nil {
			b.Fatal(rd.Err())
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "insts/s")
}

func BenchmarkReadRecordsBytewise(b *testing.B) {
	slowPath = true
	defer func() { slowPath = false }()
	BenchmarkReadRecords(b)
}
