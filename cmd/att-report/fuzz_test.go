package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

// FuzzReport: any input stream gives a page or an error with its exit
// code, never a panic; a page's data decodes and never holds a raw "<".
func FuzzReport(f *testing.F) {
	dir := f.TempDir()
	idx := writeIndex(f, filepath.Join(dir, "k.idx"), twoKernels())
	w := wire.Wave{BeginTime: 5, EndTime: 50, Instructions: []wire.Instruction{inst(0x100, 6, 1, 2), inst(0x104, 9, 0, 3), {PC: wire.PC{}}}}
	seed := writeStream(f, filepath.Join(dir, "s.rec"), streamPart{run: 1, occ: []wire.Occupancy{{Time: 9, Start: true}, {Time: 1}}, waves: []wire.Wave{w}})
	b, _ := os.ReadFile(seed)
	f.Add(b)
	f.Add([]byte(`{"type":"header","format":"attkit-records","major":1,"minor":0,"trace":{"run":1}}` + "\n" +
		`{"type":"wave","begin_time":0,"end_time":-9,"instructions":[{"pc":{"address":256,"code_object_id":1},"time":3}]}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := runTool(t, data, "--index", idx, "--merge-runs", "-")
		switch r.code {
		case 0:
			d, raw := pageJSON(t, r.stdout)
			if strings.ContainsAny(raw, "<>") || d == nil {
				t.Fatalf("bad data element")
			}
		case 1, 2, 3:
			if !strings.HasPrefix(r.stderr, "att-report: ") {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
		default:
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
	})
}
