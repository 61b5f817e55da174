package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

// TestHugeBatch: waves, perf counters and other-SIMD records delivered in
// one batch each, larger than the reader's pieces, fold to the same
// output, in every format, as the same records one per batch (the bound
// on memory is measured by scripts/bench-batch).
func TestHugeBatch(t *testing.T) {
	dir := t.TempDir()
	idx := writeIndex(t, filepath.Join(dir, "k.idx"), exampleIndex())
	var ws []wire.Wave
	var other []wire.OtherSIMD
	var perf []wire.PerfEvent
	for i := range 3000 {
		w := workedWave(uint8(i % 4))
		w.CU = uint8(i % 7)
		ws = append(ws, w)
		other = append(other, wire.OtherSIMD{Time: int64(100 + i%50), Cycles: 4})
		perf = append(perf, wire.PerfEvent{Time: int64(i)})
	}
	write := func(name string, whole bool) string {
		var batches []wire.Batch
		if whole {
			batches = []wire.Batch{{Type: wire.TypePerfEvent, PerfEvents: perf}, {Type: wire.TypeInstOtherSIMD, OtherSIMD: other}, {Type: wire.TypeWave, Waves: ws}}
		} else {
			for i := range ws {
				batches = append(batches, wire.Batch{Type: wire.TypePerfEvent, PerfEvents: perf[i : i+1]},
					wire.Batch{Type: wire.TypeInstOtherSIMD, OtherSIMD: other[i : i+1]})
			}
			for i := range ws {
				batches = append(batches, wire.Batch{Type: wire.TypeWave, Waves: ws[i : i+1]})
			}
		}
		var b bytes.Buffer
		if err := wire.WriteStream(&b, &wire.Header{Producer: "test", Trace: wire.Trace{Run: 1, GFXIP: 9}}, batches...); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	small, huge := write("small.rec", false), write("huge.rec", true)
	for _, args := range [][]string{{}, {"--format", "hidden.csv"}, {"--format", "json"}, {"--jq", ".simd == 1 and .cu < 3"}} {
		a := runTool(t, nil, append([]string{"--index", idx, small}, args...)...)
		b := runTool(t, nil, append([]string{"--index", idx, huge}, args...)...)
		if a.code != 0 || b.code != 0 || a.stdout != b.stdout || len(a.stdout) < 100 {
			t.Errorf("%v: small batches exit %d, one batch exit %d; outputs equal: %v\n%s%s", args, a.code, b.code, a.stdout == b.stdout, a.stderr, b.stderr)
		}
	}
}
