package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

type part struct {
	run   int
	se    int
	waves []wire.Wave
}

// writeStream writes parts as one concatenated record stream, each wave in
// a batch of its own, with an occupancy batch in front that must not count.
func writeStream(t testing.TB, path string, parts ...part) string {
	t.Helper()
	var b bytes.Buffer
	for _, p := range parts {
		batches := []wire.Batch{{Type: wire.TypeOccupancy, Occupancy: []wire.Occupancy{{PC: wire.PC{Address: 4864, CodeObjectID: 1}, Start: true}}}}
		for i := range p.waves {
			batches = append(batches, wire.Batch{Type: wire.TypeWave, Waves: p.waves[i : i+1]})
		}
		if err := wire.WriteStream(&b, &wire.Header{Producer: "att-stats test", Backend: "native",
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

func pc(co, addr uint64) wire.PC { return wire.PC{Address: addr, CodeObjectID: co} }

func inst(p wire.PC, time int64, stall uint32, dur int32) wire.Instruction {
	return wire.Instruction{Category: wire.CatSALU, Stall: stall, Duration: dur, Time: time, PC: p}
}

// exampleIndex is the kernel of python-layer §3.7 with sources on two rows.
func exampleIndex() *wire.Index {
	row := func(kind wire.RowKind, text string, line int64, src string, vaddr uint64) wire.Row {
		return wire.Row{Kind: kind, CodeObj: 1, Vaddr: vaddr, Size: 4, Text: text, Source: src, Line: line}
	}
	return &wire.Index{
		Header:  wire.IndexHeader{Producer: "att-stats test"},
		Objects: []wire.CodeObject{{ID: 1, Path: "/abs/k.hsaco", Target: "gfx942"}},
		Rows: []wire.Row{
			row(wire.RowFunction, "; _mykernel", 1, "mykernel", 4864),
			row(wire.RowInstruction, "s_load_dwordx2 s[0:1], s[4:5], 0x0", 2, "/src/k.cl:3", 4864),
			row(wire.RowInstruction, "s_cmp_eq_u32 s2, 0", 3, "/src/k.cl:4", 4872),
			row(wire.RowInstruction, "s_cbranch_scc1 4", 4, "", 4876),
			row(wire.RowInstruction, "v_mov_b32_e32 v0, 1", 5, "", 4880),
			row(wire.RowLabel, "; _label_loop", 6, "", 4884),
			row(wire.RowInstruction, "s_sub_u32 s2, s2, 1", 7, "", 4884),
			row(wire.RowInstruction, "s_cmp_lg_u32 s2, 0", 8, "", 4888),
			row(wire.RowInstruction, "s_cbranch_scc1 65533", 9, "", 4892),
			row(wire.RowLabel, "; _label_end", 10, "", 4896),
			row(wire.RowInstruction, "s_endpgm", 11, "", 4896),
		},
		Kernels: []wire.Kernel{{Address: 4864, CodeObj: 1, Name: "mykernel", Demangled: "mykernel"}},
		Doc:     wire.DocMeta{Hsaco: []string{"/abs/k.hsaco"}},
	}
}

// workedWave is the wave of §4.1's worked example on the first four
// instructions, an unresolved instruction in the middle, and simd set.
func workedWave(simd uint8) wire.Wave {
	return wire.Wave{SIMD: simd, BeginTime: 100, EndTime: 200, Instructions: []wire.Instruction{
		inst(pc(1, 4864), 100, 0, 8),
		inst(pc(1, 4872), 110, 2, 6),
		inst(wire.PC{}, 111, 50, 500),
		inst(pc(1, 4876), 112, 0, 20),
		inst(pc(1, 4880), 140, 10, 4),
	}}
}

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

// TestWorkedExample pins all four formats for the §4.1 worked example run
// twice (once per SE) plus a PC the index lacks.
func TestWorkedExample(t *testing.T) {
	dir := t.TempDir()
	idx := writeIndex(t, filepath.Join(dir, "k.idx"), exampleIndex())
	extra := wire.Wave{BeginTime: 0, Instructions: []wire.Instruction{inst(pc(2, 0x40), 3, 1, 2)}}
	s := writeStream(t, filepath.Join(dir, "a.rec"),
		part{run: 1, se: 0, waves: []wire.Wave{workedWave(0)}},
		part{run: 1, se: 1, waves: []wire.Wave{workedWave(1), extra}})
	r := runTool(t, nil, "--index", idx, s)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	// Hand-computed: twice the §4.1 table; labels with zeros and their
	// column 3; never-hit rows with zeros; then, by (code object, address),
	// the unresolved PC (0, 0) with zeros (line 12: the first wave's
	// unresolved instruction asked for its line, §5.6) and the new PC (line
	// 13).
	want := "CodeObj,Vaddr,Instruction,Hitcount,Latency,Stall,Idle,Source\r\n" +
		"1,4864,; _mykernel,0,0,0,0,mykernel\r\n" +
		"1,4864,\"s_load_dwordx2 s[0:1], s[4:5], 0x0\",2,16,0,0,/src/k.cl:3\r\n" +
		"1,4872,\"s_cmp_eq_u32 s2, 0\",2,12,4,4,/src/k.cl:4\r\n" +
		"1,4876,s_cbranch_scc1 4,2,40,0,0,\r\n" +
		"1,4880,\"v_mov_b32_e32 v0, 1\",2,20,20,16,\r\n" +
		"1,4884,; _label_loop,0,0,0,0,\r\n" +
		"1,4884,\"s_sub_u32 s2, s2, 1\",0,0,0,0,\r\n" +
		"1,4888,\"s_cmp_lg_u32 s2, 0\",0,0,0,0,\r\n" +
		"1,4892,s_cbranch_scc1 65533,0,0,0,0,\r\n" +
		"1,4896,; _label_end,0,0,0,0,\r\n" +
		"1,4896,s_endpgm,0,0,0,0,\r\n" +
		"0,0,,0,0,0,0,\r\n" +
		"2,64,,1,2,1,3,\r\n"
	if r.stdout != want {
		t.Errorf("CSV:\n%q\nwant:\n%q", r.stdout, want)
	}
	// As att_tool.py --formats csv: the same rows but (0, 0)'s.
	if ro := runTool(t, nil, "--index", idx, "--csv-only", s); ro.code != 0 ||
		ro.stdout != strings.Replace(want, "\r\n0,0,,0,0,0,0,\r\n", "\r\n", 1) {
		t.Errorf("--csv-only: exit %d, CSV:\n%q", ro.code, ro.stdout)
	}
	if !strings.Contains(r.stderr, "warning: 1 of 9 executed instructions (1 PCs) are not in the index; they get rows without ISA text (missing PCs in code object 2 [0x40, 0x40]; index ") {
		t.Errorf("stderr lacks the partial-mismatch warning: %q", r.stderr)
	}
	// stderr (the warning) is pinned too, with the temporary directory as $DIR.
	testutil.GoldenOutput(t, "worked.csv", []byte(r.stdout), []byte(strings.ReplaceAll(r.stderr, dir, "$DIR")))

	r = runTool(t, nil, "--index", idx, "--progress", "-o", filepath.Join(dir, "p.csv"), s)
	if r.code != 0 || !strings.HasPrefix(r.stderr, "att-stats: 3 waves, 11 instructions folded; 5 PCs executed (1 not in the index)\n") {
		t.Errorf("--progress: exit %d, stderr %q", r.code, r.stderr)
	}

	r = runTool(t, nil, "--index", idx, "--format", "code.json", s)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	testutil.Golden(t, "worked.code.json", []byte(r.stdout))
	ix, err := wire.ParseCodeJSON([]byte(r.stdout))
	if err != nil {
		t.Fatal(err)
	}
	last, zero := ix.Rows[len(ix.Rows)-1], ix.Rows[len(ix.Rows)-2]
	if last.PC() != pc(2, 0x40) || last.Line != 13 || last.Hit != 1 || last.Idle != 3 {
		t.Errorf("last code.json row = %+v, want the new PC at line 13", last)
	}
	if zero.PC() != (wire.PC{}) || zero.Line != 12 || zero.Hit != 0 || zero.Text != "" {
		t.Errorf("last but one code.json row = %+v, want the unresolved PC at line 12", zero)
	}
	ro := runTool(t, nil, "--index", idx, "--format", "code.json", "--csv-only", s)
	if oix, err := wire.ParseCodeJSON([]byte(ro.stdout)); err != nil || len(oix.Rows) != len(ix.Rows)-1 ||
		oix.Rows[len(oix.Rows)-1].PC() != pc(2, 0x40) || oix.Rows[len(oix.Rows)-1].Line != 12 {
		t.Errorf("--csv-only code.json (%v): want no (0, 0) row and the new PC at line 12:\n%s", err, ro.stdout)
	}
	if ix.Rows[4].Hit != 2 || ix.Rows[4].Latency != 20 || ix.Rows[4].Stall != 20 || ix.Rows[4].Idle != 16 {
		t.Errorf("v_mov row = %+v", ix.Rows[4])
	}
	if len(ix.Kernels) != 1 || ix.Doc.Version != wire.CodeVersion || len(ix.Doc.Hsaco) != 1 {
		t.Errorf("document lost kernels/version/hsaco: %+v", ix.Doc)
	}

	r = runTool(t, nil, "--index", idx, "--format", "json", s)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	testutil.Golden(t, "worked.jsonl", []byte(r.stdout))
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 10 || !strings.HasPrefix(lines[8], `{"codeobj":0,"vaddr":0,"line":12,`) {
		t.Fatalf("json: %d lines, want 8 instructions, the unresolved PC (line 12) and 1 new PC", len(lines))
	}
	var o map[string]any
	if err := json.Unmarshal([]byte(lines[3]), &o); err != nil {
		t.Fatal(err)
	}
	if o["instruction"] != "v_mov_b32_e32 v0, 1" || o["idle"] != 16.0 || o["line"] != 5.0 {
		t.Errorf("json line 4 = %v", o)
	}
}

// TestNoIndex: without --index each traced PC is a row with empty text,
// and code.json is {"code", "header"}.
func TestNoIndex(t *testing.T) {
	dir := t.TempDir()
	s := writeStream(t, filepath.Join(dir, "a.rec"), part{run: 1, waves: []wire.Wave{workedWave(0)}})
	data, _ := os.ReadFile(s)
	r := runTool(t, data, "--format", "code.json") // stdin
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	testutil.Golden(t, "noindex.code.json", []byte(r.stdout))
	if !strings.HasPrefix(r.stdout, "{\n  \"code\": [\n    [\n      \"\",\n      0,\n      1,\n      \"\",\n      1,\n      4864,\n      1,\n      8,") {
		t.Errorf("code.json starts:\n%s", r.stdout[:min(200, len(r.stdout))])
	}
	if !strings.HasSuffix(r.stdout, "\"header\": \"ISA, _, LineNumber, Source, Codeobj, Vaddr, Hit, Latency, Stall, Idle\"\n}") {
		t.Errorf("code.json ends:\n%s", r.stdout)
	}
	if r.stderr != "" {
		t.Errorf("stderr: %q", r.stderr)
	}
}

// TestCodeJSONIndex: a code.json works as the index, and a code.json
// index's old counters do not leak into the new ones.
func TestCodeJSONIndex(t *testing.T) {
	dir := t.TempDir()
	idx := writeIndex(t, filepath.Join(dir, "k.idx"), exampleIndex())
	s := writeStream(t, filepath.Join(dir, "a.rec"), part{run: 1, waves: []wire.Wave{workedWave(0)}})
	cj := filepath.Join(dir, "code.json")
	if r := runTool(t, nil, "--index", idx, "--format", "code.json", "-o", cj, s); r.code != 0 || r.stdout != "" {
		t.Fatalf("exit %d, stdout %q: %s", r.code, r.stdout, r.stderr)
	}
	r1 := runTool(t, nil, "--index", idx, s)
	r2 := runTool(t, nil, "--index", cj, s)
	if r1.code != 0 || r2.code != 0 || r1.stdout != r2.stdout {
		t.Errorf("CSV with index stream and with code.json differ:\n%s\n%s\n%s%s", r1.stdout, r2.stdout, r1.stderr, r2.stderr)
	}
}

func TestRuns(t *testing.T) {
	dir := t.TempDir()
	idx := writeIndex(t, filepath.Join(dir, "k.idx"), exampleIndex())
	one := wire.Wave{BeginTime: 0, Instructions: []wire.Instruction{inst(pc(1, 4896), 5, 0, 4)}}
	s1 := writeStream(t, filepath.Join(dir, "r1.rec"), part{run: 1, waves: []wire.Wave{one}})
	s2 := writeStream(t, filepath.Join(dir, "r2.rec"), part{run: 2, waves: []wire.Wave{one, one}})

	r := runTool(t, nil, "--index", idx, s1, s2)
	if r.code != 2 || !strings.Contains(r.stderr, "the input holds runs 1, 2: choose one with --run N, or fold them together with --merge-runs") {
		t.Errorf("two runs: exit %d, stderr %q", r.code, r.stderr)
	}
	if r.stdout != "" {
		t.Errorf("two runs wrote %q", r.stdout)
	}
	end := func(out string) string {
		for _, l := range strings.Split(out, "\r\n") {
			if strings.HasPrefix(l, "1,4896,s_endpgm,") {
				return l
			}
		}
		return "none"
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--run", "1"}, "1,4896,s_endpgm,1,4,0,5,"},
		{[]string{"--run", "2"}, "1,4896,s_endpgm,2,8,0,10,"},
		{[]string{"--merge-runs"}, "1,4896,s_endpgm,3,12,0,15,"},
	} {
		r := runTool(t, nil, append(append([]string{"--index", idx}, c.args...), s1, s2)...)
		if r.code != 0 || end(r.stdout) != c.want {
			t.Errorf("%v: exit %d, row %q, want %q; %s", c.args, r.code, end(r.stdout), c.want, r.stderr)
		}
	}
	r = runTool(t, nil, "--index", idx, "--run", "3", s1, s2)
	if r.code != 1 || !strings.Contains(r.stderr, "no part of the input is run 3 (runs present: 1, 2)") {
		t.Errorf("--run 3: exit %d, %q", r.code, r.stderr)
	}
	r = runTool(t, nil, "--run", "1", "--merge-runs", s1)
	if r.code != 2 {
		t.Errorf("--run with --merge-runs: exit %d, %q", r.code, r.stderr)
	}
	// One run in several files is fine without flags.
	s2b := writeStream(t, filepath.Join(dir, "r2b.rec"), part{run: 2, waves: []wire.Wave{one, one}})
	r = runTool(t, nil, "--index", idx, s2, s2b)
	if r.code != 0 || end(r.stdout) != "1,4896,s_endpgm,4,16,0,20," {
		t.Errorf("one run twice: exit %d, row %q; %s", r.code, end(r.stdout), r.stderr)
	}
}

func TestJq(t *testing.T) {
	dir := t.TempDir()
	idx := writeIndex(t, filepath.Join(dir, "k.idx"), exampleIndex())
	s := writeStream(t, filepath.Join(dir, "a.rec"),
		part{run: 1, waves: []wire.Wave{workedWave(0), workedWave(1), workedWave(1)}})
	r := runTool(t, nil, "--index", idx, "--jq", ".simd == 1", s)
	if r.code != 0 || !strings.Contains(r.stdout, "\r\n1,4880,\"v_mov_b32_e32 v0, 1\",2,20,20,16,\r\n") {
		t.Errorf("--jq .simd == 1: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runTool(t, nil, "--index", idx, "--jq", "select(.simd == 0) | true", s)
	if r.code != 0 || !strings.Contains(r.stdout, "\r\n1,4880,\"v_mov_b32_e32 v0, 1\",1,10,10,8,\r\n") {
		t.Errorf("--jq select: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runTool(t, nil, "--jq", ".simd ==", s)
	if r.code != 2 || !strings.HasPrefix(r.stderr, "att-stats: --jq: ") {
		t.Errorf("bad jq: exit %d, %q", r.code, r.stderr)
	}
	r = runTool(t, nil, "--jq", "error(\"boom\")", s)
	if r.code != 1 || !strings.Contains(r.stderr, "boom") {
		t.Errorf("jq runtime error: exit %d, %q", r.code, r.stderr)
	}
}

func TestExpect(t *testing.T) {
	dir := t.TempDir()
	idx := writeIndex(t, filepath.Join(dir, "k.idx"), exampleIndex())
	s := writeStream(t, filepath.Join(dir, "a.rec"), part{run: 1, waves: []wire.Wave{workedWave(0)}})
	good := filepath.Join(dir, "good.csv")
	if r := runTool(t, nil, "--index", idx, "-o", good, s); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	// The tool's own CSV is a passing control; nothing is written.
	r := runTool(t, nil, "--index", idx, "--expect", good, s)
	if r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Errorf("own CSV as control: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// With --format the statistics are written too.
	r = runTool(t, nil, "--index", idx, "--expect", good, "--format", "json", s)
	if r.code != 0 || !strings.Contains(r.stdout, `"expected":{"hitcount":1,"latency":10,"stall":10,"idle":8}`) {
		t.Errorf("--expect --format json: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("CodeObj,Vaddr,Instruction,Hitcount,Latency,Stall,Idle,Source\n"+
		"1,4864,s_load,1,8,0,0,\n1,4872,x,1,6,2,3,\n1,4876,y,1,20,0,0,\n1,4880,z,1,10,10,8,\n9,0,ghost,1,0,0,0,\n"), 0o644)
	r = runTool(t, nil, "--index", idx, "--expect", bad, s)
	wantErr := "x - PC: 1,4872\nHitcount: 1/1, Stall: 2/2, Latency: 6/6, Idle: 2/3\n" +
		"ghost - PC: 9,0\nHitcount: 0/1, Stall: 0/0, Latency: 0/0, Idle: 0/0\n" +
		"att-stats: 2 PC(s) differ from the control CSV\n"
	if r.code != 1 || r.stderr != wantErr {
		t.Errorf("mismatch: exit %d, stderr:\n%s\nwant:\n%s", r.code, r.stderr, wantErr)
	}
	malformed := filepath.Join(dir, "malformed.csv")
	os.WriteFile(malformed, []byte("CodeObj,Vaddr,Hitcount,Latency,Stall,Idle\n1,4864,1,8,0,0\n1,0x,1,1,1,1\n"), 0o644)
	r = runTool(t, nil, "--index", idx, "--expect", malformed, s)
	if r.code != 1 || r.stderr != "att-stats: "+malformed+":3: Vaddr \"0x\": not a non-negative integer\n" {
		t.Errorf("malformed: exit %d, %q", r.code, r.stderr)
	}
	// The control is read first: its error wins over the stream's.
	r = runTool(t, nil, "--expect", malformed, filepath.Join(dir, "no-such.rec"))
	if r.code != 1 || !strings.Contains(r.stderr, `malformed.csv:3: Vaddr "0x"`) {
		t.Errorf("malformed control before a missing stream: exit %d, %q", r.code, r.stderr)
	}
	notcsv := filepath.Join(dir, "notcsv.csv")
	os.WriteFile(notcsv, []byte("hello world\n"), 0o644)
	r = runTool(t, nil, "--expect", notcsv, s)
	if r.code != 1 || !strings.Contains(r.stderr, `notcsv.csv:1: not a stats CSV: the header has no "CodeObj" column`) {
		t.Errorf("not a CSV: exit %d, %q", r.code, r.stderr)
	}
	r = runTool(t, nil, "--expect", filepath.Join(dir, "missing.csv"), s)
	if r.code != 1 || !strings.Contains(r.stderr, "missing.csv: no such file") {
		t.Errorf("missing control: exit %d, %q", r.code, r.stderr)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	idx := writeIndex(t, filepath.Join(dir, "k.idx"), exampleIndex())
	s := writeStream(t, filepath.Join(dir, "a.rec"), part{run: 1, waves: []wire.Wave{workedWave(0), workedWave(0)}})
	data, _ := os.ReadFile(s)
	trunc := filepath.Join(dir, "trunc.rec")
	os.WriteFile(trunc, data[:len(data)-7], 0o644)
	other := writeStream(t, filepath.Join(dir, "other.rec"), part{run: 1, waves: []wire.Wave{
		{Instructions: []wire.Instruction{inst(pc(7, 0x10), 0, 0, 1), inst(pc(7, 0x14), 1, 0, 1)}}}})
	text := filepath.Join(dir, "text.rec")
	os.WriteFile(text, []byte("CodeObj,Vaddr\n1,2\n"), 0o644)
	empty := filepath.Join(dir, "empty.rec")
	os.WriteFile(empty, nil, 0o644)
	notIndex := filepath.Join(dir, "notindex")
	os.WriteFile(notIndex, []byte("garbage"), 0o644)
	out := filepath.Join(dir, "out.csv")

	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"truncated", []string{trunc}, 1, "att-stats: " + trunc + ": offset "},
		{"not ours", []string{text}, 3, "att-stats: " + text + ": not an attkit-records stream"},
		{"index stream as records", []string{idx}, 3, "att-stats: " + idx + ": not an attkit-records stream"},
		{"empty", []string{empty}, 1, "att-stats: " + empty + ": offset 0: empty stream"},
		{"missing", []string{filepath.Join(dir, "nope.rec")}, 1, "no such file or directory"},
		{"index of other code", []string{"--index", idx, "-o", out, other}, 1,
			"att-stats: the index matches none of the 2 PCs the trace executed (missing PCs in code object 7 [0x10, 0x14]; index " + idx + " has code object 1 [0x1300, 0x1320]): is it the index of this trace's code objects?"},
		{"bad index", []string{"--index", notIndex, s}, 3, "att-stats: reading index: " + notIndex + ": not an attkit-index stream"},
		{"missing index", []string{"--index", filepath.Join(dir, "nope.idx"), s}, 1, "att-stats: reading index: open "},
		{"bad format", []string{"--format", "xml", s}, 2, "att-stats: --format"},
		{"same stream twice", []string{"-o", out, s, other, dir + "/./a.rec"}, 2,
			"att-stats: " + s + " and " + dir + "/./a.rec are the same file: give each input once\n"},
		{"stdin twice", []string{"-o", out, "-", s, "-"}, 2, "att-stats: standard input (-) given twice\n"},
	} {
		r := runTool(t, nil, c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", c.name, r.code, r.stderr, c.code, c.want)
		}
		if strings.Count(r.stderr, "att-stats: ") < 1 || strings.Contains(r.stderr, "panic") {
			t.Errorf("%s: stderr %q", c.name, r.stderr)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed run left %s", out)
	}
	// The truncated stream names an offset inside the data.
	r := runTool(t, nil, trunc)
	if !strings.Contains(r.stderr, "offset ") {
		t.Errorf("truncated: %q", r.stderr)
	}
}

// TestJSONLinesInput: the JSON projection of a stream (att-decode --format
// json, or jq's output on it) folds to the same statistics as the stream.
func TestJSONLinesInput(t *testing.T) {
	dir := t.TempDir()
	idx := writeIndex(t, filepath.Join(dir, "k.idx"), exampleIndex())
	extra := wire.Wave{BeginTime: 0, Instructions: []wire.Instruction{inst(pc(2, 0x40), 3, 1, 2)}}
	s := writeStream(t, filepath.Join(dir, "a.rec"),
		part{run: 1, se: 0, waves: []wire.Wave{workedWave(0)}},
		part{run: 1, se: 1, waves: []wire.Wave{workedWave(1), extra}})
	data, err := os.ReadFile(s)
	if err != nil {
		t.Fatal(err)
	}
	var jsonl []byte
	var jw wire.JSONWriter
	rd := wire.NewReader(bytes.NewReader(data), s)
	for rd.Scan() {
		if rd.Kind() == wire.KindBatch {
			jsonl = jw.AppendBatch(jsonl, rd.Header(), rd.Batch())
		}
	}
	if rd.Err() != nil {
		t.Fatal(rd.Err())
	}
	js := filepath.Join(dir, "a.jsonl")
	if err := os.WriteFile(js, jsonl, 0o644); err != nil {
		t.Fatal(err)
	}
	want := runTool(t, nil, "--index", idx, s)
	for _, r := range []result{runTool(t, nil, "--index", idx, js), runTool(t, jsonl, "--index", idx)} {
		if want.code != 0 || r.code != 0 || r.stdout != want.stdout {
			t.Errorf("CSV from JSON lines (exit %d):\n%s\nfrom the stream (exit %d):\n%s%s", r.code, r.stdout, want.code, want.stdout, r.stderr)
		}
	}
}
