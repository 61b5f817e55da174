package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/attkit/attkit/internal/sqtt"
	"github.com/attkit/attkit/internal/sqttgen"
	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

// fixture writes the B.1 trace under a rocprofv3 name and its index.
func fixture(t *testing.T) (dir, trace, index string) {
	t.Helper()
	dir = t.TempDir()
	trace = filepath.Join(dir, "123_agent_shader_engine_2_3.att")
	if err := os.WriteFile(trace, testutil.Unhex(t, testutil.VectorB1), 0o644); err != nil {
		t.Fatal(err)
	}
	ix := &wire.Index{}
	for _, r := range []struct {
		addr, size uint64
		text       string
	}{
		{0x1000, 8, "s_load_dword s0, s[0:1], 0x0"},
		{0x1008, 4, "s_waitcnt lgkmcnt(0)"},
		{0x100c, 4, "v_mov_b32_e32 v0, s0"},
		{0x1010, 4, "s_cbranch_scc0 65534"},
		{0x1014, 8, "global_store_dword v[0:1], v0, off"},
		{0x101c, 4, "s_endpgm"},
	} {
		ix.Rows = append(ix.Rows, wire.Row{Vaddr: r.addr, Size: r.size, Text: r.text})
	}
	var buf bytes.Buffer
	if err := wire.WriteIndex(&buf, ix); err != nil {
		t.Fatal(err)
	}
	index = filepath.Join(dir, "index.msgpack")
	if err := os.WriteFile(index, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, trace, index
}

func runCmd(stdin []byte, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, bytes.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func jsonLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("bad JSON line %q: %v", l, err)
		}
		recs = append(recs, m)
	}
	return recs
}

func TestJSONWithIndex(t *testing.T) {
	_, trace, index := fixture(t)
	code, out, errs := runCmd(nil, "--backend", "native", "--format", "json", "--index", index, trace)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if errs != "" {
		t.Errorf("unexpected stderr %q", errs)
	}
	recs := jsonLines(t, out)
	var types []string
	for _, r := range recs {
		types = append(types, r["type"].(string))
		if r["se"].(float64) != 2 || r["run"].(float64) != 3 {
			t.Errorf("se/run from the name: got %v/%v, want 2/3", r["se"], r["run"])
		}
	}
	want := "gfxip wave occupancy occupancy occupancy occupancy shaderdata perfevent"
	if got := strings.Join(types, " "); got != want {
		t.Errorf("record types %q, want %q", got, want)
	}
	var addrs []string
	for _, in := range recs[1]["instructions"].([]any) {
		pc := in.(map[string]any)["pc"].(map[string]any)
		addrs = append(addrs, strings.TrimSpace(json.Number(jsonNum(pc["address"])).String()))
	}
	if got := strings.Join(addrs, " "); got != "4096 4104 4108 4112 4108 4112 4116 4124" {
		t.Errorf("instruction addresses %s", got)
	}
}

