package sqttgen

import (
	"io"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

// BenchmarkGenerateRDNA measures RDNA trace generation (gfx11, test
// kernels) without and with the expected records.
func BenchmarkGenerateRDNA(b *testing.B) {
	ix := loadIndex(b, "gfx1100.index")
	for _, expect := range []bool{false, true} {
		name := "trace"
		if expect {
			name = "expect"
		}
		b.Run(name, func(b *testing.B) {
			cfg := Config{Index: ix, Seed: 1, Instrument: true, WavesPerSIMD: 16, TargetBytes: 4 << 20}
			if expect {
				cfg.Emit = func(*wire.Batch) error { return nil }
			}
			o := RDNA{GFXIP: 11, OtherSIMD: true, ExtStarts: true}
			var st Stats
			for b.Loop() {
				var err error
				if st, err = GenerateRDNATo(io.Discard, cfg, o); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(st.Bytes)
			b.ReportMetric(float64(st.Instructions)*float64(b.N)/b.Elapsed().Seconds(), "inst/s")
		})
	}
}
