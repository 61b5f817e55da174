package rcv

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/fold"
	"github.com/attkit/attkit/internal/wire"
)

// validFolder writes a small complete folder with every kind of file.
func validFolder(t *testing.T, dir string) {
	t.Helper()
	ix := &wire.Index{Rows: []wire.Row{
		{Kind: wire.RowFunction, CodeObj: 1, Vaddr: 0x100, Text: "; _k", Source: "k", Line: 1},
		{CodeObj: 1, Vaddr: 0x100, Text: "s_nop 0", Source: "/src/k.cl:1", Line: 2},
		{CodeObj: 1, Vaddr: 0x104, Text: "s_endpgm", Line: 3},
	}, Kernels: []wire.Kernel{{Address: 0x100, CodeObj: 1, Name: "k"}}}
	f, err := NewFolder(dir, FolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(f, ix, fold.New(ix), jsonOnly)
	batches := []wire.Batch{
		{Type: wire.TypeOccupancy, Occupancy: []wire.Occupancy{{PC: pc(1, 0x100), Time: 10, CU: 1, SIMD: 1, WaveID: 2, Start: true}}},
		{Type: wire.TypeDispatch, Dispatches: []wire.Dispatch{{Time: 5, EntryPoint: pc(1, 0x100)}}},
		{Type: wire.TypeEvent, Events: []wire.Event{{Time: 6, Type: wire.EventDispatchEnd}}},
		{Type: wire.TypeWave, Waves: []wire.Wave{{CU: 1, SIMD: 1, WaveID: 2, BeginTime: 10, EndTime: 50,
			Timeline:     []wire.WaveState{{Type: wire.StateExec, Duration: 40}},
			Instructions: []wire.Instruction{{Category: wire.CatSALU, Time: 10, Duration: 4, PC: pc(1, 0x100)}, {Time: 20, Duration: 4}}}}},
		{Type: wire.TypePerfEvent, PerfEvents: []wire.PerfEvent{{Time: 12}}},
		{Type: wire.TypeShaderData, ShaderData: []wire.ShaderData{{Time: 15, Value: 7}}},
		{Type: wire.TypeInstOtherSIMD, OtherSIMD: []wire.OtherSIMD{{Time: 16, Cycles: 4}}},
		{Type: wire.TypeRealtime, Realtime: []wire.Realtime{{ShaderClock: 10, RealtimeClock: 1000}}},
	}
	if err := w.BeginTrace(&wire.Header{}); err != nil {
		t.Fatal(err)
	}
	for i := range batches {
		if err := w.AddBatch(&batches[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := f.WriteFile("snapshots.json", []byte(`{"/": {"src": {"k.cl": "source_0_k.cl"}}}`)); err != nil {
		t.Fatal(err)
	}
	if err := f.WriteFile("source_0_k.cl", []byte("kernel void k() {}\n")); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
}

// edit rewrites a JSON file of dir through fn (plain encoding/json values).
func edit(t *testing.T, dir, name string, fn func(v map[string]any)) {
	t.Helper()
	p := filepath.Join(dir, name)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	fn(v)
	data, _ = json.Marshal(v)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func m(v any, k string) map[string]any { return v.(map[string]any)[k].(map[string]any) }

const waveFile = "se0_sm1_sl2_wv0.json"

func waveEntry(v map[string]any) []any {
	return m(m(m(m(v, "wave_filenames"), "0"), "1"), "2")["0"].([]any)
}

// One-fault variants of a valid folder, each a way the viewer drops data:
// the checker must flag every one (so that a clean bill for att-rcv's
// folders means something).
func TestCheckFolder(t *testing.T) {
	base := t.TempDir()
	good := filepath.Join(base, "good")
	validFolder(t, good)
	if err := CheckFolder(good); err != nil {
		t.Fatalf("valid folder flagged:\n%v", err)
	}
	faults := []struct {
		name  string
		apply func(dir string)
		want  string
	}{
		{"no filenames.json", func(d string) { os.Remove(filepath.Join(d, "filenames.json")) }, "filenames.json: no such file"},
		{"gfxip string", func(d string) { edit(t, d, "filenames.json", func(v map[string]any) { v["gfxip"] = "9" }) }, "gfxip is not an integer"},
		{"wave key not a number", func(d string) {
			edit(t, d, "filenames.json", func(v map[string]any) { w := m(v, "wave_filenames"); w["x"] = w["0"]; delete(w, "0") })
		}, `bad shader engine entry "x"`},
		{"wave entry file not a string", func(d string) {
			edit(t, d, "filenames.json", func(v map[string]any) { waveEntry(v)[0] = 3 })
		}, "want [file, begin, end]"},
		{"wave file missing", func(d string) { os.Remove(filepath.Join(d, waveFile)) }, waveFile + ": no such file"},
		{"wave file without se", func(d string) {
			os.Rename(filepath.Join(d, waveFile), filepath.Join(d, "wave0.json"))
			edit(t, d, "filenames.json", func(v map[string]any) { waveEntry(v)[0] = "wave0.json" })
		}, "must start with \"se\""},
		{"wave file with a later se", func(d string) {
			os.Rename(filepath.Join(d, waveFile), filepath.Join(d, "se0_base.json"))
			edit(t, d, "filenames.json", func(v map[string]any) { waveEntry(v)[0] = "se0_base.json" })
		}, "hold no other \"se\""},
		{"wave file not listed", func(d string) {
			os.WriteFile(filepath.Join(d, "se0_sm1_sl2_wv9.json"), []byte("{}"), 0o644)
		}, "se0_sm1_sl2_wv9.json: wave file not listed"},
		{"wave id missing", func(d string) { edit(t, d, waveFile, func(v map[string]any) { delete(m(v, "wave"), "id") }) }, "wave.id is not an integer"},
		{"wave end a string", func(d string) { edit(t, d, waveFile, func(v map[string]any) { m(v, "wave")["end"] = "50" }) }, "wave.end is not an integer"},
		{"4-element instruction", func(d string) {
			edit(t, d, waveFile, func(v map[string]any) {
				in := m(v, "wave")["instructions"].([]any)
				in[0] = in[0].([]any)[:4]
			})
		}, "instruction 0: not an array of 5 numbers"},
		{"instructions null", func(d string) { edit(t, d, waveFile, func(v map[string]any) { m(v, "wave")["instructions"] = nil }) }, "wave.instructions is not an array"},
		{"category 16", func(d string) {
			edit(t, d, waveFile, func(v map[string]any) { m(v, "wave")["instructions"].([]any)[1].([]any)[1] = 16 })
		}, "category 16 has no token type"},
		{"line not in code.json", func(d string) {
			edit(t, d, waveFile, func(v map[string]any) { m(v, "wave")["instructions"].([]any)[1].([]any)[4] = 99 })
		}, "line 99 is not a LineNumber of code.json"},
		{"timeline state 7", func(d string) {
			edit(t, d, waveFile, func(v map[string]any) { m(v, "wave")["timeline"].([]any)[0].([]any)[0] = 7 })
		}, "timeline 0: not a [state 0-4, duration] pair"},
		{"code row of 9", func(d string) {
			edit(t, d, "code.json", func(v map[string]any) { c := v["code"].([]any); c[1] = c[1].([]any)[:9] })
		}, "code.json: row 1: not an array of at least 10"},
		{"code negative line", func(d string) {
			edit(t, d, "code.json", func(v map[string]any) { v["code"].([]any)[0].([]any)[2] = -1 })
		}, "LineNumber -1 is not a non-negative integer"},
		{"code source a number", func(d string) {
			edit(t, d, "code.json", func(v map[string]any) { v["code"].([]any)[0].([]any)[3] = 5 })
		}, "Source is neither a string nor null"},
		{"occupancy row of 5", func(d string) {
			edit(t, d, "occupancy.json", func(v map[string]any) { r := v["0"].([]any); r[0] = r[0].([]any)[:5] })
		}, "fewer than 6 elements"},
		{"occupancy string", func(d string) {
			edit(t, d, "occupancy.json", func(v map[string]any) { v["0"].([]any)[0].([]any)[0] = "10" })
		}, "column 0 is not an integer"},
		{"occupancy cu 300", func(d string) {
			edit(t, d, "occupancy.json", func(v map[string]any) { v["0"].([]any)[0].([]any)[1] = 300 })
		}, "column 1 = 300 does not fit 8 bits"},
		{"unnamed kernel id", func(d string) {
			edit(t, d, "occupancy.json", func(v map[string]any) { v["0"].([]any)[0].([]any)[5] = 7 })
		}, "kernel id 7 has no name"},
		{"negative kernel id", func(d string) {
			edit(t, d, "occupancy.json", func(v map[string]any) { v["0"].([]any)[0].([]any)[5] = -1 })
		}, "kernel id -1 is not a non-negative integer"},
		{"occupancy version", func(d string) { edit(t, d, "occupancy.json", func(v map[string]any) { v["version"] = "2.0" }) }, "version 2.0 does not start with 3"},
		{"event kind", func(d string) {
			edit(t, d, "occupancy.json", func(v map[string]any) { m(v, "events")["0"].([]any)[1].(map[string]any)["kind"] = "evt" })
		}, "kind evt: skipped"},
		{"shaderdata entry of 2", func(d string) {
			edit(t, d, "filenames.json", func(v map[string]any) { l := m(v, "shaderdata_filenames")["0"].([]any); l[0] = l[0].([]any)[:2] })
		}, "fewer than 3 elements"},
		{"shaderdata row of 5", func(d string) {
			edit(t, d, "shaderdata_0_0.json", func(v map[string]any) { r := v["records"].([]any); r[0] = r[0].([]any)[:5] })
		}, "records 0: not an array of 6 numbers"},
		{"other simd file missing", func(d string) { os.Remove(filepath.Join(d, "other_simd_se0_0.json")) }, "other_simd_se0_0.json: no such file"},
		{"perfcounter row of 6", func(d string) {
			edit(t, d, "se0_perfcounter.json", func(v map[string]any) { r := v["data"].([]any); r[0] = r[0].([]any)[:6] })
		}, "data 0: not an array of 7 numbers"},
		{"perf counters of an SE without waves", func(d string) {
			data, _ := os.ReadFile(filepath.Join(d, "se0_perfcounter.json"))
			os.WriteFile(filepath.Join(d, "se1_perfcounter.json"), data, 0o644)
		}, "se1_perfcounter.json: never read"},
		{"realtime key", func(d string) {
			edit(t, d, "realtime.json", func(v map[string]any) { v["SEx"] = v["SE0"] })
		}, `key "SEx": no shader engine number`},
		{"realtime frequency", func(d string) {
			edit(t, d, "realtime.json", func(v map[string]any) { delete(m(v, "metadata"), "frequency") })
		}, "metadata.frequency is not an integer"},
		{"snapshot missing", func(d string) { os.Remove(filepath.Join(d, "source_0_k.cl")) }, `snapshot file "source_0_k.cl" is not in the folder`},
		{"nothing to show", func(d string) {
			os.Remove(filepath.Join(d, "occupancy.json"))
			edit(t, d, "code.json", func(v map[string]any) { v["code"] = []any{} })
			edit(t, d, "filenames.json", func(v map[string]any) { v["wave_filenames"] = nil })
			os.Remove(filepath.Join(d, waveFile))
		}, "the viewer rejects the folder"},
	}
	for i, f := range faults {
		dir := filepath.Join(base, "f"+itoa(i))
		copyDir(t, good, dir)
		f.apply(dir)
		err := CheckFolder(dir)
		if err == nil || !strings.Contains(err.Error(), f.want) {
			t.Errorf("%s: got %v, want a problem containing %q", f.name, err, f.want)
		}
	}
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(src)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644)
	}
}

// The viewer's realtime alignment (viewer-loader.md, its realtime.json
// section): an SE whose offset exceeds the traced span is flagged. The
// valid folder's data spans times 10 to 50; with samples at 10 and 40 on
// both SEs the rate is k = (1+3+3)/(25+30+30) = 7/85 ticks a cycle, so an
// SE whose clock reads d ticks more is shifted by d*85/7 cycles: 36 for
// d = 3 (within the span of 40), 49 for d = 4 (beyond it).
func TestCheckRealtimeAlignment(t *testing.T) {
	base := t.TempDir()
	good := filepath.Join(base, "good")
	validFolder(t, good)
	samples := func(d uint64) []any { return []any{[]any{10, 1000 + d}, []any{40, 1003 + d}} }
	cases := []struct {
		name string
		se   map[string][]any
		want string // "" for no problem
	}{
		{"one SE", map[string][]any{"SE0": samples(0)}, ""},
		{"one clock", map[string][]any{"SE0": samples(0), "SE1": samples(0)}, ""},
		{"within the span", map[string][]any{"SE0": samples(0), "SE1": samples(3)}, ""},
		{"beyond the span", map[string][]any{"SE0": samples(0), "SE1": samples(4)},
			"SE1: the viewer's realtime alignment shifts it by 49 cycles, more than the traced span of 40 cycles"},
		{"the anchor is the earliest origin", map[string][]any{"SE0": samples(4), "SE1": samples(0)},
			"SE0: the viewer's realtime alignment shifts it by 49 cycles"},
		{"another high word", map[string][]any{"SE0": samples(0), "SE1": samples(1 << 32)},
			"SE1: the viewer's realtime alignment shifts it by 5"},
	}
	for i, tc := range cases {
		dir := filepath.Join(base, "c"+itoa(i))
		copyDir(t, good, dir)
		edit(t, dir, "realtime.json", func(v map[string]any) {
			delete(v, "SE0")
			for k, s := range tc.se {
				v[k] = s
			}
		})
		err := CheckFolder(dir)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: flagged:\n%v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want a problem containing %q", tc.name, err, tc.want)
		}
	}
}
