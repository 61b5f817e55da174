package rcv

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/fold"
	"github.com/attkit/attkit/internal/pyjson"
	"github.com/attkit/attkit/internal/wire"
)

// memSink keeps written files in memory; a later write replaces an earlier.
type memSink map[string][]byte

func (m memSink) WriteFile(name string, data []byte) error {
	m[name] = bytes.Clone(data)
	return nil
}

func (m memSink) names() []string {
	var n []string
	for k := range m {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// decode parses a written file back into plain Go values.
func (m memSink) decode(t *testing.T, name string) any {
	t.Helper()
	data, ok := m[name]
	if !ok {
		t.Fatalf("%s not written (have %v)", name, m.names())
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

func pc(co, addr uint64) wire.PC { return wire.PC{Address: addr, CodeObjectID: co} }

// trace is the records of one trace for runWriter.
type trace struct {
	se      int
	gfxip   int // header value
	batches []wire.Batch
}

// runWriter feeds traces to a Writer over a memory sink and a real fold.
func runWriter(t *testing.T, ix *wire.Index, opt Options, traces ...trace) memSink {
	t.Helper()
	sink := memSink{}
	w := NewWriter(sink, ix, fold.New(ix), opt)
	for _, tr := range traces {
		if err := w.BeginTrace(&wire.Header{Trace: wire.Trace{SE: tr.se, GFXIP: tr.gfxip}}); err != nil {
			t.Fatal(err)
		}
		for i := range tr.batches {
			if err := w.AddBatch(&tr.batches[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	return sink
}

var jsonOnly = Options{JSON: true, DecodeMarkers: true}

func num(v any) int64 {
	n, err := v.(json.Number).Int64()
	if err != nil {
		panic(err)
	}
	return n
}

func get(v any, path ...string) any {
	for _, k := range path {
		v = v.(map[string]any)[k]
	}
	return v
}

func wave(simd, slot uint8, begin, end int64, nStates int, insts ...wire.Instruction) wire.Wave {
	w := wire.Wave{SIMD: simd, WaveID: slot, BeginTime: begin, EndTime: end, Instructions: insts}
	for i := 0; i < nStates; i++ {
		w.Timeline = append(w.Timeline, wire.WaveState{Type: wire.StateExec, Duration: 10})
	}
	return w
}

// §5.6: a wave with no instructions and fewer than 3 states gets no file and
// no N; N counts per (SE, SIMD, slot) across traces.
func TestWaveFilesAndN(t *testing.T) {
	in := wire.Instruction{Category: wire.CatSALU, Time: 1, Duration: 4, PC: pc(1, 0x100)}
	sink := runWriter(t, nil, jsonOnly,
		trace{se: 2, batches: []wire.Batch{{Type: wire.TypeWave, Waves: []wire.Wave{
			wave(0, 1, 10, 20, 2),     // skipped
			wave(0, 1, 20, 30, 0, in), // N 0
			wave(1, 1, 30, 40, 3),     // N 0 of another SIMD
			wave(0, 1, 40, 50, 1, in), // N 1
		}}}},
		trace{se: 2, batches: []wire.Batch{{Type: wire.TypeWave, Waves: []wire.Wave{
			wave(0, 1, 50, 60, 0, in), // N 2
			wave(0, 0, 60, 70, 5),     // slot 0 after slot 1
		}}}},
	)
	want := []string{"code.json", "filenames.json", "occupancy.json",
		"se2_sm0_sl0_wv0.json", "se2_sm0_sl1_wv0.json", "se2_sm0_sl1_wv1.json", "se2_sm0_sl1_wv2.json",
		"se2_sm1_sl1_wv0.json"}
	if got := sink.names(); !reflect.DeepEqual(got, want) {
		t.Fatalf("files %v, want %v", got, want)
	}
	fn := string(sink["filenames.json"])
	// Keys in first-insertion order: SIMD 0 before 1, slot 1 before 0.
	order := []string{`"se2_sm0_sl1_wv0.json"`, `"se2_sm0_sl1_wv1.json"`, `"se2_sm0_sl1_wv2.json"`,
		`"se2_sm0_sl0_wv0.json"`, `"se2_sm1_sl1_wv0.json"`}
	last := -1
	for _, s := range order {
		i := strings.Index(fn, s)
		if i < last {
			t.Errorf("filenames.json: %s out of order:\n%s", s, fn)
		}
		last = i
	}
	entry := get(sink.decode(t, "filenames.json"), "wave_filenames", "2", "0", "1", "2").([]any)
	if entry[0] != "se2_sm0_sl1_wv2.json" || num(entry[1]) != 50 || num(entry[2]) != 60 {
		t.Errorf("wave entry %v", entry)
	}
	w := sink.decode(t, "se2_sm0_sl1_wv2.json")
	if num(get(w, "wave", "id")) != 2 || get(w, "name") != "SE2" || num(get(w, "duration")) != 10 {
		t.Errorf("wave file %v", w)
	}
}

// AppendWave writes what pyjson (json.dumps(indent=2)) writes for the same
// document, for waves of every shape.
func TestAppendWaveMatchesPyjson(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	lines := map[wire.PC]int64{}
	line := func(p wire.PC) int64 {
		if _, ok := lines[p]; !ok {
			lines[p] = int64(len(lines)) + 1
		}
		return lines[p]
	}
	for iter := 0; iter < 200; iter++ {
		wv := wire.Wave{CU: uint8(rng.Intn(256)), SIMD: uint8(rng.Intn(4)), WaveID: uint8(rng.Intn(16)),
			BeginTime: rng.Int63n(1 << 40), EndTime: rng.Int63() - 1<<62}
		for i := rng.Intn(4); i > 0; i-- {
			wv.Timeline = append(wv.Timeline, wire.WaveState{Type: wire.WaveStateType(rng.Intn(5)), Duration: rng.Int31() - 1<<30})
		}
		for i := rng.Intn(5); i > 0; i-- {
			wv.Instructions = append(wv.Instructions, wire.Instruction{Category: wire.InstCategory(rng.Intn(15)),
				Stall: rng.Uint32() >> 8, Duration: rng.Int31() - 1<<30, Time: rng.Int63() - 1<<62,
				PC: pc(uint64(rng.Intn(3)), uint64(rng.Intn(8))*4)})
		}
		se, n := rng.Intn(32), rng.Intn(1000)
		got := AppendWave(nil, se, n, &wv, line)
		insts := make([]any, len(wv.Instructions))
		for i, in := range wv.Instructions {
			insts[i] = []any{in.Time, int64(in.Category), int64(in.Stall), int64(in.Duration), line(in.PC)}
		}
		tl := make([]any, len(wv.Timeline))
		for i, s := range wv.Timeline {
			tl[i] = []any{int64(s.Type), int64(s.Duration)}
		}
		want := pyjson.Marshal(pyjson.Object{
			{Key: "name", Value: "SE" + itoa(se)},
			{Key: "duration", Value: wv.EndTime - wv.BeginTime},
			{Key: "wave", Value: pyjson.Object{
				{Key: "cu", Value: int64(wv.CU)}, {Key: "id", Value: n}, {Key: "simd", Value: int64(wv.SIMD)},
				{Key: "slot", Value: int64(wv.WaveID)}, {Key: "begin", Value: wv.BeginTime}, {Key: "end", Value: wv.EndTime},
				{Key: "instructions", Value: insts}, {Key: "timeline", Value: tl}, {Key: "waitcnt", Value: []any{}},
			}},
			{Key: "num_stitched", Value: len(insts)},
			{Key: "num_insts", Value: len(insts)},
		})
		if !bytes.Equal(got, want) {
			t.Fatalf("wave %d:\n got %s\nwant %s", iter, got, want)
		}
	}
}

func itoa(i int) string { return string(pyjson.Marshal(i)) }

func kernelsIndex(kernels ...wire.Kernel) *wire.Index { return &wire.Index{Kernels: kernels} }

// §5.4 kernel ids and names.
func TestKernelIDs(t *testing.T) {
	ix := kernelsIndex(
		wire.Kernel{Address: 0x1600, CodeObj: 2, Name: "early"},
		wire.Kernel{Address: 0x1600, CodeObj: 2, Name: "", Demangled: "late(int)"}, // later entry wins
		wire.Kernel{Address: 0x100, CodeObj: 1, Name: "k1", Demangled: "k1()"},
		wire.Kernel{Address: 0x200, CodeObj: 1}, // no names: default
		wire.Kernel{Address: 0xABC, CodeObj: 5, Name: "unused"},
	)
	o := func(se int, p wire.PC, start bool) wire.Occupancy {
		return wire.Occupancy{PC: p, Time: 7, Start: start}
	}
	sink := runWriter(t, ix, jsonOnly,
		trace{se: 1, batches: []wire.Batch{
			{Type: wire.TypeDispatch, Dispatches: []wire.Dispatch{{Time: 1, EntryPoint: pc(9, 0xFACE)}, {Time: 0, EntryPoint: pc(1, 0x100)}}},
			{Type: wire.TypeOccupancy, Occupancy: []wire.Occupancy{o(1, pc(2, 0x1600), true), o(1, pc(0, 0), true)}},
		}},
		trace{se: 0, batches: []wire.Batch{
			{Type: wire.TypeOccupancy, Occupancy: []wire.Occupancy{o(0, pc(1, 0x200), true), o(0, pc(2, 0x1600), false)}},
			{Type: wire.TypeDispatch, Dispatches: []wire.Dispatch{{Time: 5, EntryPoint: pc(1, 0x200)}, {Time: 6, EntryPoint: pc(3, 0x300)}}},
		}},
	)
	doc := sink.decode(t, "occupancy.json").(map[string]any)
	// Occupancy first (SE 1 then SE 0, as added), then dispatches (SE 1: in
	// decode order, not time order; then SE 0).
	wantIDs := map[string][]int64{"1": {1, 0}, "0": {2, 1}}
	for se, ids := range wantIDs {
		for i, row := range doc[se].([]any) {
			if got := num(row.([]any)[5]); got != ids[i] {
				t.Errorf("SE %s row %d kernel id %d, want %d", se, i, got, ids[i])
			}
		}
	}
	disp := string(sink["occupancy.json"])
	want := `  "dispatches": {
    "0": "0 / 0x0",
    "1": "late(int)",
    "2": "1 / 0x200",
    "3": "9 / 0xface",
    "4": "k1",
    "5": "3 / 0x300"
  },`
	if !strings.Contains(disp, want) {
		t.Errorf("dispatches:\n%s\nwant\n%s", disp, want)
	}
	ev := doc["events"].(map[string]any)["1"].([]any)
	if num(get(ev[0], "kernel_id")) != 4 || get(ev[0], "kernel_name") != "k1" || num(get(ev[1], "kernel_id")) != 3 {
		t.Errorf("SE 1 events %v", ev)
	}
	// Keys: fields, events, dispatches, version, then SEs as added.
	var keys []string
	for _, m := range mustDecode(t, sink["occupancy.json"]).(pyjson.Object) {
		keys = append(keys, m.Key)
	}
	if strings.Join(keys, " ") != "occupancy_fields events dispatches version 1 0" {
		t.Errorf("occupancy.json keys %v", keys)
	}
}

func mustDecode(t *testing.T, data []byte) any {
	v, err := pyjson.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// §5.4 events: dispatches then events, stably sorted by time; extra keys
// for code object and cluster barrier events.
func TestEvents(t *testing.T) {
	sink := runWriter(t, nil, jsonOnly, trace{se: 0, batches: []wire.Batch{
		{Type: wire.TypeEvent, Events: []wire.Event{
			{Time: 30, Type: wire.EventCodeObjectUnload, Payload: 7},
			{Time: 10, Type: wire.EventClusterBarrier, Payload: 0x80000000_FFFFFFFF},
			{Time: 10, Type: wire.EventDispatchEnd, Payload: 1},
		}},
		{Type: wire.TypeDispatch, Dispatches: []wire.Dispatch{{Time: 20}, {Time: 10, ByteOffset: 1}}},
		{Type: wire.TypeEvent, Events: []wire.Event{{Time: 10, Type: wire.EventCodeObjectLoad, Payload: 3}}},
	}})
	ev := get(sink.decode(t, "occupancy.json"), "events", "0").([]any)
	var got []string
	for _, e := range ev {
		m := e.(map[string]any)
		s := m["kind"].(string) + "@" + string(m["time"].(json.Number))
		if m["kind"] == "event" {
			s += "/" + string(m["type"].(json.Number))
		}
		got = append(got, s)
	}
	want := "dispatch@10 event@10/14 event@10/4 event@10/7 dispatch@20 event@30/8"
	if strings.Join(got, " ") != want {
		t.Errorf("order %v, want %s", got, want)
	}
	if e := ev[1].(map[string]any); num(e["cluster_id"]) != -1 || num(e["barrier_id"]) != -1<<31 || len(e) != 10 {
		t.Errorf("cluster barrier %v", e)
	}
	if e := ev[3].(map[string]any); num(e["code_object_id"]) != 3 || len(e) != 9 {
		t.Errorf("code object load %v", e)
	}
	if e := ev[2].(map[string]any); len(e) != 8 {
		t.Errorf("plain event %v", e)
	}
	data := string(sink["occupancy.json"])
	dispatchKeys := []string{"kind", "time", "me_id", "pipe_id", "kernel_id", "kernel_name", "entry_point",
		"address", "code_object_id", "user_sgprs", "vgprs", "sgprs", "lds_size", "thread_dim_x", "thread_dim_y",
		"thread_dim_z", "dispatch_pkt_addr", "byte_offset", "flags", "kind"}
	pos := 0
	for _, k := range dispatchKeys {
		i := strings.Index(data[pos:], `"`+k+`":`)
		if i < 0 {
			t.Fatalf("dispatch key %q missing or out of order", k)
		}
		pos += i + 1
	}
}

// §5.3 gfxip and gfxv; §5.5 realtime.json.
func TestFilenamesAndRealtime(t *testing.T) {
	for _, tc := range []struct {
		name    string
		traces  []trace
		gfxip   int64
		gfxv    string
		rt      bool
		freq    int64
		rtKeys  string
		rtFirst string
	}{
		{"none", []trace{{se: 0}}, 9, "vega", false, 0, "", ""},
		{"header", []trace{{se: 0, gfxip: 11}}, 11, "navi", false, 0, "", ""},
		{"last record wins over header", []trace{
			{se: 0, gfxip: 12, batches: []wire.Batch{{Type: wire.TypeGFXIP, GFXIP: 10}}},
			{se: 1, batches: []wire.Batch{{Type: wire.TypeGFXIP, GFXIP: 9}}},
		}, 9, "vega", false, 0, "", ""},
		{"realtime", []trace{
			{se: 3, batches: []wire.Batch{{Type: wire.TypeRealtime}, {Type: wire.TypeGFXIP, GFXIP: 10}}},
			{se: 1, batches: []wire.Batch{
				{Type: wire.TypeRTFrequency, RTFrequency: 5},
				{Type: wire.TypeRealtime, Realtime: []wire.Realtime{{ShaderClock: -4, RealtimeClock: 1 << 63}}},
				{Type: wire.TypeRTFrequency, RTFrequency: 100000000},
			}},
		}, 10, "navi", true, 100000000, "metadata SE3 SE1", "[-4 9223372036854775808]"},
		{"realtime without frequency", []trace{
			{se: 0, batches: []wire.Batch{{Type: wire.TypeRealtime, Realtime: []wire.Realtime{{ShaderClock: 1, RealtimeClock: 2}}}}},
		}, 9, "vega", true, 0, "metadata SE0", ""},
	} {
		sink := runWriter(t, nil, jsonOnly, tc.traces...)
		fn := sink.decode(t, "filenames.json").(map[string]any)
		if num(fn["gfxip"]) != tc.gfxip || fn["gfxv"] != tc.gfxv || fn["version"] != "3.1.0" ||
			num(fn["global_begin_time"]) != 0 || len(fn["counter_names"].([]any)) != 0 {
			t.Errorf("%s: filenames.json %v", tc.name, fn)
		}
		data, ok := sink["realtime.json"]
		if ok != tc.rt {
			t.Errorf("%s: realtime.json written %v, want %v", tc.name, ok, tc.rt)
			continue
		}
		if !ok {
			continue
		}
		doc := mustDecode(t, data).(pyjson.Object)
		var keys []string
		for _, m := range doc {
			keys = append(keys, m.Key)
		}
		if strings.Join(keys, " ") != tc.rtKeys {
			t.Errorf("%s: realtime keys %v, want %s", tc.name, keys, tc.rtKeys)
		}
		rt := sink.decode(t, "realtime.json").(map[string]any)
		if num(get(rt, "metadata", "frequency")) != tc.freq || get(rt, "metadata", "descriptor") != "[gfx_clock, realtime_clock]" {
			t.Errorf("%s: metadata %v", tc.name, rt["metadata"])
		}
		if tc.rtFirst != "" {
			if got := strings.ReplaceAll(strings.Trim(string(mustJSON(rt["SE1"].([]any)[0])), ""), ",", " "); got != tc.rtFirst {
				t.Errorf("%s: SE1[0] %s, want %s", tc.name, got, tc.rtFirst)
			}
			if len(rt["SE3"].([]any)) != 0 {
				t.Errorf("%s: SE3 %v", tc.name, rt["SE3"])
			}
		}
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// §5.7–5.9: per-trace files, K per SE, begin/end from list order.
func TestPerTraceFiles(t *testing.T) {
	sink := runWriter(t, nil, jsonOnly,
		trace{se: 1, batches: []wire.Batch{
			{Type: wire.TypePerfEvent, PerfEvents: []wire.PerfEvent{{Time: 1, Events: [4]uint16{1, 2, 3, 65535}, CU: 4, Bank: 1}}},
			{Type: wire.TypeInstOtherSIMD, OtherSIMD: []wire.OtherSIMD{{Time: 50, Cycles: 3, WGP: 7, Category: 6}, {Time: 20, Cycles: 5, WGP: 1}}},
			{Type: wire.TypeShaderData, ShaderData: []wire.ShaderData{{Time: 90, Value: 1}, {Time: 30, Value: 2, Flags: 3}}},
		}},
		trace{se: 0, batches: []wire.Batch{
			{Type: wire.TypeShaderData, ShaderData: []wire.ShaderData{{Time: 5, Value: 1 << 63}}},
		}},
		trace{se: 1, batches: []wire.Batch{
			{Type: wire.TypeInstOtherSIMD, OtherSIMD: []wire.OtherSIMD{{Time: 100, Cycles: 1}}},
			{Type: wire.TypePerfEvent, PerfEvents: []wire.PerfEvent{{Time: 2}}},
		}},
		trace{se: 1}, // nothing: no files
	)
	want := []string{"code.json", "filenames.json", "occupancy.json", "other_simd_se1_0.json", "other_simd_se1_1.json",
		"se1_perfcounter.json", "shaderdata_0_0.json", "shaderdata_1_0.json"}
	if got := sink.names(); !reflect.DeepEqual(got, want) {
		t.Fatalf("files %v, want %v", got, want)
	}
	fn := sink.decode(t, "filenames.json").(map[string]any)
	if got := string(mustJSON(fn["other_simd_filenames"])); got != `{"1":[["other_simd_se1_0.json",50,25],["other_simd_se1_1.json",100,101]]}` {
		t.Errorf("other_simd_filenames %s", got)
	}
	if got := string(mustJSON(fn["shaderdata_filenames"])); got != `{"0":[["shaderdata_0_0.json",5,5]],"1":[["shaderdata_1_0.json",90,30]]}` {
		t.Errorf("shaderdata_filenames %s", got)
	}
	// SE 1 comes first in shaderdata_filenames: first inserted.
	if s := string(sink["filenames.json"]); strings.Index(s, `"shaderdata_1_0.json"`) > strings.Index(s, `"shaderdata_0_0.json"`) {
		t.Errorf("shaderdata_filenames not in insertion order:\n%s", s)
	}
	if got := string(mustJSON(sink.decode(t, "se1_perfcounter.json"))); got != `{"data":[[2,0,0,0,0,0,0]]}` {
		t.Errorf("perfcounter: second trace of SE 1 must replace the first: %s", got)
	}
	os := sink.decode(t, "other_simd_se1_0.json").(map[string]any)
	if got := string(mustJSON(os)); got != `{"begin_time":50,"end_time":25,"instructions":[[50,3,6],[20,5,0]],"instructions_count":2,"instructions_schema":["time","duration","category"],"type":"OTHER_SIMD_INSTRUCTIONS","wgp":7}` {
		t.Errorf("other simd %s", got)
	}
	sd := string(mustJSON(sink.decode(t, "shaderdata_1_0.json")))
	if sd != `{"begin_time":90,"end_time":30,"records":[[90,1,0,0,0,0],[30,2,0,0,0,3]],"records_count":2,"records_schema":["time","value","cu","simd","wave_id","flags"],"type":"shaderdata"}` {
		t.Errorf("shaderdata %s", sd)
	}
	if sd := string(sink["shaderdata_0_0.json"]); !strings.Contains(sd, "9223372036854775808") {
		t.Errorf("64-bit value lost: %s", sd)
	}
	// Key order of the other-SIMD and shaderdata files.
	for name, keys := range map[string]string{
		"other_simd_se1_0.json": "type begin_time end_time wgp instructions_schema instructions_count instructions",
		"shaderdata_1_0.json":   "type begin_time end_time records_schema records_count records",
		"filenames.json":        "global_begin_time gfxv gfxip version counter_names wave_filenames other_simd_filenames shaderdata_filenames",
	} {
		var got []string
		for _, m := range mustDecode(t, sink[name]).(pyjson.Object) {
			got = append(got, m.Key)
		}
		if strings.Join(got, " ") != keys {
			t.Errorf("%s keys %v, want %s", name, got, keys)
		}
	}
}

// Without JSON only code.json is written, but the waves are still folded.
func TestCSVOnly(t *testing.T) {
	in := wire.Instruction{Time: 5, Duration: 4, PC: pc(1, 0x100)}
	sink := runWriter(t, nil, Options{DecodeMarkers: true}, trace{se: 0, batches: []wire.Batch{
		{Type: wire.TypeWave, Waves: []wire.Wave{wave(0, 0, 0, 10, 0, in, wire.Instruction{})}},
		{Type: wire.TypePerfEvent, PerfEvents: []wire.PerfEvent{{Time: 1}}},
		{Type: wire.TypeShaderData, ShaderData: []wire.ShaderData{{Time: 1}}},
		{Type: wire.TypeRealtime, Realtime: []wire.Realtime{{ShaderClock: 1}}},
	}})
	if got := sink.names(); !reflect.DeepEqual(got, []string{"code.json"}) {
		t.Fatalf("files %v", got)
	}
	want := `{
  "code": [
    [
      "",
      0,
      1,
      "",
      1,
      256,
      1,
      4,
      0,
      5
    ]
  ],
  "header": "ISA, _, LineNumber, Source, Codeobj, Vaddr, Hit, Latency, Stall, Idle"
}`
	if got := string(sink["code.json"]); got != want {
		t.Errorf("code.json:\n%s\nwant\n%s", got, want)
	}
}

func TestErrors(t *testing.T) {
	w := NewWriter(memSink{}, nil, fold.New(nil), jsonOnly)
	if err := w.AddBatch(&wire.Batch{Type: wire.TypeGFXIP}); err == nil {
		t.Error("records before a header accepted")
	}
	if err := w.BeginTrace(&wire.Header{Trace: wire.Trace{SE: -3}}); err == nil || !strings.Contains(err.Error(), "negative shader engine -3") {
		t.Errorf("negative SE: %v", err)
	}
}

func TestParseFormats(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want Formats
		err  string
	}{
		{[]string{"json,csv"}, Formats{JSON: true, CSV: true}, ""},
		{[]string{" JSON "}, Formats{JSON: true}, ""},
		{[]string{"csv", ",json,"}, Formats{JSON: true, CSV: true}, ""},
		{[]string{""}, Formats{}, "No output formats requested."},
		{nil, Formats{}, "No output formats requested."},
		{[]string{" , ,"}, Formats{}, "No output formats requested."},
		{[]string{"jsn"}, Formats{}, "Unsupported output format(s): jsn. Expected one or more of: csv, json"},
		{[]string{"jsonx,XML,csv", "xml"}, Formats{}, "Unsupported output format(s): jsonx, xml. Expected one or more of: csv, json"},
	} {
		got, err := ParseFormats(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v, %v", tc.in, got, err)
		}
	}
}
