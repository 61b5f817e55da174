package hidden

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/attkit/attkit/internal/sqttgen"
	"github.com/attkit/attkit/internal/wire"
)

// TestGeneratedAgainstOracle runs the analysis and the oracle on the
// records of traces sqttgen generates from the gfx942 kernels of its
// testdata: two shader engines, four SIMDs of three wave slots each.
func TestGeneratedAgainstOracle(t *testing.T) {
	ix, err := wire.ReadIndexFile(filepath.Join("..", "sqttgen", "testdata", "gfx942.index"))
	if err != nil {
		t.Fatal(err)
	}
	var ses []Capture
	insts := 0
	for se := range 2 {
		_, batches, err := sqttgen.Generate(sqttgen.Config{Index: ix, Seed: uint64(11 + se), Instrument: true, MaxTrips: 8, GFX9: sqttgen.GFX9{SE: uint8(se)}})
		if err != nil {
			t.Fatal(err)
		}
		var c Capture
		for _, b := range batches {
			for _, w := range b.Waves {
				w.Instructions = slices.Clone(w.Instructions)
				insts += len(w.Instructions)
				c.Waves = append(c.Waves, w)
			}
		}
		ses = append(ses, c)
	}
	matrix := MatrixPCs(ix)
	res := analyze(t, ses, matrix)
	checkOracle(t, ses, matrix, res)
	var total Latency
	for _, h := range res.ByPC {
		total.Add(h)
	}
	if total.Total() == 0 {
		t.Errorf("nothing hidden in %d generated instructions", insts)
	}
	t.Logf("%d instructions, %d PCs, hidden %+v", insts, len(res.ByPC), total)
}
