package hidden

import (
	"os"
	"slices"
	"testing"

	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

// TestRealAgainstOracle runs the analysis and the brute-force oracle on
// the records AMD's library decoded from every capture of the
// real-hardware corpus (gfx11 and gfx12 with other-SIMD records, gfx950
// with matrix instructions), one shader engine per trace, and wants the
// same numbers for every PC.
func TestRealAgainstOracle(t *testing.T) {
	for _, c := range testutil.RealCorpus(t) {
		t.Run(c.Name, func(t *testing.T) {
			ix, err := wire.ReadIndexFile(c.CodeJSON)
			if err != nil {
				t.Fatal(err)
			}
			var ses []Capture
			insts, others := 0, 0
			for _, tr := range c.Traces {
				f, err := os.Open(tr.Expected)
				if err != nil {
					t.Fatal(err)
				}
				var cp Capture
				rd := wire.NewReader(f, tr.Expected)
				for rd.Scan() {
					if rd.Kind() != wire.KindBatch {
						continue
					}
					b := rd.Batch()
					switch b.Type {
					case wire.TypeWave:
						for i := range b.Waves {
							w := b.Waves[i]
							w.Instructions = slices.Clone(w.Instructions)
							w.Timeline = nil
							insts += len(w.Instructions)
							cp.Waves = append(cp.Waves, w)
						}
					case wire.TypeInstOtherSIMD:
						cp.Other = append(cp.Other, b.OtherSIMD...)
						others += len(b.OtherSIMD)
					}
				}
				f.Close()
				if rd.Err() != nil {
					t.Fatal(rd.Err())
				}
				ses = append(ses, cp)
			}
			matrix := MatrixPCs(ix)
			res := analyze(t, ses, matrix)
			checkOracle(t, ses, matrix, res)
			var total Latency
			for _, h := range res.ByPC {
				total.Add(h)
			}
			t.Logf("%d instructions, %d other-SIMD records, %d PCs, hidden %+v", insts, others, len(res.ByPC), total)
			if insts > 0 && len(res.ByPC) == 0 {
				t.Error("no PC in the result")
			}
			if others > 0 && total.Total() == 0 {
				t.Error("nothing hidden in a capture with other-SIMD records")
			}
		})
	}
}
