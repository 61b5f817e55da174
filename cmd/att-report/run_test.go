package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/report"
	"github.com/attkit/attkit/internal/wire"
)

type result struct {
	code           int
	stdout, stderr string
}

func runTool(t testing.TB, stdin []byte, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, bytes.NewReader(stdin), &out, &errb)
	return result{code, out.String(), errb.String()}
}

type streamPart struct {
	run, se int
	occ     []wire.Occupancy
	waves   []wire.Wave
}

func writeStream(t testing.TB, path string, parts ...streamPart) string {
	t.Helper()
	var b bytes.Buffer
	for _, p := range parts {
		var batches []wire.Batch
		if len(p.occ) > 0 {
			batches = append(batches, wire.Batch{Type: wire.TypeOccupancy, Occupancy: p.occ})
		}
		for i := range p.waves {
			batches = append(batches, wire.Batch{Type: wire.TypeWave, Waves: p.waves[i : i+1]})
		}
		if err := wire.WriteStream(&b, &wire.Header{Producer: "att-report test", Backend: "native",
			Trace: wire.Trace{Path: "x.att", SE: p.se, Run: p.run, GFXIP: 9}}, batches...); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeIndex(t testing.TB, path string, ix *wire.Index) string {
	t.Helper()
	var b bytes.Buffer
	if err := wire.WriteIndex(&b, ix); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func pc(addr uint64) wire.PC { return wire.PC{Address: addr, CodeObjectID: 1} }

func inst(addr uint64, time int64, stall uint32, dur int32) wire.Instruction {
	return wire.Instruction{Category: wire.CatSALU, Stall: stall, Duration: dur, Time: time, PC: pc(addr)}
}

// twoKernels is an index of two kernels, "alpha" at 0x100 (three
// instructions on two source lines, one inlined from helper.h) and
// "beta</script><!--" at 0x200 (two instructions, no source), whose name
// must not close the page's script element.
func twoKernels() *wire.Index {
	row := func(kind wire.RowKind, addr uint64, text, src string) wire.Row {
		return wire.Row{Kind: kind, CodeObj: 1, Vaddr: addr, Size: 4, Text: text, Source: src}
	}
	return &wire.Index{
		Objects: []wire.CodeObject{{ID: 1, Path: "/k.hsaco", Target: "gfx942"}},
		Rows: []wire.Row{
			row(wire.RowFunction, 0x100, "; _alpha", "alpha"),
			row(wire.RowInstruction, 0x100, "s_mov_b32 s0, 0", "k.cl:3"),
			inlined(row(wire.RowInstruction, 0x104, "v_add_f32 v0, v1, v2", "helper.h:8 -> k.cl:4")),
			row(wire.RowInstruction, 0x108, "s_endpgm", "k.cl:3"),
			row(wire.RowFunction, 0x200, "; _beta", "beta</script><!--"),
			row(wire.RowInstruction, 0x200, "s_nop 0", ""),
			row(wire.RowInstruction, 0x204, "s_endpgm", ""),
		},
	}
}

func inlined(r wire.Row) wire.Row {
	r.Inline = []wire.InlineFrame{{Function: "helper", File: "helper.h", Line: 8}, {Function: "alpha", File: "k.cl", Line: 4}}
	return r
}

// pageJSON extracts and decodes the data element of a page.
func pageJSON(t testing.TB, page string) (*report.Data, string) {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script type="application/json" id="data">(.*?)</script>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no data element in the page")
	}
	var d report.Data
	if err := json.Unmarshal([]byte(m[1]), &d); err != nil {
		t.Fatalf("data element: %v", err)
	}
	return &d, m[1]
}

// TestReportCounters checks the data of a small hand-made trace against
// counters worked out by hand (python-layer §4.1 for latency, stall and
// idle; no other SIMD runs, so nothing is hidden and exposed = latency +
// idle).
func TestReportCounters(t *testing.T) {
	dir := t.TempDir()
	idx := writeIndex(t, filepath.Join(dir, "k.idx"), twoKernels())
	// alpha, wave 1: 0x100 at 10 (stall 2, dur 4: lat 4, idle 10-0=10),
	// 0x104 at 20 (stall 0, dur 6: lat 6, idle 20-14=6), 0x108 at 26
	// (lat 1, idle 0). Wave 2 runs 0x100 at 105 (lat 3, idle 5).
	// beta, wave 3: 0x200 at 1000 (stall 8, dur 3: lat 8, idle 0).
	w1 := wire.Wave{SIMD: 0, BeginTime: 0, EndTime: 30, Instructions: []wire.Instruction{
		inst(0x100, 10, 2, 4), inst(0x104, 20, 0, 6), inst(0x108, 26, 0, 1)}}
	w2 := wire.Wave{SIMD: 1, BeginTime: 100, EndTime: 140, Instructions: []wire.Instruction{inst(0x100, 105, 0, 3)}}
	w3 := wire.Wave{SIMD: 2, BeginTime: 1000, EndTime: 1500, Instructions: []wire.Instruction{inst(0x200, 1000, 8, 3)}}
	occ := []wire.Occupancy{{Time: 0, Start: true}, {Time: 100, Start: true}, {Time: 30}, {Time: 140}}
	s0 := writeStream(t, filepath.Join(dir, "se0.rec"), streamPart{run: 1, se: 0, occ: occ, waves: []wire.Wave{w1, w2}})
	s1 := writeStream(t, filepath.Join(dir, "se1.rec"), streamPart{run: 1, se: 1, waves: []wire.Wave{w3}})
	out := filepath.Join(dir, "r.html")
	r := runTool(t, nil, "--index", idx, "-o", out, "--title", "T<&>", s0, s1)
	if r.code != 0 || r.stderr != "" || r.stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if !strings.Contains(page, "<title>T&lt;&amp;&gt;</title>") {
		t.Errorf("title not escaped")
	}
	d, raw := pageJSON(t, page)
	if strings.Contains(raw, "<") || strings.Contains(raw, ">") {
		t.Errorf("the data element holds a raw < or >")
	}
	if len(d.Kernels) != 2 || d.Kernels[0].Name != "alpha" || d.Kernels[1].Name != "beta</script><!--" {
		t.Fatalf("kernels %+v", d.Kernels)
	}
	a, be := d.Kernels[0], d.Kernels[1]
	type sums struct{ waves, insts, cycles, lat, stall, idle, exp, hid int64 }
	got := sums{a.Waves, a.Insts, a.Cycles, a.Latency, a.Stall, a.Idle, a.Exposed, a.Hidden}
	if want := (sums{2, 4, 30 + 40, 4 + 6 + 1 + 3, 2, 10 + 6 + 5, 14 + 21, 0}); got != want {
		t.Errorf("alpha: got %+v, want %+v", got, want)
	}
	got = sums{be.Waves, be.Insts, be.Cycles, be.Latency, be.Stall, be.Idle, be.Exposed, be.Hidden}
	if want := (sums{1, 1, 500, 8, 8, 0, 8, 0}); got != want {
		t.Errorf("beta: got %+v, want %+v", got, want)
	}
	if a.MinWave != 30 || a.MaxWave != 40 || a.MeanWave != 35 || a.First != 0 || a.Count != 3 || be.First != 3 || be.Count != 2 {
		t.Errorf("alpha %+v beta %+v", a, be)
	}
	in := d.Insts
	if fmt.Sprint(in.Addr) != "[256 260 264 512 516]" || fmt.Sprint(in.Hit) != "[2 1 1 1 0]" ||
		fmt.Sprint(in.Latency) != "[7 6 1 8 0]" || fmt.Sprint(in.Idle) != "[15 6 0 0 0]" {
		t.Errorf("per PC: addr %v hit %v latency %v idle %v", in.Addr, in.Hit, in.Latency, in.Idle)
	}
	if in.Src[1] < 0 || in.Srcs[in.Src[1]] != "helper.h:8 -> k.cl:4" || in.Src[3] != -1 {
		t.Errorf("source chains: %v %v", in.Src, in.Srcs)
	}
	if in.Chain[0] != -1 || in.Chain[1] < 0 || fmt.Sprint(in.Chains[in.Chain[1]]) != "[{helper helper.h 8} {alpha k.cl 4}]" {
		t.Errorf("inline chains: %v %v", in.Chain, in.Chains)
	}
	// Lines: k.cl:3 holds 0x100 and 0x108, helper.h:8 holds 0x104 (the
	// innermost frame of its chain).
	ln := d.Lines
	if a.LineCount != 2 || be.LineCount != 0 || len(ln.Line) != 2 {
		t.Fatalf("lines %+v", ln)
	}
	for l := range ln.Line {
		f := d.Files[ln.File[l]].Path
		var hit, lat int64
		for i := a.First; i < a.First+a.Count; i++ {
			if in.Line[i] == l {
				hit += in.Hit[i]
				lat += in.Latency[i]
			}
		}
		if ln.Hit[l] != hit || ln.Latency[l] != lat {
			t.Errorf("line %s:%d: hits %d latency %d, its PCs sum to %d, %d", f, ln.Line[l], ln.Hit[l], ln.Latency[l], hit, lat)
		}
		switch fmt.Sprintf("%s:%d", f, ln.Line[l]) {
		case "k.cl:3":
			if ln.PCs[l] != 2 || ln.Hit[l] != 3 {
				t.Errorf("k.cl:3: %d PCs, %d hits", ln.PCs[l], ln.Hit[l])
			}
		case "helper.h:8":
			if ln.PCs[l] != 1 || ln.Hit[l] != 1 {
				t.Errorf("helper.h:8: %d PCs, %d hits", ln.PCs[l], ln.Hit[l])
			}
		default:
			t.Errorf("unexpected line %s:%d", f, ln.Line[l])
		}
	}
	// The hottest PCs: 0x100 (22 exposed), 0x104 (12), 0x200 (8), 0x108 (1).
	if fmt.Sprint(d.Top) != "[0 1 3 2]" {
		t.Errorf("top %v", d.Top)
	}
	// Occupancy: SE 0 from its records (one wave in [0, 30), one in
	// [100, 140)), SE 1 from its waves ([1000, 1500)).
	if len(d.SEs) != 2 || d.SEs[0].Source != "occupancy" || d.SEs[1].Source != "waves" || d.SEs[0].Peak != 1 {
		t.Fatalf("ses %+v", d.SEs)
	}
	s := d.SEs[0]
	var area float64
	for _, v := range s.Avg {
		area += v * float64(s.Width)
	}
	if math.Abs(area-70) > 1 {
		t.Errorf("SE 0: %v wave-cycles in flight, want 70 (%+v)", area, s)
	}
	// Histogram: alpha's 30 and 40 in their bins.
	var n int64
	for _, b := range a.Hist {
		n += b.Count
		if b.Count > 0 && !(b.Lo <= 30 && b.Hi > 30 || b.Lo <= 40 && b.Hi > 40) {
			t.Errorf("bin [%d, %d) holds %d", b.Lo, b.Hi, b.Count)
		}
	}
	if n != 2 {
		t.Errorf("alpha's histogram holds %d waves", n)
	}
}

func TestReportErrors(t *testing.T) {
	dir := t.TempDir()
	idx := writeIndex(t, filepath.Join(dir, "k.idx"), twoKernels())
	w := wire.Wave{BeginTime: 0, EndTime: 10, Instructions: []wire.Instruction{inst(0x100, 1, 0, 1)}}
	runs := writeStream(t, filepath.Join(dir, "runs.rec"), streamPart{run: 1, waves: []wire.Wave{w}}, streamPart{run: 2, waves: []wire.Wave{w}})
	junk := filepath.Join(dir, "junk")
	os.WriteFile(junk, []byte("not a stream\n"), 0o644)
	other := writeIndex(t, filepath.Join(dir, "other.idx"), &wire.Index{Rows: []wire.Row{{CodeObj: 7, Vaddr: 0x100, Text: "s_nop 0"}}})
	out := filepath.Join(dir, "r.html")
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--index", idx, "-o", out, runs}, 2, "--run N"},
		{[]string{"--index", idx, "-o", out, "--run", "3", runs}, 1, "no part of the input is run 3"},
		{[]string{"--index", idx, "-o", out, junk}, 3, ""},
		{[]string{"--index", other, "-o", out, "--run", "1", runs}, 1, "matches none"},
		{[]string{"--run", "1", "--merge-runs", runs}, 2, "exclude"},
	} {
		r := runTool(t, nil, c.args...)
		if r.code != c.code || !strings.HasPrefix(r.stderr, "att-report: ") || !strings.Contains(r.stderr, c.msg) {
			t.Errorf("%q: exit %d, stderr %q; want %d, %q", c.args, r.code, r.stderr, c.code, c.msg)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%q: wrote %s", c.args, out)
		}
	}
	// --merge-runs and --run N succeed; stdin is read for "-".
	b, _ := os.ReadFile(runs)
	for _, args := range [][]string{{"--index", idx, "--merge-runs", runs}, {"--index", idx, "--run", "2", "-"}} {
		r := runTool(t, b, args...)
		if r.code != 0 {
			t.Fatalf("%q: exit %d: %s", args, r.code, r.stderr)
		}
		d, _ := pageJSON(t, r.stdout)
		want := int64(2)
		if args[2] == "--run" {
			want = 1
		}
		if d.Kernels[0].Waves != want {
			t.Errorf("%q: %d waves, want %d", args, d.Kernels[0].Waves, want)
		}
	}
}

// TestReportSelect: --wave slowest keeps alpha's 40-cycle wave, --kernel
// 'beta</*' beta's only; the other kernels stay listed, with no wave.
func TestReportSelect(t *testing.T) {
	dir := t.TempDir()
	idx := writeIndex(t, filepath.Join(dir, "k.idx"), twoKernels())
	w1 := wire.Wave{SIMD: 0, BeginTime: 0, EndTime: 30, Instructions: []wire.Instruction{inst(0x100, 10, 2, 4), inst(0x104, 20, 0, 6)}}
	w2 := wire.Wave{SIMD: 1, BeginTime: 100, EndTime: 140, Instructions: []wire.Instruction{inst(0x100, 105, 0, 3)}}
	w3 := wire.Wave{SIMD: 2, BeginTime: 1000, EndTime: 1020, Instructions: []wire.Instruction{inst(0x200, 1000, 8, 3)}}
	s := writeStream(t, filepath.Join(dir, "se0.rec"), streamPart{run: 1, waves: []wire.Wave{w1, w2, w3}})
	b, _ := os.ReadFile(s)
	for _, c := range []struct {
		args          []string
		alpha, beta   int64 // waves
		alphaInsts    int64
		alphaMaxCycle int64
	}{
		{[]string{"--wave", "slowest", s}, 1, 0, 1, 40},
		{[]string{"--wave", "fastest", "-"}, 0, 1, 0, 0},
		{[]string{"--kernel", "beta</*", s}, 0, 1, 0, 0},
		{[]string{"--wave", "se0.cu0.simd0.slot0@0", s}, 1, 0, 2, 30},
	} {
		r := runTool(t, b, append([]string{"--index", idx}, c.args...)...)
		if r.code != 0 {
			t.Fatalf("%q: exit %d: %s", c.args, r.code, r.stderr)
		}
		d, _ := pageJSON(t, r.stdout)
		a, be := d.Kernels[0], d.Kernels[1]
		if a.Waves != c.alpha || be.Waves != c.beta || a.Insts != c.alphaInsts || a.MaxWave != c.alphaMaxCycle {
			t.Errorf("%q: alpha %d waves, %d instructions, max %d; beta %d waves", c.args, a.Waves, a.Insts, a.MaxWave, be.Waves)
		}
	}
	r := runTool(t, nil, "--index", idx, "--kernel", "gamma", s)
	if r.code != 1 || !strings.Contains(r.stderr, "alpha") {
		t.Errorf("--kernel gamma: exit %d, %s", r.code, r.stderr)
	}
}

// TestReportNoLabels: an index without function labels (a code.json, as
// real captures have) makes one kernel of its code object, named as
// waveselect names its waves' kernel, so that the waves and the PCs meet.
func TestReportNoLabels(t *testing.T) {
	dir := t.TempDir()
	var ix wire.Index
	for _, r := range twoKernels().Rows {
		if r.Kind == wire.RowInstruction {
			ix.Rows = append(ix.Rows, r)
		}
	}
	idx := writeIndex(t, filepath.Join(dir, "k.idx"), &ix)
	w := wire.Wave{BeginTime: 0, EndTime: 30, Instructions: []wire.Instruction{inst(0x100, 10, 2, 4), inst(0x104, 20, 0, 6)}}
	s := writeStream(t, filepath.Join(dir, "se0.rec"), streamPart{run: 1, waves: []wire.Wave{w}})
	r := runTool(t, nil, "--index", idx, s)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	d, _ := pageJSON(t, r.stdout)
	if len(d.Kernels) != 1 || !strings.Contains(d.Kernels[0].Name, "0x100") || d.Kernels[0].Waves != 1 || d.Kernels[0].Insts != 2 || d.Kernels[0].Count != 5 {
		t.Errorf("kernels %+v", d.Kernels)
	}
}
