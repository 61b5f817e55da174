//go:build gen

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/sqtt"
	"github.com/attkit/attkit/internal/sqttgen"
	"github.com/attkit/attkit/internal/wire"
)

func init() { regenerate = generateStream }

func genConfig(ix *wire.Index, se uint8) sqttgen.Config {
	return sqttgen.Config{
		Index: ix, Seed: 40 + uint64(se), WavesPerSIMD: 2, WavesPerSlot: 2, OtherCUs: 1,
		Instrument: true, Dispatch: true, ShaderData: true, Events: true,
		MaxTrips: 3, MaxWaveInsts: 120, GFX9: sqttgen.GFX9{SE: se, TargetCU: 3 + se, SIMDs: 2, Perf: true},
	}
}

// generateStream generates the trace of shader engine se, decodes it with
// the native decoder and writes the record stream to testdata.
func generateStream(t *testing.T, ix *wire.Index, se uint8) []byte {
	trace, _, err := sqttgen.Generate(genConfig(ix, se))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	if err := w.WriteHeader(&wire.Header{Producer: "att-rcv test (sqttgen + native decoder)", Backend: "native",
		Trace: wire.Trace{Path: fmt.Sprintf("gen_shader_engine_%d_1.att", se), SE: int(se), Run: 1, GFXIP: 9}}); err != nil {
		t.Fatal(err)
	}
	err = sqtt.New().Decode(context.Background(), bytes.NewReader(trace), isa.NewTable(ix), func(b *wire.Batch) error {
		return w.WriteBatch(b)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", fmt.Sprintf("gen_se%d.rec", se))
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
