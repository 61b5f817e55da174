package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/attkit/attkit/internal/wire"
)

// recount is an independent recomputation of python-layer §4.1 and §4.2
// over the expected records, written plainly from the spec text: a map
// keyed by "codeobj:address", line numbers handed out in first-touch order
// after the index's. Unless csvOnly, it also does what §5.6 says the wave
// writer does after each wave: ask the line of every instruction, which
// gives the unresolved PC (0, 0) ("0:0") an entry once a wave holds one.
type recount struct {
	counts  map[string]*[5]int64 // hit, latency, stall, idle, line
	next    int64
	csvOnly bool
}

func newRecount(ix *wire.Index) *recount {
	r := &recount{counts: map[string]*[5]int64{}, next: 1}
	for _, row := range ix.Rows {
		if strings.HasPrefix(row.Text, ";") || strings.HasPrefix(row.Text, "label") {
			continue
		}
		r.counts[fmt.Sprintf("%d:%d", row.CodeObj, row.Vaddr)] = &[5]int64{0, 0, 0, 0, row.Line}
		if row.Line+1 > r.next {
			r.next = row.Line + 1
		}
	}
	return r
}

func (r *recount) wave(w *wire.Wave) {
	prevEnd := w.BeginTime
	unresolved := false
	for _, in := range w.Instructions {
		if in.PC.Address == 0 && in.PC.CodeObjectID == 0 {
			unresolved = true
			continue
		}
		k := fmt.Sprintf("%d:%d", in.PC.CodeObjectID, in.PC.Address)
		c := r.counts[k]
		if c == nil {
			c = &[5]int64{0, 0, 0, 0, r.next}
			r.next++
			r.counts[k] = c
		}
		lat := int64(in.Duration)
		if int64(in.Stall) > lat {
			lat = int64(in.Stall)
		}
		c[0]++
		c[1] += lat
		c[2] += int64(in.Stall)
		if in.Time > prevEnd {
			c[3] += in.Time - prevEnd
		}
		if in.Time+lat > prevEnd {
			prevEnd = in.Time + lat
		}
	}
	if unresolved && !r.csvOnly && r.counts["0:0"] == nil {
		r.counts["0:0"] = &[5]int64{0, 0, 0, 0, r.next}
		r.next++
	}
}

