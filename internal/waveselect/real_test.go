package waveselect

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

// TestRealCaptures selects kernels and dispatches on the real captures:
// per architecture, the records of AMD's newest library (expected-0.3.0)
// of the gemm and the plus capture read as one input, with one index of
// both code objects (their code.json rows, and each kernel at its first
// row, named as capture.json names it, as co-index would). The
// waves kept by --kernel K are exactly those whose first PC lies in K's
// code (from K's first row to past its last row in K's own code.json),
// plus the waves without instructions of the traces that launched K;
// every other record passes unchanged.
func TestRealCaptures(t *testing.T) {
	caps := map[string]testutil.RealCapture{}
	for _, c := range testutil.RealCorpus(t) {
		caps[c.Name] = c
	}
	tested := 0
	for _, arch := range []string{"gfx1100", "gfx1200", "gfx950"} {
		gemm, ok1 := caps[arch+"_gemm_0"]
		plus, ok2 := caps[arch+"_plus_0"]
		if !ok1 || !ok2 {
			continue
		}
		t.Run(arch, func(t *testing.T) {
			ix := &wire.Index{}
			type span struct{ lo, hi uint64 }
			spans := map[string]span{}
			var paths []string
			owner := map[string]string{} // stream path -> kernel
			for _, c := range []testutil.RealCapture{gemm, plus} {
				cix, err := wire.ReadIndexFile(c.CodeJSON)
				if err != nil {
					t.Fatal(err)
				}
				sp := span{lo: ^uint64(0)}
				for _, r := range cix.Rows {
					if !r.IsLabel() && r.CodeObj == 0 {
						sp.lo, sp.hi = min(sp.lo, r.Vaddr), max(sp.hi, r.Vaddr+max(r.Size, 1))
					}
				}
				ix.Rows = append(ix.Rows, cix.Rows...)
				if sp.hi == 0 {
					t.Fatalf("%s: no instruction row of code object 0", c.Name)
				}
				name := c.CodeObjects[0].Kernel
				ix.Kernels = append(ix.Kernels, wire.Kernel{Address: sp.lo, Name: name})
				spans[name] = sp
				for _, tr := range c.Traces {
					p := filepath.Join(c.Dir, "expected-0.3.0", strings.TrimSuffix(filepath.Base(tr.File), ".att")+".jsonl")
					paths = append(paths, p)
					owner[p] = name
				}
			}
			all := readAll(t, nil, paths)
			for name, sp := range spans {
				s, err := New(ix, Options{Kernels: []string{name}})
				if err != nil {
					t.Fatal(err)
				}
				got := readAll(t, s, paths)
				var want []string
				for _, w := range all.waves {
					if len(w.first) > 0 && w.firstPC >= sp.lo && w.firstPC < sp.hi || len(w.first) == 0 && owner[w.path] == name {
						want = append(want, w.id)
					}
				}
				if err := s.Check(); len(want) > 0 && err != nil || len(want) == 0 && (err == nil || !strings.Contains(err.Error(), "matched no wave")) {
					t.Errorf("--kernel %s (%d waves): %v", name, len(want), err)
				}
				if strings.Join(got.ids(), " ") != strings.Join(want, " ") {
					t.Errorf("--kernel %s: %d waves kept, want %d", name, len(got.waves), len(want))
				}
				if got.others != all.others {
					t.Errorf("--kernel %s: other records changed", name)
				}
				if len(want) > 0 {
					tested++
				}
			}
			// Every trace saw one dispatch, 0, which launched all its waves.
			s, _ := New(ix, Options{Dispatches: []string{"0"}})
			if got := readAll(t, s, paths); len(got.waves) != len(all.waves) || s.Check() != nil || got.others != all.others {
				t.Errorf("--dispatch 0: %d of %d waves: %v", len(got.waves), len(all.waves), s.Check())
			}
			s, _ = New(ix, Options{Dispatches: []string{"1"}})
			readAll(t, s, paths)
			if err := s.Check(); err == nil || !strings.Contains(err.Error(), "to dispatches 0: ") {
				t.Errorf("--dispatch 1: %v", err)
			}
		})
	}
	if tested == 0 {
		t.Skip("no gemm and plus capture of one architecture in the corpus")
	}
}

type readWave struct {
	id, path string
	first    []wire.Instruction
	firstPC  uint64
}

type readResult struct {
	waves  []readWave
	others string // the other records, encoded
}

func (r readResult) ids() []string {
	var s []string
	for _, w := range r.waves {
		s = append(s, w.id)
	}
	return s
}

// readAll reads paths through s (nil: no selection).
func readAll(t *testing.T, s *Selector, paths []string) readResult {
	t.Helper()
	var res readResult
	var others []byte
	if s == nil {
		s, _ = New(nil, Options{})
	}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		rd := wire.NewReader(f, p)
		for rd.Scan() {
			if rd.Kind() == wire.KindHeader {
				s.BeginPart(rd.Header())
				continue
			}
			b := rd.Batch()
			s.Select(b)
			s.Pick(b)
			if b.Type != wire.TypeWave {
				others = wire.AppendBatch(others, b)
				continue
			}
			for i := range b.Waves {
				w := &b.Waves[i]
				rw := readWave{id: p + ":" + s.Describe(w).Key.String(), path: p}
				if len(w.Instructions) > 0 {
					rw.first, rw.firstPC = w.Instructions[:1], w.Instructions[0].PC.Address
				}
				res.waves = append(res.waves, rw)
			}
		}
		f.Close()
		if err := rd.Err(); err != nil {
			t.Fatal(err)
		}
	}
	res.others = string(others)
	return res
}