func jsonNum(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestMsgpackHeader(t *testing.T) {
	_, trace, index := fixture(t)
	code, out, errs := runCmd(nil, "--backend", "native", "--index", index, "--se", "5", "--run", "7", trace)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rd := wire.NewReader(strings.NewReader(out), "out")
	var kinds []wire.RecordType
	for rd.Scan() {
		switch rd.Kind() {
		case wire.KindHeader:
			h := rd.Header()
			if h.Backend != "native" || !strings.HasPrefix(h.Producer, "att-decode ") ||
				h.Trace.SE != 5 || h.Trace.Run != 7 || h.Trace.GFXIP != 9 || h.Trace.Path != trace ||
				!strings.HasPrefix(h.BackendVersion, "attkit-native ") {
				t.Errorf("header %+v", h)
			}
		case wire.KindBatch:
			kinds = append(kinds, rd.Batch().Type)
			if b := rd.Batch(); b.Type == wire.TypeWave && b.Waves[0].Instructions[3].PC.Address != 0x1010 {
				t.Errorf("wave %+v", b.Waves[0])
			}
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	want := []wire.RecordType{wire.TypeGFXIP, wire.TypeWave, wire.TypeOccupancy, wire.TypeShaderData, wire.TypePerfEvent}
	if len(kinds) != len(want) {
		t.Fatalf("batches %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("batches %v, want %v", kinds, want)
		}
	}
}

func TestJq(t *testing.T) {
	_, trace, index := fixture(t)
	code, out, errs := runCmd(nil, "--backend", "native", "--format", "json", "--index", index,
		"--jq", `select(.type=="wave") | [.instructions[].category] | join(",")`, trace)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if out != `"smem,immed,valu,jump,valu,next,flat,immed"`+"\n" {
		t.Errorf("jq output %q", out)
	}
	// msgpack output keeps only the records the filter accepts.
	code, out, errs = runCmd(nil, "--backend", "native", "--index", index,
		"--jq", `.type == "occupancy" and .start == 1`, trace)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rd := wire.NewReader(strings.NewReader(out), "out")
	n := 0
	for rd.Scan() {
		if rd.Kind() == wire.KindBatch {
			b := rd.Batch()
			if b.Type != wire.TypeOccupancy || len(b.Occupancy) != 2 || !b.Occupancy[0].Start {
				t.Errorf("unexpected batch %+v", b)
			}
			n++
		}
	}
	if rd.Err() != nil || n != 1 {
		t.Errorf("%d batches, err %v", n, rd.Err())
	}
	code, _, errs = runCmd(nil, "--jq", "select(", trace)
	if code != 2 || errs != "att-decode: --jq: unexpected EOF\n" {
		t.Errorf("bad filter: exit %d, stderr %q", code, errs)
	}
	// A filter failing at run time: the message names the trace and says
	// --jq once, in both output formats.
	for _, format := range []string{"json", "msgpack"} {
		code, _, errs = runCmd(nil, "--backend", "native", "--index", index, "--format", format,
			"--jq", `if .type == "wave" then error("boom") else . end`, trace)
		if want := "att-decode: " + trace + ": --jq: error: boom\n"; code != 1 || errs != want {
			t.Errorf("%s: failing filter: exit %d, stderr %q, want %q", format, code, errs, want)
		}
	}
}

func TestStdinAndDefaults(t *testing.T) {
	code, out, errs := runCmd(testutil.Unhex(t, testutil.VectorB1), "--backend", "native", "--format", "json", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	recs := jsonLines(t, out)
	if recs[0]["se"].(float64) != 0 || recs[0]["run"].(float64) != 1 {
		t.Errorf("stdin defaults se/run: %v", recs[0])
	}
	if !strings.Contains(errs, "att-decode: warning: <stdin>: no --index") {
		t.Errorf("stderr %q", errs)
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	b1 := testutil.Unhex(t, testutil.VectorB1)
	mi400 := append([]byte{0x91, 0x02, 0, 0, 0, 0, 0, 0}, make([]byte, 32)...)
	badSlot := append(append([]byte{}, b1[:0x16]...), 0x03, 0x30, 0x44, 0x00) // WAVE_START wave 12
	for _, tc := range []struct {
		name, file string
		data       []byte
		code       int
		stderr     string
	}{
		{"mi400", "m.att", mi400, 3, "MI400 (gfx12.5) thread trace: the native decoder handles gfx9 (MI200, MI300, MI350)"},
		{"zeros", "z.att", make([]byte, 64), 3, "not a thread trace"},
		{"short", "s.att", b1[:6], 3, "shorter than the 8-byte header"},
		{"header only", "h.att", b1[:8], 1, "only its 8-byte header"},
		{"bad slot", "b.att", badSlot, 1, "wave slot 12"},
		{"truncated", "t.att", b1[:0x2b], 0, "Wave incomplete"},
		{"cut after header", "c.att", b1[:20], 0, "att-decode: warning: " + filepath.Join(dir, "c.att") +
			": truncated trace: only 12 bytes after its 8-byte header (a trace buffer is written in 32-byte blocks)\n"},
		{"rdna header only", "r.att", []byte{0x91, 0x01, 0, 0, 0, 0, 0, 0}, 0, "truncated trace: only 0 bytes after"},
		{"empty", "e.att", nil, 0, "empty trace"},
		{"missing", "nonexistent.att", nil, 1, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.file)
			if tc.name != "missing" {
				p = write(tc.file, tc.data)
			}
			code, out, errs := runCmd(nil, "--backend", "native", p)
			if tc.name == "bad slot" {
				// The records before the error are kept, ending on a batch.
				rd := wire.NewReader(strings.NewReader(out), "out")
				n := 0
				for rd.Scan() {
					n++
				}
				if rd.Err() != nil || n != 2 {
					t.Errorf("output before the error: %d values, %v", n, rd.Err())
				}
			}
			if code != tc.code || !strings.Contains(errs, tc.stderr) ||
				tc.code == 3 && tc.name == "mi400" && !strings.Contains(errs, "--backend rocm") {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errs, tc.code, tc.stderr)
			}
			if code != 0 && !strings.HasPrefix(errs, "att-decode: ") {
				t.Errorf("stderr %q lacks the tool prefix", errs)
			}
			if strings.Count(errs, "\n") == 0 || !strings.HasSuffix(errs, "\n") {
				t.Errorf("stderr %q", errs)
			}
		})
	}
}

func TestQuietAndWarnings(t *testing.T) {
	_, trace, index := fixture(t)
	data, _ := os.ReadFile(trace)
	cut := filepath.Join(filepath.Dir(trace), "cut.att")
	os.WriteFile(cut, data[:0x2b], 0o644)
	code, _, errs := runCmd(nil, "--backend", "native", "--index", index, cut)
	cutWarning := sqtt.Ending{Bytes: 0x2b, InToken: true, MissingBits: 24, OpenWaves: 2}.Warning()
	if code != 0 || errs != "att-decode: warning: "+cut+": "+wire.InfoWaveIncomplete.Text()+"\n"+
		"att-decode: warning: "+cut+": "+cutWarning+"\n" {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	code, _, errs = runCmd(nil, "--backend", "native", "--index", index, "-q", cut)
	if code != 0 || errs != "" {
		t.Errorf("--quiet: exit %d, stderr %q", code, errs)
	}
}

func TestOutputFile(t *testing.T) {
	dir, trace, index := fixture(t)
	out := filepath.Join(dir, "out.rec")
	code, stdout, errs := runCmd(nil, "--backend", "native", "--index", index, "-o", out, trace)
	if code != 0 || stdout != "" {
		t.Fatalf("exit %d, stdout %d bytes, stderr %q", code, len(stdout), errs)
	}
	if fi, err := os.Stat(out); err != nil || fi.Size() == 0 {
		t.Fatalf("output file: %v", err)
	}
	// A failing decode leaves no file behind.
	bad := filepath.Join(dir, "bad.att")
	os.WriteFile(bad, make([]byte, 64), 0o644)
	out2 := filepath.Join(dir, "out2.rec")
	if code, _, _ := runCmd(nil, "--backend", "native", "-o", out2, bad); code != 3 {
		t.Errorf("exit %d", code)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "out2") || strings.HasPrefix(e.Name(), ".out2") {
			t.Errorf("left %s behind", e.Name())
		}
	}
}

// epipeWriter fails like a pipe whose reader has gone.
type epipeWriter struct{ n int }

func (w *epipeWriter) Write(p []byte) (int, error) {
	if w.n -= len(p); w.n < 0 {
		return 0, syscall.EPIPE
	}
	return len(p), nil
}

func TestClosedPipe(t *testing.T) {
	_, trace, index := fixture(t)
	var errb bytes.Buffer
	code := run([]string{"--backend", "native", "--format", "json", "--index", index, trace},
		nil, &epipeWriter{n: 10}, &errb)
	if code != 1 || errb.String() != "" {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

func TestBackendFlags(t *testing.T) {
	_, trace, _ := fixture(t)
	code, _, errs := runCmd(nil, "--backend", "native", "--code-object", "1=x.co@0x1000", trace)
	if code != 2 || !strings.Contains(errs, "--code-object") {
		t.Errorf("native --code-object: exit %d, %q", code, errs)
	}
	// A comma is part of the path, not a list separator.
	code, _, errs = runCmd(nil, "--backend", "native", "--code-object", "1=a,b.co@0x1000", trace)
	if code != 2 || !strings.Contains(errs, "needs the ROCm library") {
		t.Errorf("--code-object with a comma: exit %d, %q", code, errs)
	}
	code, _, errs = runCmd(nil, "--backend", "native", "--code-object", "nonsense", trace)
	if code != 2 {
		t.Errorf("bad --code-object: exit %d, %q", code, errs)
	}
	if os.Getenv("ROCPROF_TRACE_DECODER_LIB") == "" {
		code, _, errs = runCmd(nil, "--backend", "rocm", "--lib", filepath.Join(t.TempDir(), "nope.so"), trace)
		if code != 4 {
			t.Errorf("--backend rocm without the library: exit %d, %q", code, errs)
		}
		// auto falls back to the native decoder.
		code, out, errs := runCmd(nil, "--format", "json", "--lib", filepath.Join(t.TempDir(), "nope.so"), "-q", trace)
		if code != 0 || !strings.Contains(out, `"type":"wave"`) {
			t.Errorf("auto fallback: exit %d, %q", code, errs)
		}
	}
}

// TestGeneratedTraces decodes traces of the independent generator
// (internal/sqttgen) through the whole command, msgpack output included,
// and compares the records with the generator's expectations.
func TestGeneratedTraces(t *testing.T) {
	index := filepath.Join("..", "..", "internal", "sqttgen", "testdata", "gfx942.index")
	ix, err := wire.ReadIndexFile(index)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for seed := uint64(1); seed <= 6; seed++ {
		cfg := sqttgen.Config{Index: ix, Seed: seed, Instrument: true, Dispatch: true, ShaderData: true,
			Events: true, LateLoad: seed == 5, Truncate: seed == 6,
			GFX9: sqttgen.GFX9{Perf: true, PerfInterval: 256, BarrierMessages: true, Pipeline: seed%2 == 0,
				ContextSwitch: seed%3 == 0, Replays: seed%2 == 1}}
		data, want, err := sqttgen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		trace := filepath.Join(dir, "x_shader_engine_1_"+strconv.Itoa(int(seed))+".att")
		out := trace + ".rec"
		if err := os.WriteFile(trace, data, 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs := runCmd(nil, "--backend", "native", "--index", index, "-q", "-o", out, trace)
		if code != 0 {
			t.Fatalf("seed %d: exit %d: %s", seed, code, errs)
		}
		f, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		rd := wire.NewReader(f, out)
		var got []wire.Batch
		for rd.Scan() {
			if rd.Kind() == wire.KindHeader {
				if h := rd.Header(); h.Trace.SE != 1 || h.Trace.Run != int(seed) || h.Trace.GFXIP != 9 {
					t.Errorf("seed %d: header %+v", seed, h.Trace)
				}
				continue
			}
			got = append(got, rd.Batch().Clone())
		}
		f.Close()
		if err := rd.Err(); err != nil {
			t.Fatal(err)
		}
		if d := sqttgen.Diff(want, got); d != "" {
			t.Errorf("seed %d: %s", seed, d)
		}
		waves := 0
		for _, b := range got {
			if b.Type == wire.TypeWave {
				waves++
			}
		}
		if waves < 4 {
			t.Errorf("seed %d: only %d waves", seed, waves)
		}
	}
}

func TestCompat016(t *testing.T) {
	_, trace, index := fixture(t)
	code, out, errs := runCmd(nil, "--backend", "native", "--compat", "0.1.6", "--format", "json", "--index", index,
		"--jq", `select(.type=="wave") | [.end_time, .timeline[-1].type, .dispatcher]`, trace)
	if code != 0 || out != `[220,"idle",0]`+"\n" {
		t.Errorf("exit %d, out %q, stderr %q", code, out, errs)
	}
	code, out, _ = runCmd(nil, "--backend", "native", "--format", "json", "--index", index,
		"--jq", `select(.type=="wave") | [.end_time, .timeline[-1].type, .dispatcher]`, trace)
	if code != 0 || out != `[224,"exec",16]`+"\n" {
		t.Errorf("newest: exit %d, out %q", code, out)
	}
}

// TestArchMismatch: a trace of another architecture than the index's code
// objects is an error of exit code 3 that writes nothing, unless --any-arch;
// an index naming no target (or a matching one) is not checked.
func TestArchMismatch(t *testing.T) {
	dir, trace, _ := fixture(t) // a gfx9 trace
	index := func(name string, targets ...string) string {
		ix := &wire.Index{Rows: []wire.Row{{Vaddr: 0x1000, Size: 4, Text: "s_endpgm"}}}
		for i, tg := range targets {
			ix.Objects = append(ix.Objects, wire.CodeObject{ID: uint64(i), Path: tg + ".hsaco", Target: tg})
		}
		var buf bytes.Buffer
		if err := wire.WriteIndex(&buf, ix); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rdna := index("rdna.idx", "gfx1100", "gfx1201", "gfx1100")
	out := filepath.Join(dir, "out.rec")
	code, stdout, errs := runCmd(nil, "--backend", "native", "--index", rdna, "-o", out, trace)
	want := "att-decode: " + trace + ": a gfx9 trace, but the code objects" +
		" are for gfx1100, gfx1201: give the code objects of this trace's GPU, or --any-arch\n"
	if code != 3 || errs != want || stdout != "" {
		t.Errorf("exit %d, stderr %q; want 3, %q", code, errs, want)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("output written for a mismatched trace")
	}
	if code, stdout, _ := runCmd(nil, "--backend", "native", "--index", rdna, trace); code != 3 || stdout != "" {
		t.Errorf("stdout: exit %d, %d bytes written", code, len(stdout))
	}
	for _, args := range [][]string{
		{"--any-arch", "--index", rdna},
		{"--arch", "gfx90a", "--index", index("gfx9gen.idx", "gfx90a")},
		{"--index", index("gfx9.idx", "gfx90a")},
		{"--index", index("mixed.idx", "gfx1100", "gfx942")},
		{"--index", index("unknown.idx", "")},
	} {
		args = append(append([]string{"--backend", "native", "-q"}, args...), trace)
		if code, stdout, errs := runCmd(nil, args...); code != 0 || errs != "" || len(stdout) == 0 {
			t.Errorf("%q: exit %d, stderr %q", args, code, errs)
		}
	}
}

// TestArchGeneration: a real MI350 (gfx950) trace, named so with --arch,
// is refused with an MI300 (gfx942) index, naming both (its bytes alone
// do not tell the generation: the header carries version 4, as older gfx9
// writers do); --any-arch decodes it, an --arch of another family than
// the trace is refused without an index, and --force is gone.
func TestArchGeneration(t *testing.T) {
	real := testutil.RealDir()
	if real == "" {
		t.Skip("the real-hardware corpus ../shared/real (beside the repository) is absent")
	}
	trace := filepath.Join(real, "gfx950_gemm_0", "1_1_shader_engine_0_1.att")
	dir := t.TempDir()
	var buf bytes.Buffer
	ix := &wire.Index{Objects: []wire.CodeObject{{ID: 1, Path: "k.hsaco", Target: "gfx942"}},
		Rows: []wire.Row{{CodeObj: 1, Vaddr: 0x1000, Size: 4, Text: "s_endpgm"}}}
	if err := wire.WriteIndex(&buf, ix); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, "gfx942.idx")
	if err := os.WriteFile(index, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd(nil, "--backend", "native", "-q", "--arch", "gfx950", "--index", index, trace)
	want := "att-decode: " + trace + ": a gfx950 (MI350) trace, but the code objects" +
		" are for gfx942 (MI300): give the code objects of this trace's GPU, or --any-arch\n"
	if code != 3 || errs != want || out != "" {
		t.Errorf("gfx950 trace, gfx942 index: exit %d, stderr %q; want 3, %q", code, errs, want)
	}
	code, out, errs = runCmd(nil, "--backend", "native", "-q", "--arch", "gfx950", "--any-arch", "--index", index, trace)
	if code != 0 || len(out) == 0 {
		t.Errorf("--any-arch: exit %d, stderr %q", code, errs)
	}
	// The header records the target, so that att-stats and the others
	// check it too.
	rd := wire.NewReader(strings.NewReader(out), "out")
	if !rd.Scan() || rd.Kind() != wire.KindHeader || rd.Header().Trace.Target != "gfx950" || rd.Header().Minor != 1 {
		t.Errorf("header: %+v, %v", rd.Header(), rd.Err())
	}
	code, _, errs = runCmd(nil, "--backend", "native", "-q", "--arch", "gfx1100", trace)
	if code != 3 || !strings.Contains(errs, "a gfx9 trace, but --arch names gfx1100") {
		t.Errorf("--arch gfx1100 on a gfx9 trace: exit %d, stderr %q", code, errs)
	}
	if code, _, _ := runCmd(nil, "--backend", "native", "--arch", "950", trace); code != 2 {
		t.Errorf("--arch 950: exit %d, want 2", code)
	}
	if code, _, _ := runCmd(nil, "--backend", "native", "--force", "--index", index, trace); code != 2 {
		t.Errorf("--force: exit %d, want 2 (no such flag)", code)
	}
}

// TestArchFromCapture: without --arch, a trace in a rocprofv3 capture gets
// its generation from the code objects of its <pid>_<agent> beside it: a
// real MI350 trace beside a gfx950 code object is refused with an MI300
// index (on 478e79a it decoded), and decodes alone or with --any-arch.
func TestArchFromCapture(t *testing.T) {
	real := testutil.RealDir()
	if real == "" {
		t.Skip("the real-hardware corpus ../shared/real (beside the repository) is absent")
	}
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(real, "gfx950_gemm_0", "1_1_shader_engine_0_1.att"))
	if err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(dir, "7_1_shader_engine_0_1.att")
	os.WriteFile(trace, data, 0o644)
	var buf bytes.Buffer
	ix := &wire.Index{Objects: []wire.CodeObject{{ID: 1, Path: "k.hsaco", Target: "gfx942"}},
		Rows: []wire.Row{{CodeObj: 1, Vaddr: 0x1000, Size: 4, Text: "s_endpgm"}}}
	if err := wire.WriteIndex(&buf, ix); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, "gfx942.idx")
	os.WriteFile(index, buf.Bytes(), 0o644)
	if code, _, errs := runCmd(nil, "--backend", "native", "-q", "--index", index, trace); code != 0 {
		t.Fatalf("no code object beside: exit %d, %s", code, errs)
	}
	obj, err := os.ReadFile(filepath.Join("..", "..", "testdata", "kernels", "gfx950", "kernels_code_object_id_1.hsaco"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "7_1_code_object_id_1.hsaco"), obj, 0o644)
	os.WriteFile(filepath.Join(dir, "8_1_code_object_id_1.hsaco"), []byte("another process's, unread"), 0o644)
	code, out, errs := runCmd(nil, "--backend", "native", "-q", "--index", index, trace)
	if code != 3 || out != "" || !strings.Contains(errs, "a gfx950 (MI350) trace, but the code objects are for gfx942 (MI300)") {
		t.Errorf("gfx950 capture, gfx942 index: exit %d, stderr %q", code, errs)
	}
	if code, out, errs := runCmd(nil, "--backend", "native", "-q", "--any-arch", "--index", index, trace); code != 0 || out == "" {
		t.Errorf("--any-arch: exit %d, %s", code, errs)
	}
}
