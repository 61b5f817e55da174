package wire

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// withoutLostMembers is b as its JSON projection keeps it: size and
// reserved members zero.
func withoutLostMembers(b Batch) Batch {
	b = b.Clone()
	for i := range b.Occupancy {
		b.Occupancy[i].Reserved, b.Occupancy[i].ReservedBits = 0, 0
	}
	for i := range b.Waves {
		b.Waves[i].Reserved, b.Waves[i].Size = 0, 0
	}
	for i := range b.Events {
		b.Events[i].Size = 0
	}
	for i := range b.ShaderData {
		b.ShaderData[i].Reserved = 0
	}
	for i := range b.Realtime {
		b.Realtime[i].Reserved = 0
	}
	for i := range b.OtherSIMD {
		b.OtherSIMD[i].Size = 0
	}
	for i := range b.Dispatches {
		b.Dispatches[i].Size = 0
	}
	for i := range b.Markers {
		b.Markers[i].Size, b.Markers[i].Reserved, b.Markers[i].ShaderData.Reserved = 0, 0, 0
	}
	return b
}

// single is record i of b as a batch of its own.
func single(b Batch, i int) Batch {
	one := Batch{Type: b.Type, GFXIP: b.GFXIP, RTFrequency: b.RTFrequency, Raw: b.Raw}
	switch b.Type {
	case TypeInfo:
		one.Info = b.Info[i : i+1]
	case TypeOccupancy:
		one.Occupancy = b.Occupancy[i : i+1]
	case TypePerfEvent:
		one.PerfEvents = b.PerfEvents[i : i+1]
	case TypeWave:
		one.Waves = b.Waves[i : i+1]
	case TypeEvent:
		one.Events = b.Events[i : i+1]
	case TypeShaderData:
		one.ShaderData = b.ShaderData[i : i+1]
	case TypeRealtime:
		one.Realtime = b.Realtime[i : i+1]
	case TypeInstOtherSIMD:
		one.OtherSIMD = b.OtherSIMD[i : i+1]
	case TypeDispatch:
		one.Dispatches = b.Dispatches[i : i+1]
	case TypeMarker:
		one.Markers = b.Markers[i : i+1]
	}
	return one
}

