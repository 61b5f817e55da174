package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/waveselect"
	"github.com/attkit/attkit/internal/wire"
)

// selectInput: exampleIndex's kernel mykernel (4864..) and a second one,
// other (5000..), each with its dispatch (queues (1, 0) and (1, 1)), and
// 200 waves of random durations, alternately of each.
func selectInput(t *testing.T) (idx, stream string, ws []wire.Wave) {
	dir := t.TempDir()
	ix := exampleIndex()
	ix.Rows = append(ix.Rows, wire.Row{Kind: wire.RowInstruction, CodeObj: 1, Vaddr: 5000, Size: 4, Text: "s_endpgm", Line: 12})
	ix.Kernels = append(ix.Kernels, wire.Kernel{Address: 5000, CodeObj: 1, Name: "other"})
	idx = writeIndex(t, filepath.Join(dir, "k.idx"), ix)
	r := rand.New(rand.NewPCG(7, 8))
	for i := range 200 {
		w := workedWave(uint8(i % 4))
		w.CU, w.WaveID = uint8(i%5), uint8(i%10)
		w.BeginTime = int64(i * 10)
		w.EndTime = w.BeginTime + 50 + r.Int64N(3000)
		w.Dispatcher = 0x10
		if i%2 == 1 {
			w.Dispatcher = 0x11
			w.Instructions = []wire.Instruction{inst(pc(1, 5000), w.BeginTime, 0, 4)}
		}
		ws = append(ws, w)
	}
	batches := []wire.Batch{{Type: wire.TypeDispatch, Dispatches: []wire.Dispatch{
		{MEID: 1, EntryPoint: pc(1, 4864)}, {MEID: 1, PipeID: 1, EntryPoint: pc(1, 5000)}}}}
	for i := 0; i < len(ws); i += 7 {
		batches = append(batches, wire.Batch{Type: wire.TypeWave, Waves: ws[i:min(i+7, len(ws))]})
	}
	var b bytes.Buffer
	if err := wire.WriteStream(&b, &wire.Header{Producer: "test", Trace: wire.Trace{SE: 2, Run: 1, GFXIP: 9}}, batches...); err != nil {
		t.Fatal(err)
	}
	stream = filepath.Join(dir, "s.rec")
	if err := os.WriteFile(stream, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return idx, stream, ws
}

func hitsAt(t *testing.T, jsonl string, vaddr uint64) int64 {
	for _, l := range strings.Split(strings.TrimSpace(jsonl), "\n") {
		var r struct {
			Vaddr    uint64 `json:"vaddr"`
			Hitcount int64  `json:"hitcount"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.Vaddr == vaddr {
			return r.Hitcount
		}
	}
	return 0
}

func TestSelectKernelDispatch(t *testing.T) {
	idx, s, _ := selectInput(t)
	for _, c := range []struct {
		args        []string
		mine, other int64
	}{
		{nil, 100, 100},
		{[]string{"--kernel", "my*"}, 100, 0},
		{[]string{"--kernel", "oth?r", "--kernel", "x*"}, 0, 0}, // x* matches nothing: error
		{[]string{"--kernel", "other"}, 0, 100},
		{[]string{"--dispatch", "1"}, 0, 100},
		{[]string{"--dispatch", "0", "--dispatch", "1"}, 100, 100},
		{[]string{"--kernel", "other", "--jq", ".cu == 1"}, 0, 20},
	} {
		r := runTool(t, nil, append([]string{"--index", idx, "--format", "json", s}, c.args...)...)
		if c.args != nil && c.args[len(c.args)-1] == "x*" {
			if r.code != 1 || !strings.Contains(r.stderr, `--kernel "x*" matched no wave; the input's 200 waves belong to kernels mykernel (100 waves), other (100 waves)`) {
				t.Errorf("%v: exit %d, %q", c.args, r.code, r.stderr)
			}
			continue
		}
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, r.code, r.stderr)
		}
		if m, o := hitsAt(t, r.stdout, 4864), hitsAt(t, r.stdout, 5000); m != c.mine || o != c.other {
			t.Errorf("%v: hits %d and %d, want %d and %d", c.args, m, o, c.mine, c.other)
		}
	}
	for _, args := range [][]string{{"--kernel", "[x"}, {"--dispatch", "one"}, {"--wave", "longest"}} {
		if r := runTool(t, nil, append([]string{s}, args...)...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, r.code, r.stderr)
		}
	}
}

