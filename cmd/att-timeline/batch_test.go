package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

// TestHugeBatch: waves, occupancy and dispatches delivered in one batch
// each, larger than the reader's pieces, give the same timeline as the
// same records one per batch (the bound on memory is measured by
// scripts/bench-batch).
func TestHugeBatch(t *testing.T) {
	dir := t.TempDir()
	var ws []wire.Wave
	var occ []wire.Occupancy
	var disp []wire.Dispatch
	for i := range 3000 {
		b := int64(i) * 10
		ws = append(ws, wire.Wave{CU: uint8(i % 7), SIMD: uint8(i % 4), WaveID: uint8(i % 9), BeginTime: b, EndTime: b + 50,
			Instructions: []wire.Instruction{{Time: b, Duration: 4, Stall: 2, PC: wire.PC{Address: 0x100, CodeObjectID: 1}}}})
		occ = append(occ, wire.Occupancy{CU: uint8(i % 7), Time: uint64(b), Start: i%2 == 0})
		disp = append(disp, wire.Dispatch{Time: b, MEID: 1})
	}
	write := func(name string, whole bool) string {
		var batches []wire.Batch
		if whole {
			batches = []wire.Batch{{Type: wire.TypeDispatch, Dispatches: disp}, {Type: wire.TypeOccupancy, Occupancy: occ}, {Type: wire.TypeWave, Waves: ws}}
		} else {
			for i := range disp {
				batches = append(batches, wire.Batch{Type: wire.TypeDispatch, Dispatches: disp[i : i+1]})
			}
			for i := range occ {
				batches = append(batches, wire.Batch{Type: wire.TypeOccupancy, Occupancy: occ[i : i+1]})
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
	for _, args := range [][]string{{}, {"--jq", ".type != \"wave\" or .simd == 1"}} {
		ca, a, ea := runCmd(t, nil, append([]string{small}, args...)...)
		cb, b, eb := runCmd(t, nil, append([]string{huge}, args...)...)
		if ca != 0 || cb != 0 || a != b || len(a) < 10000 {
			t.Errorf("%v: small batches exit %d, one batch exit %d; outputs equal: %v\n%s%s", args, ca, cb, a == b, ea, eb)
		}
	}
}