// TestJSONLinesReadBack reads the JSON projection of every record type
// back: each line becomes a batch of one record equal to the original but
// for the members the projection leaves out, and projecting what was read
// gives the same bytes.
func TestJSONLinesReadBack(t *testing.T) {
	golden, err := os.ReadFile(filepath.Join("testdata", "all-types.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	parts, err := readAll(t, golden)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 1 {
		t.Fatalf("%d parts, want 1", len(parts))
	}
	wantHdr := Header{Format: RecordsFormat, Major: RecordsMajor, Trace: Trace{SE: 0, Run: 1}}
	if parts[0].h != wantHdr {
		t.Errorf("header %+v, want %+v", parts[0].h, wantHdr)
	}
	var want []Batch
	for _, b := range sampleBatches() {
		n := b.Len()
		if !b.Type.Known() {
			n = 1
		}
		for i := 0; i < n; i++ {
			want = append(want, withoutLostMembers(single(b, i)))
		}
	}
	got := parts[0].batches
	if len(got) != len(want) {
		t.Fatalf("%d batches, want %d (one per line)", len(got), len(want))
	}
	var jw JSONWriter
	var again []byte
	for i := range want {
		if g, w := normalise(got[i]), normalise(want[i]); !reflect.DeepEqual(g, w) {
			t.Errorf("line %d (%v):\n got %+v\nwant %+v", i+1, want[i].Type, g, w)
		}
		again = jw.AppendBatch(again, &parts[0].h, &got[i])
	}
	if !bytes.Equal(again, golden) {
		t.Errorf("projecting the records read gives other lines:\n%s", again)
	}
}

// TestJSONLinesParts: a part begins wherever se or run changes; blank
// lines, members jq may add and a missing final newline are fine; a huge
// line (longer than the read buffer) reads whole.
func TestJSONLinesParts(t *testing.T) {
	var big strings.Builder
	big.WriteString(`{"type":"wave","se":1,"run":2,"simd":3,"instructions":[`)
	const n = 40000
	for i := 0; i < n; i++ {
		if i > 0 {
			big.WriteByte(',')
		}
		fmt.Fprintf(&big, `{"category":"valu","duration":4,"pc":{"address":%d,"code_object_id":1},"stall":0,"time":%d}`, 4*i, i)
	}
	big.WriteString(`]}`)
	in := `{"type":"gfxip","se":0,"run":1,"gfxip":11,"note":"added by jq"}` + "\n\n" +
		`{"type":"info","se":0,"run":1,"info":"data_lost"}` + "\n" +
		big.String() + "\n" +
		`{"type":"rt_frequency","se":1,"run":3,"frequency":100}`
	parts, err := readAll(t, []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	var shape []string
	for _, p := range parts {
		shape = append(shape, fmt.Sprintf("se%d/run%d:%d", p.h.Trace.SE, p.h.Trace.Run, len(p.batches)))
	}
	if s := strings.Join(shape, " "); s != "se0/run1:2 se1/run2:1 se1/run3:1" {
		t.Fatalf("parts %s", s)
	}
	if g := parts[0].batches[0].GFXIP; g != 11 {
		t.Errorf("gfxip %d", g)
	}
	w := parts[1].batches[0].Waves[0]
	if w.SIMD != 3 || len(w.Instructions) != n || w.Instructions[n-1].PC != (PC{Address: 4 * (n - 1), CodeObjectID: 1}) {
		t.Errorf("big wave: simd %d, %d instructions", w.SIMD, len(w.Instructions))
	}
	if f := parts[2].batches[0].RTFrequency; f != 100 {
		t.Errorf("frequency %d", f)
	}
}

func TestJSONLinesErrors(t *testing.T) {
	first := `{"type":"gfxip","se":0,"run":1,"gfxip":9}` + "\n"
	for _, c := range []struct {
		name, in, msg string
		code          int
	}{
		{"code.json", "{\n  \"code\": []\n}\n", `x: not an attkit-records stream (line 1 is not a record of its JSON projection: not a JSON object: unexpected EOF)`, 3},
		{"no type", `{"se":0}` + "\n", `x: not an attkit-records stream (line 1 is not a record of its JSON projection: no "type" member)`, 3},
		{"broken line", first + `{"type":"wave",` + "\n", `x:2: not a JSON object: unexpected EOF`, 1},
		{"two values", first + `{"type":"info"} {}` + "\n", `x:2: more than one JSON value on the line`, 1},
		{"unknown type", first + `{"type":"waves"}`, `x:2: unknown record type "waves"`, 1},
		{"out of range", first + `{"type":"wave","cu":256}`, `x:2: member "cu": 256 is not an integer of 0 to 2^8-1`, 1},
		{"negative", first + `{"type":"occupancy","time":-1}`, `x:2: member "time": -1 is not an integer of 0 to 2^64-1`, 1},
		{"rounded by jq", first + `{"type":"event","payload":1.8446744073709552e+19}`, `x:2: member "payload": 1.8446744073709552e+19 is not an integer of 0 to 2^64-1`, 1},
		{"enum name", first + `{"type":"wave","timeline":[{"type":"busy","duration":1}]}`, `x:2: member "timeline": element 0: member "type": unknown name "busy"`, 1},
		{"pc", first + `{"type":"occupancy","pc":{"address":"0x10"}}`, `x:2: member "pc": member "address": 0x10 is not a number`, 1},
		{"base64", first + `{"type":20,"data":"%%"}`, `x:2: member "data": illegal base64 data at input byte 0`, 1},
	} {
		_, err := readAllNamed([]byte(c.in), "x")
		if err == nil || err.Error() != c.msg || codeOf(err) != c.code {
			t.Errorf("%s: error %v (exit %d), want %s (exit %d)", c.name, err, codeOf(err), c.msg, c.code)
		}
		var fe *FormatError
		if c.code == 1 && (!errors.As(err, &fe) || fe.Line != 2) {
			t.Errorf("%s: %#v is not a FormatError at line 2", c.name, err)
		}
	}
}

func readAllNamed(data []byte, name string) (n int, err error) {
	rd := NewReader(bytes.NewReader(data), name)
	for rd.Scan() {
		n++
	}
	return n, rd.Err()
}
