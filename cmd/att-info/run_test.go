package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/codeobj"
	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/sqtt"
	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func sampleDir() string { return filepath.Join(repoRoot(), "testdata", "sample") }

func runCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// parse splits att-info's JSON lines into trace and capture objects.
func parse(t *testing.T, out string) ([]map[string]any, []map[string]any) {
	t.Helper()
	var traces, caps []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not a JSON line: %q: %v", sc.Text(), err)
		}
		switch m["type"] {
		case "trace":
			traces = append(traces, m)
		case "capture":
			caps = append(caps, m)
		default:
			t.Fatalf("object of type %v", m["type"])
		}
	}
	return traces, caps
}

func num(m map[string]any, k string) int64 {
	f, ok := m[k].(float64)
	if !ok {
		return -1
	}
	return int64(f)
}

func strs(v any) []string {
	var out []string
	for _, e := range v.([]any) {
		out = append(out, e.(string))
	}
	return out
}

func path(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		v = v.(map[string]any)[k]
	}
	return v
}

// counts decodes a trace with the native decoder directly (not through
// att-info) and counts its WAVE records, instructions and DISPATCH records.
func counts(t *testing.T, trace string, ix *wire.Index) (waves, insts, dispatches int64) {
	t.Helper()
	f, err := os.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var prov isa.Provider
	if ix != nil {
		prov = isa.NewTable(ix)
	}
	err = sqtt.New().Decode(context.Background(), f, prov, func(b *wire.Batch) error {
		switch b.Type {
		case wire.TypeWave:
			for i := range b.Waves {
				waves++
				insts += int64(len(b.Waves[i].Instructions))
			}
		case wire.TypeDispatch:
			dispatches += int64(len(b.Dispatches))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return
}

// TestSample: on the bundled sample every trace's counts are those the
// native decoder delivers with the sample's index, its kernels are the
// index's four, and the capture is analysable: both shader engines traced,
// no buffer filled, no code object missing, gfx9 traces with gfx942 code.
func TestSample(t *testing.T) {
	obj := filepath.Join(sampleDir(), "31337_1_code_object_id_1.hsaco")
	ix, err := codeobj.Build(context.Background(), []codeobj.Input{{ID: 1, Path: obj}}, codeobj.Options{})
	if err != nil {
		t.Skipf("no index of the sample (llvm-objdump missing? scripts/install-deps installs it): %v", err)
	}
	var kernels []string
	for _, k := range ix.Kernels {
		kernels = append(kernels, k.Demangled)
	}
	slices.Sort(kernels)
	code, out, errs := runCmd("--backend", "native", "--format", "json", sampleDir())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	traces, caps := parse(t, out)
	if len(traces) != 4 || len(caps) != 1 {
		t.Fatalf("%d traces, %d captures:\n%s", len(traces), len(caps), out)
	}
	for i, tr := range traces {
		p := tr["path"].(string)
		w, n, d := counts(t, p, ix)
		wantSE, wantRun := i%2, 1+i/2 // sorted by run, then shader engine
		if num(tr, "waves") != w || num(tr, "instructions") != n || num(tr, "dispatches") != d || w == 0 || n == 0 ||
			num(tr, "se") != int64(wantSE) || num(tr, "run") != int64(wantRun) || tr["arch"] != "gfx9" ||
			tr["instruction_trace"] != true || num(tr, "incomplete_waves") != 0 || tr["data_lost"] != false || tr["cut"] != false {
			t.Errorf("%s: %v; want %d waves, %d instructions, %d dispatches, se %d run %d", p, tr, w, n, d, wantSE, wantRun)
		}
		if st, _ := os.Stat(p); num(tr, "bytes") != st.Size() {
			t.Errorf("%s: bytes %d, file %d", p, num(tr, "bytes"), st.Size())
		}
		if got := strs(tr["kernels"]); !slices.Equal(got, kernels) {
			t.Errorf("%s: kernels %q, want %q", p, got, kernels)
		}
		if num(tr, "first_cycle") < 0 || num(tr, "last_cycle") <= num(tr, "first_cycle") {
			t.Errorf("%s: cycles %v-%v", p, tr["first_cycle"], tr["last_cycle"])
		}
	}
	c := caps[0]
	if c["group"] != "31337_1" || c["analysable"] != true || path(c, "arch", "agree") != true ||
		fmt.Sprint(path(c, "shader_engines", "instruction_trace")) != "[0 1]" ||
		path(c, "buffer", "probably_full") != false || path(c, "code_objects", "missing") != false ||
		path(c, "code_objects", "source") != "code objects" || fmt.Sprint(path(c, "arch", "code_objects")) != "[gfx942]" {
		t.Errorf("capture: %v", c)
	}
	code, text, _ := runCmd("--backend", "native", sampleDir())
	for _, want := range []string{"SE  RUN  ARCH", "shader engines: SE 0, 1 of 2 carried instructions",
		"architecture: gfx9 traces, code objects gfx942: they agree", "verdict: something to analyse"} {
		if code != 0 || !strings.Contains(text, want) {
			t.Errorf("text form (exit %d) lacks %q:\n%s", code, want, text)
		}
	}
}

// TestRealCaptures: on every real capture each trace's waves, instructions
// and dispatches are those of AMD's newest library (expected-0.3.0, which
// the native decoder equals); a shader engine carries instructions only
// where capture.json enabled instruction trace (capture.json says which
// shader engines were configured for it; a trace shows it only where the
// kernel's waves ran on the target CU); the kernel of the instruction
// waves is the code.json's (its lowest row, in the object capture.json
// loads); the exit status says whether any instruction was traced.
func TestRealCaptures(t *testing.T) {
	for _, c := range testutil.RealCorpus(t) {
		t.Run(c.Name, func(t *testing.T) {
			code, out, errs := runCmd("--backend", "native", "--format", "json", c.Dir)
			traces, caps := parse(t, out)
			if len(traces) != len(c.Traces) || len(caps) != 1 {
				t.Fatalf("exit %d, %d traces (want %d), %d captures: %s", code, len(traces), len(c.Traces), len(caps), errs)
			}
			ix, err := wire.ReadIndexFile(c.CodeJSON)
			if err != nil {
				t.Fatal(err)
			}
			lowest := ^uint64(0)
			for _, r := range ix.Rows {
				lowest = min(lowest, r.Vaddr)
			}
			load, _ := strconv.ParseUint(strings.TrimPrefix(c.CodeObjects[0].LoadAddress, "0x"), 16, 64)
			if lowest < load || lowest >= load+1<<16 {
				t.Fatalf("code.json's lowest row %#x is not in the object loaded at %#x", lowest, load)
			}
			kernel := fmt.Sprintf("0 / %#x", lowest)
			byFile := map[string]map[string]any{}
			for _, tr := range traces {
				byFile[filepath.Base(tr["path"].(string))] = tr
			}
			var anyInst bool
			var traced []string
			for _, rt := range c.Traces {
				tr := byFile[filepath.Base(rt.File)]
				if tr == nil {
					t.Fatalf("no object for %s", rt.File)
				}
				w, n, d := expected(t, rt.Expected)
				if num(tr, "waves") != w || num(tr, "instructions") != n || num(tr, "dispatches") != d ||
					num(tr, "se") != int64(rt.ShaderEngine) || tr["error"] != nil || tr["cut"] != false || num(tr, "incomplete_waves") != 0 {
					t.Errorf("%s: %v; want %d waves, %d instructions, %d dispatches", rt.File, tr, w, n, d)
				}
				it := tr["instruction_trace"] == true
				if it && !rt.InstructionTrace {
					t.Errorf("%s: instruction_trace, but capture.json did not enable it", rt.File)
				}
				if it != (n > 0) {
					t.Errorf("%s: instruction_trace %v with %d instructions", rt.File, it, n)
				}
				if it {
					traced = append(traced, strconv.Itoa(rt.ShaderEngine))
					if ks := strs(tr["kernels"]); !slices.Equal(ks, []string{kernel}) {
						t.Errorf("%s: kernels %q, want [%s]", rt.File, ks, kernel)
					}
				}
				anyInst = anyInst || n > 0
			}
			cp := caps[0]
			if got := fmt.Sprint(path(cp, "shader_engines", "instruction_trace")); got != "["+strings.Join(traced, " ")+"]" {
				t.Errorf("capture: instruction_trace %s, want %v", got, traced)
			}
			if path(cp, "code_objects", "source") != "code.json" || path(cp, "code_objects", "missing") != false ||
				path(cp, "arch", "agree") != nil || path(cp, "buffer", "probably_full") != false {
				t.Errorf("capture verdict %v", cp)
			}
			if want := map[bool]int{true: 0, false: 1}[anyInst]; code != want || cp["analysable"] != anyInst {
				t.Errorf("exit %d, analysable %v; want %d (instructions traced: %v)", code, cp["analysable"], want, anyInst)
			}
			if !anyInst && !strings.Contains(path(cp, "shader_engines", "fix").(string), "--att-target-cu") {
				t.Errorf("no fix for an empty capture: %v", cp["shader_engines"])
			}
		})
	}
}

// expected counts the WAVE records, instructions and DISPATCH records of
// AMD's records for a trace.
func expected(t *testing.T, jsonl string) (waves, insts, dispatches int64) {
	t.Helper()
	data, err := os.ReadFile(strings.Replace(jsonl, "expected-0.1.6", "expected-0.3.0", 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r struct {
			Type         string            `json:"type"`
			Instructions []json.RawMessage `json:"instructions"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		switch r.Type {
		case "wave":
			waves++
			insts += int64(len(r.Instructions))
		case "dispatch":
			dispatches++
		}
	}
	return
}

// makeCapture copies the sample's traces (cut to cut bytes when > 0) into a
// new folder with the code object obj.
func makeCapture(t *testing.T, obj string, cut int) string {
	t.Helper()
	dir := t.TempDir()
	ms, _ := filepath.Glob(filepath.Join(sampleDir(), "*_1.att"))
	for _, m := range ms {
		data, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		if cut > 0 {
			data = data[:cut]
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(m)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "31337_1_code_object_id_1.hsaco"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestArchMismatch: the sample's gfx9 traces with a gfx1100 code object:
// the verdict names both and the fix, and there is nothing to analyse.
func TestArchMismatch(t *testing.T) {
	dir := makeCapture(t, filepath.Join(repoRoot(), "testdata", "kernels", "gfx1100", "kernels_code_object_id_1.hsaco"), 0)
	code, out, errs := runCmd("--backend", "native", "--format", "json", dir)
	_, caps := parse(t, out)
	if code != 1 || len(caps) != 1 {
		t.Fatalf("exit %d, %d captures: %s", code, len(caps), errs)
	}
	a := caps[0]["arch"].(map[string]any)
	if a["agree"] != false || fmt.Sprint(a["traces"]) != "[gfx9]" || fmt.Sprint(a["code_objects"]) != "[gfx1100]" ||
		!strings.Contains(a["fix"].(string), "the code objects are for gfx1100, the traces are gfx9") ||
		caps[0]["analysable"] != false {
		t.Errorf("arch verdict %v", caps[0])
	}
}

// TestBufferFull: traces cut short end with waves open: with a buffer
// whose share per shader engine is about their size the buffer probably
// filled (the fix names --att-buffer-size, twice the size); with
// rocprofv3's default 256 MB they are cut otherwise, not full. The size
// comes from --buffer-size or rocprofv3's <pid>_config.json.
func TestBufferFull(t *testing.T) {
	dir := makeCapture(t, filepath.Join(sampleDir(), "31337_1_code_object_id_1.hsaco"), 2000)
	for _, c := range []struct {
		args   []string
		config string
		full   bool
		from   string
	}{
		{nil, "", false, "rocprofv3's default"},
		{[]string{"--buffer-size", "4000"}, "", true, "--buffer-size"},
		{[]string{"--buffer-size", "1GB"}, "", false, "--buffer-size"},
		{nil, `{"rocprofiler-sdk-tool": [{"metadata": {"config": {"att_param_buffer_size": 4200}}}]}`, true, "31337_config.json"},
	} {
		cfg := filepath.Join(dir, "31337_config.json")
		os.Remove(cfg)
		if c.config != "" {
			if err := os.WriteFile(cfg, []byte(c.config), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		code, out, errs := runCmd(append(append([]string{"--backend", "native", "--format", "json"}, c.args...), dir)...)
		traces, caps := parse(t, out)
		if code != 0 || len(caps) != 1 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errs)
		}
		for _, tr := range traces {
			if num(tr, "incomplete_waves") < 1 || tr["cut"] != true || len(strs(tr["warnings"])) == 0 {
				t.Errorf("%v: a cut trace without an incomplete wave or warning: %v", c.args, tr)
			}
		}
		b := caps[0]["buffer"].(map[string]any)
		if b["probably_full"] != c.full || b["configured_from"] != c.from {
			t.Errorf("%v %s: buffer %v", c.args, c.config, b)
		}
		if c.full && !strings.Contains(b["fix"].(string), "--att-buffer-size 0x") {
			t.Errorf("no fix: %v", b)
		}
	}
	if code, _, _ := runCmd("--buffer-size", "lots", dir); code != 2 {
		t.Errorf("--buffer-size lots: exit %d, want 2", code)
	}
}

// TestNotATrace: an .att file that is no trace is reported with its error
// beside the others, and the exit status is 3; with only code objects
// there is nothing to analyse (1).
func TestNotATrace(t *testing.T) {
	dir := makeCapture(t, filepath.Join(sampleDir(), "31337_1_code_object_id_1.hsaco"), 0)
	junk := filepath.Join(dir, "31337_1_shader_engine_2_1.att")
	if err := os.WriteFile(junk, []byte("hello, this is no thread trace at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCmd("--backend", "native", "--format", "json", dir)
	traces, caps := parse(t, out)
	if code != 3 || len(traces) != 3 || len(caps) != 1 {
		t.Fatalf("exit %d, %d traces, %d captures", code, len(traces), len(caps))
	}
	for _, tr := range traces {
		bad := tr["path"] == junk
		if e, _ := tr["error"].(string); bad != strings.Contains(e, "not a thread trace") || bad == (num(tr, "instructions") > 0) {
			t.Errorf("%v", tr)
		}
	}
	objOnly := t.TempDir()
	data, _ := os.ReadFile(filepath.Join(sampleDir(), "31337_1_code_object_id_1.hsaco"))
	os.WriteFile(filepath.Join(objOnly, "k.hsaco"), data, 0o644)
	if code, _, errs := runCmd(objOnly); code != 1 || !strings.Contains(errs, "no .att trace") {
		t.Errorf("code object only: exit %d, %q", code, errs)
	}
}