// TestSelectWave: --wave slowest|fastest keeps the first wave of the
// extreme duration, from a file and from standard input, and --wave ID
// the wave the histogram names.
func TestSelectWave(t *testing.T) {
	idx, s, ws := selectInput(t)
	data, err := os.ReadFile(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, which := range []string{"slowest", "fastest"} {
		for _, kernel := range []string{"*", "other"} {
			best := -1
			for i, w := range ws {
				if kernel == "other" && i%2 == 0 {
					continue
				}
				d, bd := w.EndTime-w.BeginTime, int64(0)
				if best >= 0 {
					bd = ws[best].EndTime - ws[best].BeginTime
				}
				if best < 0 || which == "slowest" && d > bd || which == "fastest" && d < bd {
					best = i
				}
			}
			b := ws[best]
			id := fmt.Sprintf("se2.cu%d.simd%d.slot%d@%d", b.CU, b.SIMD, b.WaveID, b.BeginTime)
			for _, in := range []string{s, "-"} {
				r := runTool(t, data, "--index", idx, "--wave", which, "--kernel", kernel, "--format", "histogram.json", "--progress", in)
				var h waveselect.JSONKernel
				if err := json.Unmarshal([]byte(r.stdout), &h); r.code != 0 || err != nil || h.Waves != 1 || h.Slowest != id {
					t.Errorf("--wave %s --kernel %s %s: exit %d, %+v, want %s\n%s", which, kernel, in, r.code, h, id, r.stderr)
				}
				if !strings.Contains(r.stderr, "--wave "+which+": "+id) {
					t.Errorf("stderr %q does not name %s", r.stderr, id)
				}
			}
			r := runTool(t, nil, "--index", idx, "--wave", id, "--format", "json", s)
			want := int64(1)
			if best%2 == 1 {
				want = 0
			}
			if r.code != 0 || hitsAt(t, r.stdout, 4864) != want {
				t.Errorf("--wave %s: exit %d %s", id, r.code, r.stderr)
			}
		}
	}
	if r := runTool(t, nil, "--index", idx, "--wave", "se2.cu0.simd0.slot0@1", s); r.code != 1 || !strings.Contains(r.stderr, "no such wave") {
		t.Errorf("unknown wave: exit %d %q", r.code, r.stderr)
	}
}

// TestHistogramCounts checks --format histogram.json against the waves.
func TestHistogramCounts(t *testing.T) {
	idx, s, ws := selectInput(t)
	r := runTool(t, nil, "--index", idx, "--format", "histogram.json", s)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d kernels:\n%s", len(lines), r.stdout)
	}
	for k, l := range lines {
		var h waveselect.JSONKernel
		if err := json.Unmarshal([]byte(l), &h); err != nil {
			t.Fatal(err)
		}
		if want := []string{"mykernel", "other"}[k]; h.Kernel != want {
			t.Errorf("kernel %q, want %q", h.Kernel, want)
		}
		var n int64
		for _, b := range h.Bins {
			var want int64
			for i, w := range ws {
				if d := w.EndTime - w.BeginTime; i%2 == k && d >= b.Lo && d < b.Hi {
					want++
				}
			}
			if b.Count != want {
				t.Errorf("%s [%d, %d): %d waves, want %d", h.Kernel, b.Lo, b.Hi, b.Count, want)
			}
			n += b.Count
		}
		if n != 100 || h.Waves != 100 {
			t.Errorf("%s: %d binned of %d, want 100", h.Kernel, n, h.Waves)
		}
	}
	r = runTool(t, nil, "--index", idx, "--format", "histogram", "--kernel", "other", s)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "kernel other: 100 waves, duration min ") || strings.Contains(r.stdout, "mykernel") {
		t.Errorf("text: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
