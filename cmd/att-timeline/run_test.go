package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/wire"
)

// The inputs: the generated two-shader-engine run att-rcv's tests keep
// (sqttgen traces of the real gfx942 test kernels, decoded by the native
// decoder: waves, occupancy, dispatches, events, perf counters, shader
// data) and its index.
var (
	genStreams = []string{"../att-rcv/testdata/gen_se0.rec", "../att-rcv/testdata/gen_se1.rec"}
	genIndex   = "../att-rcv/testdata/gfx942.index"
)

func runCmd(t testing.TB, stdin io.Reader, args ...string) (int, string, string) {
	t.Helper()
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	var out, errb bytes.Buffer
	code := run(args, stdin, &out, &errb)
	return code, out.String(), errb.String()
}

// traceEvent is an event as the Trace Event Format defines it.
type traceEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat"`
	Ph   string         `json:"ph"`
	Ts   *int64         `json:"ts"`
	Dur  *int64         `json:"dur"`
	Pid  *int           `json:"pid"`
	Tid  *int           `json:"tid"`
	S    string         `json:"s"`
	Args map[string]any `json:"args"`
}

type traceDoc struct {
	TraceEvents []traceEvent   `json:"traceEvents"`
	OtherData   map[string]any `json:"otherData"`
}

// parse reads a trace strictly: a JSON object with traceEvents, every
// event with the fields its phase requires (Trace Event Format: name, ph,
// pid, tid; ts except on metadata; dur on complete events; a scope on
// instants; args on counters and metadata).
func parse(t *testing.T, data string) traceDoc {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(data))
	dec.DisallowUnknownFields()
	var d traceDoc
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("not a Trace Event Format object: %v\n%.300s", err, data)
	}
	if dec.More() {
		t.Fatal("data after the trace object")
	}
	for i, e := range d.TraceEvents {
		bad := func(why string) { t.Fatalf("event %d %+v: %s", i, e, why) }
		if e.Ph == "" || e.Pid == nil || e.Tid == nil {
			bad("no ph, pid or tid")
		}
		switch e.Ph {
		case "M":
			if e.Args == nil {
				bad("metadata without args")
			}
		case "X":
			if e.Ts == nil || e.Dur == nil || *e.Dur < 0 {
				bad("complete event without ts or with a bad dur")
			}
		case "i":
			if e.Ts == nil || e.S != "t" && e.S != "p" && e.S != "g" {
				bad("instant without ts or scope")
			}
		case "C":
			if e.Ts == nil || len(e.Args) == 0 {
				bad("counter without ts or values")
			}
		case "B", "E":
			if e.Ts == nil {
				bad("duration event without ts")
			}
		default:
			bad("unexpected phase")
		}
	}
	return d
}

// readRecords returns the waves, occupancy records, dispatches and events
// of streams, per shader engine.
type seRecords struct {
	waves      []wire.Wave
	occupancy  []wire.Occupancy
	dispatches []wire.Dispatch
	events     []wire.Event
}