// randomTrace makes an index of two code objects and a multi-part stream
// of random waves: PCs mostly from the index, some absent from it, some
// (0, 0); stalls above and below durations; times that go back.
func randomTrace(t *testing.T, dir string, seed uint64) (idx, stream string, ix *wire.Index, parts [][]wire.Batch) {
	rng := rand.New(rand.NewPCG(seed, 7))
	ix = &wire.Index{}
	line := int64(1)
	var pcs []wire.PC
	for co := uint64(1); co <= 2; co++ {
		ix.Rows = append(ix.Rows, wire.Row{Kind: wire.RowFunction, CodeObj: co, Vaddr: 0x1000, Text: fmt.Sprintf("; _k%d", co), Source: fmt.Sprintf("k%d", co), Line: line})
		line++
		for i := range 40 {
			a := 0x1000 + 4*uint64(i)
			ix.Rows = append(ix.Rows, wire.Row{CodeObj: co, Vaddr: a, Text: fmt.Sprintf("v_op%d v%d, v%d", i, i, co), Source: fmt.Sprintf("/s/k.hip:%d", 10+i/3), Line: line})
			line++
			pcs = append(pcs, wire.PC{Address: a, CodeObjectID: co})
		}
	}
	idx = writeIndex(t, filepath.Join(dir, "r.idx"), ix)
	var b bytes.Buffer
	w := wire.NewWriter(&b)
	for p := range 3 {
		w.WriteHeader(&wire.Header{Producer: "test", Trace: wire.Trace{Path: "t.att", SE: p, Run: 1}})
		var batches []wire.Batch
		for range 1 + rng.IntN(4) {
			var waves []wire.Wave
			for range 1 + rng.IntN(5) {
				wv := wire.Wave{SIMD: uint8(rng.IntN(4)), BeginTime: rng.Int64N(1000)}
				tm := wv.BeginTime + rng.Int64N(20) - 5
				for range rng.IntN(300) {
					var pc wire.PC
					switch x := rng.IntN(100); {
					case x < 3:
					case x < 8:
						pc = wire.PC{Address: 0x9000 + 4*uint64(rng.IntN(5)), CodeObjectID: uint64(rng.IntN(4))}
					default:
						pc = pcs[rng.IntN(len(pcs))]
					}
					in := wire.Instruction{Category: wire.CatVALU, Stall: uint32(rng.IntN(30)),
						Duration: int32(rng.IntN(40) - 2), Time: tm, PC: pc}
					wv.Instructions = append(wv.Instructions, in)
					tm += rng.Int64N(30) - 3
				}
				waves = append(waves, wv)
			}
			batches = append(batches, wire.Batch{Type: wire.TypeWave, Waves: waves})
			w.WriteBatch(&wire.Batch{Type: wire.TypeInfo, Info: []wire.Info{wire.InfoDataLost}})
			w.WriteBatch(&batches[len(batches)-1])
		}
		parts = append(parts, batches)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	stream = filepath.Join(dir, "r.rec")
	os.WriteFile(stream, b.Bytes(), 0o644)
	return
}

type jsonRow struct {
	CodeObj, Vaddr                 uint64
	Line                           int64
	Instruction                    string
	Hitcount, Latency, Stall, Idle int64
}

func TestRecomputeRandom(t *testing.T) {
	for seed := range uint64(8) {
		dir := t.TempDir()
		idx, stream, ix, parts := randomTrace(t, dir, seed)
		want := newRecount(ix)
		for _, p := range parts {
			for _, b := range p {
				for i := range b.Waves {
					want.wave(&b.Waves[i])
				}
			}
		}
		r := runTool(t, nil, "--index", idx, "--format", "json", stream)
		if r.code != 0 {
			t.Fatalf("seed %d: exit %d: %s", seed, r.code, r.stderr)
		}
		got := map[string]jsonRow{}
		var order []string
		dec := json.NewDecoder(strings.NewReader(r.stdout))
		for dec.More() {
			var row jsonRow
			if err := dec.Decode(&row); err != nil {
				t.Fatal(err)
			}
			k := fmt.Sprintf("%d:%d", row.CodeObj, row.Vaddr)
			got[k] = row
			order = append(order, k)
		}
		if len(got) != len(want.counts) {
			t.Errorf("seed %d: %d PCs, want %d", seed, len(got), len(want.counts))
		}
		for k, c := range want.counts {
			g, ok := got[k]
			if !ok {
				t.Errorf("seed %d: PC %s missing", seed, k)
				continue
			}
			if [5]int64{g.Hitcount, g.Latency, g.Stall, g.Idle, g.Line} != *c {
				t.Errorf("seed %d: PC %s: got hit/lat/stall/idle/line %d/%d/%d/%d/%d, want %v",
					seed, k, g.Hitcount, g.Latency, g.Stall, g.Idle, g.Line, *c)
			}
		}
		// The PCs the index lacks come last, by (code object, address).
		var tail []jsonRow
		for _, k := range order {
			if got[k].Instruction == "" {
				tail = append(tail, got[k])
			}
		}
		if !sort.SliceIsSorted(tail, func(i, j int) bool {
			if tail[i].CodeObj != tail[j].CodeObj {
				return tail[i].CodeObj < tail[j].CodeObj
			}
			return tail[i].Vaddr < tail[j].Vaddr
		}) || len(tail) > 0 && order[len(order)-len(tail)] != fmt.Sprintf("%d:%d", tail[0].CodeObj, tail[0].Vaddr) {
			t.Errorf("seed %d: new PCs not last in (code object, address) order: %v", seed, order)
		}
		// The pprof profile holds the same totals, one sample per hit PC.
		rp := runTool(t, nil, "--index", idx, "--format", "pprof", stream)
		prof, err := profile.ParseData([]byte(rp.stdout))
		if rp.code != 0 || err != nil {
			t.Fatalf("seed %d: pprof exit %d, %v: %s", seed, rp.code, err, rp.stderr)
		}
		var sum, wantSum [4]int64
		for _, smp := range prof.Sample {
			for i := range sum {
				sum[i] += smp.Value[i]
			}
		}
		for _, c := range want.counts {
			for i := range wantSum {
				wantSum[i] += c[i]
			}
		}
		if sum != wantSum || len(prof.Mapping) < 2 {
			t.Errorf("seed %d: pprof totals %v, want %v; %d mappings", seed, sum, wantSum, len(prof.Mapping))
		}
		// CSV and code.json agree with the JSON view.
		rc := runTool(t, nil, "--index", idx, stream)
		rj := runTool(t, nil, "--index", idx, "--format", "code.json", stream)
		cix, err := wire.ParseCodeJSON([]byte(rj.stdout))
		if rc.code != 0 || rj.code != 0 || err != nil {
			t.Fatalf("seed %d: csv exit %d, code.json exit %d, %v", seed, rc.code, rj.code, err)
		}
		for _, row := range cix.Rows {
			if row.IsLabel() {
				continue
			}
			k := fmt.Sprintf("%d:%d", row.CodeObj, row.Vaddr)
			c := want.counts[k]
			if c == nil {
				t.Errorf("seed %d: code.json row %+v of a PC the recount lacks", seed, row)
				continue
			}
			if [5]int64{row.Hit, row.Latency, row.Stall, row.Idle, row.Line} != *c {
				t.Errorf("seed %d: code.json row %+v, want %v", seed, row, c)
			}
			text := row.Text
			if strings.Contains(text, ",") {
				text = `"` + text + `"`
			}
			line := fmt.Sprintf("\r\n%d,%d,%s,%d,%d,%d,%d,", row.CodeObj, row.Vaddr, text, c[0], c[1], c[2], c[3])
			if !strings.Contains(rc.stdout, line) {
				t.Errorf("seed %d: CSV lacks %q", seed, line)
			}
		}
		// Every seed has unresolved instructions: the row of (0, 0) follows
		// the index's rows, first of the PCs the index lacks, and
		// --csv-only writes the same bytes without it.
		lines := strings.SplitAfter(rc.stdout, "\r\n")
		if n := 1 + len(ix.Rows); len(lines) <= n || lines[n] != "0,0,,0,0,0,0,\r\n" {
			t.Errorf("seed %d: CSV row %d is not the unresolved PC's:\n%s", seed, n, rc.stdout)
		} else {
			ro := runTool(t, nil, "--index", idx, "--csv-only", stream)
			if wantOnly := strings.Join(slices.Delete(lines, n, n+1), ""); ro.code != 0 || ro.stdout != wantOnly {
				t.Errorf("seed %d: --csv-only: exit %d, CSV\n%s\nwant\n%s", seed, ro.code, ro.stdout, wantOnly)
			}
		}
	}
}
