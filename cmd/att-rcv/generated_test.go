package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/rcv"
	"github.com/attkit/attkit/internal/sqtt"
	"github.com/attkit/attkit/internal/sqttgen"
	"github.com/attkit/attkit/internal/wire"
)

// Generated traces: internal/sqttgen writes gfx9 traces of the real test
// kernels (testdata/gfx942.index, an index of
// testdata/kernels/gfx942/kernels_code_object_id_1.hsaco), the native
// decoder decodes them, and the record streams are kept in testdata as
// gen_se<N>.rec (rewritten by -update), so that the folder goldens change
// only when att-rcv does.

const genIndex = "testdata/gfx942.index"

func genConfig(ix *wire.Index, se uint8) sqttgen.Config {
	return sqttgen.Config{
		Index: ix, Seed: 40 + uint64(se), SE: se, TargetCU: 3 + se,
		SIMDs: 2, WavesPerSIMD: 2, WavesPerSlot: 2, OtherCUs: 1,
		Instrument: true, Dispatch: true, Perf: true, ShaderData: true, Events: true,
		MaxTrips: 3, MaxWaveInsts: 120,
	}
}

// genStream returns the record stream of shader engine se: from testdata,
// or (with -update) generated, decoded and written there.
func genStream(t *testing.T, ix *wire.Index, se uint8) []byte {
	t.Helper()
	path := filepath.Join("testdata", fmt.Sprintf("gen_se%d.rec", se))
	if !*update {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
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
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestGoldenGenerated(t *testing.T) {
	ix, err := wire.ReadIndexFile(genIndex)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// The index as a code.json, as a user of upstream's att_tool.py has it.
	index := writeFile(t, dir, "code.json", ix.CodeJSON())
	s0 := writeFile(t, dir, "se0.rec", genStream(t, ix, 0))
	s1 := writeFile(t, dir, "se1.rec", genStream(t, ix, 1))
	out := filepath.Join(dir, "out", "ui_output_gen1")
	if code, _, stderr := runCmd(t, nil, "-d", out, "--index", index, s0, s1); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if err := rcv.CheckFolder(out); err != nil {
		t.Errorf("the viewer would not load the folder completely:\n%v", err)
	}
	compareGolden(t, "generated", filepath.Join(dir, "out"))
	// The folder is what an independent reading of §5 derives from the
	// same records.
	checkReference(t, out, []string{s0, s1}, ix)
}