func readRecords(t *testing.T, paths ...string) map[int]*seRecords {
	t.Helper()
	out := map[int]*seRecords{}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		rd := wire.NewReader(f, p)
		var cur *seRecords
		for rd.Scan() {
			switch rd.Kind() {
			case wire.KindHeader:
				se := rd.Header().Trace.SE
				if out[se] == nil {
					out[se] = &seRecords{}
				}
				cur = out[se]
			case wire.KindBatch:
				b := rd.Batch()
				for _, w := range b.Waves {
					w.Instructions = append([]wire.Instruction(nil), w.Instructions...)
					cur.waves = append(cur.waves, w)
				}
				cur.occupancy = append(cur.occupancy, b.Occupancy...)
				cur.dispatches = append(cur.dispatches, b.Dispatches...)
				cur.events = append(cur.events, b.Events...)
			}
		}
		if err := rd.Err(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	return out
}

func key(pid, tid int) [2]int { return [2]int{pid, tid} }

// The timeline of the generated run holds what the issue asks for, record
// for record: a process per shader engine, a track per wave slot with a
// wave slice per wave and its instructions (args from the index) and
// stalls nested in it, occupancy counters per CU, dispatches and events as
// instants.
func TestTimelineGenerated(t *testing.T) {
	code, stdout, stderr := runCmd(t, nil, "--index", genIndex, genStreams[0], genStreams[1])
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	d := parse(t, stdout)
	recs := readRecords(t, genStreams...)
	ix, err := wire.ReadIndexFile(genIndex)
	if err != nil {
		t.Fatal(err)
	}
	text := map[wire.PC]string{}
	for _, r := range ix.Rows {
		if !r.IsLabel() {
			text[r.PC()] = r.Text
		}
	}

	procs := map[int]string{}
	threads := map[[2]int]string{}
	waves := map[[2]int][]traceEvent{}
	insts := map[[2]int][]traceEvent{}
	stalls := map[[2]int][]traceEvent{}
	var counters, instants []traceEvent
	for _, e := range d.TraceEvents {
		k := key(*e.Pid, *e.Tid)
		switch {
		case e.Ph == "M" && e.Name == "process_name":
			procs[*e.Pid] = e.Args["name"].(string)
		case e.Ph == "M" && e.Name == "thread_name":
			threads[k] = e.Args["name"].(string)
		case e.Ph == "X" && e.Cat == "wave":
			waves[k] = append(waves[k], e)
		case e.Ph == "X" && e.Cat == "instruction":
			insts[k] = append(insts[k], e)
		case e.Ph == "X" && e.Cat == "stall":
			stalls[k] = append(stalls[k], e)
		case e.Ph == "C":
			counters = append(counters, e)
		case e.Ph == "i":
			instants = append(instants, e)
		}
	}
	if fmt.Sprint(procs) != "map[1:SE0 2:SE1]" {
		t.Errorf("processes %v", procs)
	}
	nWaves, nInsts, nStalls, nOcc, nInstants := 0, 0, 0, 0, 0
	for se, r := range recs {
		pid := se + 1
		for _, w := range r.waves {
			k := key(pid, slotTID(w.CU, w.SIMD, w.WaveID))
			if want := fmt.Sprintf("CU%d SIMD%d slot%d", w.CU, w.SIMD, w.WaveID); threads[k] != want {
				t.Errorf("track %v named %q, want %q", k, threads[k], want)
			}
			nWaves++
			nInsts += len(w.Instructions)
			for _, in := range w.Instructions {
				if in.Stall > 0 && in.Duration > 0 {
					nStalls++
				}
			}
		}
		nOcc += len(r.occupancy)
		nInstants += len(r.dispatches) + len(r.events)
	}
	got := 0
	for k, ws := range waves {
		got += len(ws)
		sort.Slice(ws, func(i, j int) bool { return *ws[i].Ts < *ws[j].Ts })
		// Waves of a slot do not overlap; every instruction and stall
		// slice lies inside a wave, and a stall inside its instruction.
		for i := 1; i < len(ws); i++ {
			if *ws[i].Ts < *ws[i-1].Ts+*ws[i-1].Dur {
				t.Errorf("track %v: waves at %d and %d overlap", k, *ws[i-1].Ts, *ws[i].Ts)
			}
		}
		inside := func(e traceEvent, outer []traceEvent) bool {
			for _, o := range outer {
				if *e.Ts >= *o.Ts && *e.Ts+*e.Dur <= *o.Ts+*o.Dur {
					return true
				}
			}
			return false
		}
		for _, in := range insts[k] {
			if !inside(in, ws) {
				t.Fatalf("track %v: instruction %+v outside every wave", k, in)
			}
		}
		for _, s := range stalls[k] {
			if !inside(s, insts[k]) {
				t.Fatalf("track %v: stall %+v outside every instruction", k, s)
			}
		}
	}
	gotInsts, gotStalls := 0, 0
	for _, l := range insts {
		gotInsts += len(l)
		for _, in := range l {
			pc := in.Args["pc"].(string)
			if in.Args["text"] == nil {
				t.Fatalf("instruction at %s without text", pc)
			}
		}
	}
	for _, l := range stalls {
		gotStalls += len(l)
	}
	if got != nWaves || gotInsts == 0 || gotInsts > nInsts || gotStalls == 0 || gotStalls > nStalls {
		t.Errorf("%d wave slices for %d waves, %d instruction slices for %d, %d stall slices for %d",
			got, nWaves, gotInsts, nInsts, gotStalls, nStalls)
	}
	if nWaves == 0 || len(counters) != nOcc || len(instants) != nInstants {
		t.Errorf("%d counter events for %d occupancy records, %d instants for %d dispatches and events",
			len(counters), nOcc, len(instants), nInstants)
	}
	// Every instruction slice carries its index text: check one exactly.
	for _, r := range recs {
		in := r.waves[0].Instructions[0]
		found := false
		for _, l := range insts {
			for _, e := range l {
				if *e.Ts == in.Time && e.Args["pc"] == pcString(in.PC) {
					found = e.Args["text"] == text[in.PC] && e.Name == in.Category.String()
				}
			}
		}
		if !found {
			t.Errorf("no instruction slice %s %q at %d", in.Category, text[in.PC], in.Time)
		}
		break
	}
	// Occupancy counters count resident waves per CU and end at zero.
	last := map[string]float64{}
	for _, c := range counters {
		last[fmt.Sprint(*c.Pid, c.Name)] = c.Args["waves"].(float64)
	}
	for k, v := range last {
		if v != 0 {
			t.Errorf("counter %s ends at %v waves", k, v)
		}
	}
}

// --start/--end keep the window, cutting slices to it; --jq keeps the
// records a jq program accepts; -o writes a file.
func TestWindowAndJq(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "t.json")
	code, _, stderr := runCmd(t, nil, "-o", out, "--start", "2000", "--end", "3000", "--jq", `.type != "wave" or .simd == 0`,
		genStreams[0], genStreams[1])
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	d := parse(t, string(data))
	n := 0
	for _, e := range d.TraceEvents {
		if e.Ph == "M" {
			continue
		}
		n++
		end := *e.Ts
		if e.Dur != nil {
			end += *e.Dur
		}
		if *e.Ts < 2000 || end > 3000 {
			t.Errorf("event %+v outside [2000, 3000]", e)
		}
		if e.Cat == "wave" && e.Args["simd"].(float64) != 0 {
			t.Errorf("wave of SIMD %v kept by --jq", e.Args["simd"])
		}
	}
	if n == 0 {
		t.Fatal("nothing in the window")
	}
}

