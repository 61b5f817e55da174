package sqttgen

import (
	"io"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

// BenchmarkGenerate measures generation speed without expected records
// (the benchmark-trace path of scripts/gentrace).
func BenchmarkGenerate(b *testing.B) {
	ix := loadIndex(b, "gfx942.index")
	st := benchGenerate(b, Config{Index: ix, Seed: 1, Instrument: true, WavesPerSIMD: 4, TargetBytes: 64 << 20})
	b.ReportMetric(float64(st.Instructions)*float64(b.N)/b.Elapsed().Seconds(), "inst/s")
}

// BenchmarkGenerateExpect measures generation with the expected records.
func BenchmarkGenerateExpect(b *testing.B) {
	ix := loadIndex(b, "gfx942.index")
	benchGenerate(b, Config{Index: ix, Seed: 1, Instrument: true, WavesPerSIMD: 4, TargetBytes: 4 << 20,
		Emit: func(*wire.Batch) error { return nil }})
}

// benchGenerate generates the trace of cfg b.N times and reports its size.
func benchGenerate(b *testing.B, cfg Config) Stats {
	var st Stats
	for i := 0; i < b.N; i++ {
		var err error
		if st, err = GenerateTo(io.Discard, cfg); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(st.Bytes)
	return st
}