// --max-size bounds the output: the trace stays valid JSON, says where it
// was cut, and a warning says so too.
func TestMaxSize(t *testing.T) {
	code, full, _ := runCmd(t, nil, genStreams[0], genStreams[1])
	if code != 0 {
		t.Fatal(code)
	}
	code, stdout, stderr := runCmd(t, nil, "--max-size", "20KB", genStreams[0], genStreams[1])
	if code != 0 || !strings.Contains(stderr, "att-timeline: warning: output reached --max-size 20KB at cycle ") ||
		strings.Count(stderr, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if len(stdout) > 20<<10+200 || len(full) < 100<<10 {
		t.Errorf("%d bytes with --max-size 20KB (%d without)", len(stdout), len(full))
	}
	d := parse(t, stdout)
	if d.OtherData["cut_at_cycle"] == nil {
		t.Error("no cut_at_cycle in otherData")
	}
	code, stdout, _ = runCmd(t, nil, "--no-instructions", genStreams[0], genStreams[1])
	if code != 0 || strings.Contains(stdout, `"cat":"instruction"`) || len(stdout)*4 > len(full) {
		t.Errorf("--no-instructions: exit %d, %d bytes of %d", code, len(stdout), len(full))
	}
}

// Markers become scopes (enter/exit) and instants on the slot's marker
// track, and scopes left open are closed at the end.
func TestMarkers(t *testing.T) {
	mk := func(time int64, flags uint32, kind wire.MarkerKind, name string) wire.Marker {
		return wire.Marker{ShaderData: wire.ShaderData{Time: time, CU: 1, SIMD: 2, WaveID: 3}, Name: name,
			MarkerID: 7, MarkerKind: kind, MarkerFlags: flags}
	}
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	w.WriteHeader(&wire.Header{Producer: "test", Trace: wire.Trace{SE: 0, Run: 1}})
	w.WriteBatch(&wire.Batch{Type: wire.TypeMarker, Markers: []wire.Marker{
		mk(10, markerEnter, 2, "outer"), mk(20, markerEnter, 2, "inner"), mk(25, 0, markerPoint, "here"),
		mk(30, markerExitPrev, 2, ""), mk(40, markerExitPrev|markerEnter, 2, "next"),
		{ShaderData: wire.ShaderData{Time: 50}, RecordKind: 1}, // a payload: not a marker of its own
	}})
	w.Flush()
	code, stdout, stderr := runCmd(t, &buf)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got []string
	for _, e := range parse(t, stdout).TraceEvents {
		if e.Cat == "marker" {
			got = append(got, fmt.Sprintf("%s %s %d", e.Ph, e.Name, *e.Ts))
		}
	}
	want := "B outer 10,B inner 20,i here 25,E  30,E  40,B next 40,E  40"
	if strings.Join(got, ",") != want {
		t.Errorf("markers %q\nwant    %q", strings.Join(got, ","), want)
	}
}

// Names with quotes, backslashes, control characters and invalid UTF-8
// come out as JSON strings of the same text (invalid bytes as U+FFFD).
func TestNamesEscaped(t *testing.T) {
	names := []string{"q\"b\\s", "tab\tnl\nbell\x07del\x7f", "bad\xff\xfeutf8", "é✓"}
	var ms []wire.Marker
	for i, n := range names {
		ms = append(ms, wire.Marker{ShaderData: wire.ShaderData{Time: int64(10 * (i + 1)), CU: 1}, Name: n,
			MarkerKind: 2, MarkerFlags: markerEnter})
	}
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	w.WriteHeader(&wire.Header{Producer: "test", Trace: wire.Trace{SE: 0, Run: 1}})
	w.WriteBatch(&wire.Batch{Type: wire.TypeMarker, Markers: ms})
	w.Flush()
	code, stdout, stderr := runCmd(t, &buf)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got []string
	for _, e := range parse(t, stdout).TraceEvents {
		if e.Cat == "marker" && e.Ph == "B" {
			got = append(got, e.Name)
		}
	}
	want := []string{names[0], names[1], "bad\ufffd\ufffdutf8", names[3]}
	if !slices.Equal(got, want) {
		t.Errorf("names %q, want %q", got, want)
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--start", "5", "--end", "4", genStreams[0]}, exitcode.Usage, "att-timeline: --start 5 is after --end 4\n"},
		{[]string{"--max-size", "lots", genStreams[0]}, exitcode.Usage, "att-timeline: --max-size: \"lots\" is not a size such as 64MB\n"},
		{[]string{"--jq", "select(", genStreams[0]}, exitcode.Usage, "att-timeline: --jq: unexpected EOF\n"},
		{[]string{genStreams[0], genStreams[0]}, exitcode.Usage, "given twice"},
		{[]string{"missing.rec"}, exitcode.Failed, "missing.rec"},
	} {
		code, _, stderr := runCmd(t, nil, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.msg) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, %q; want %d, %q", tc.args, code, stderr, tc.code, tc.msg)
		}
	}
	// Not a record stream.
	code, _, stderr := runCmd(t, strings.NewReader("hello"))
	if code == 0 || !strings.HasPrefix(stderr, "att-timeline: ") {
		t.Errorf("garbage input: exit %d, %q", code, stderr)
	}
	// A failed run leaves no output file.
	dir := t.TempDir()
	out := filepath.Join(dir, "t.json")
	if code, _, _ := runCmd(t, strings.NewReader("hello"), "-o", out); code == 0 {
		t.Error("garbage input: exit 0")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left %v behind", entries)
	}
}
