package rcv

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/attkit/attkit/internal/fold"
	"github.com/attkit/attkit/internal/wire"
)

// The cases of python-layer §5.11 and of upstream's att_tool_test.py
// (§9.1): records on cu 1, simd 2, slot 3; code object 7 launched there at
// time 0 unless stated; layout [7, 12, 4]; marker ids 3 and 4 known.

type rec struct {
	time  int64
	value uint64
}

func (r rec) String() string { return fmt.Sprintf("(%#x, %#x)", r.time, r.value) }

func sdAt(simd uint8, time int64, value uint64) wire.ShaderData {
	return wire.ShaderData{Time: time, Value: value, CU: 1, SIMD: simd, WaveID: 3}
}

type markerCase struct {
	name     string
	layouts  []wire.FuncmapLayout
	funcmap  []wire.FuncmapEntry
	payloads []wire.FuncmapPayload
	launches []wire.Occupancy // default: code object 7 at 0 on simd 2
	noLaunch bool
	in       []wire.ShaderData
	want     []rec
}

var (
	layout7  = []wire.FuncmapLayout{{CodeObj: 7, Bits: 12, Shift: 4}}
	funcmap7 = []wire.FuncmapEntry{{CodeObj: 7, MarkerID: 3, Kind: "F"}, {CodeObj: 7, MarkerID: 4, Kind: "U"}}
)

func launchAt(co uint64, time uint64, simd uint8) wire.Occupancy {
	return wire.Occupancy{PC: pc(co, 0x100), Time: time, CU: 1, SIMD: simd, WaveID: 3, Start: true}
}

func (c markerCase) run() []rec {
	ix := &wire.Index{FuncmapLayout: c.layouts, Funcmap: c.funcmap, FuncmapPayloads: c.payloads}
	if ix.FuncmapLayout == nil {
		ix.FuncmapLayout = layout7
	}
	if ix.Funcmap == nil {
		ix.Funcmap = funcmap7
	}
	occ := c.launches
	if occ == nil && !c.noLaunch {
		occ = []wire.Occupancy{launchAt(7, 0, 2)}
	}
	tr := &traceData{se: 0, sd: append([]wire.ShaderData(nil), c.in...)}
	correctMarkers(ix, []*traceData{tr}, map[int]*seData{0: {occKept: occ}})
	var out []rec
	for _, r := range tr.sd {
		out = append(out, rec{r.Time, r.Value})
	}
	return out
}

func TestMarkerCorrection(t *testing.T) {
	packed := func(sample, id, flags uint64) uint64 { return sample<<20 | id<<2 | flags }
	cases := []markerCase{
		{name: "delayed header moved", in: []wire.ShaderData{sdAt(2, 0x1010, packed(0x100, 3, 0)), sdAt(2, 0x1080, packed(0x101, 3, 0))},
			want: []rec{{0x1010, 12}, {0x102F, 12}}},
		{name: "equal samples: values only", in: []wire.ShaderData{sdAt(2, 0x1080, 3<<2), sdAt(2, 0x1010, 4<<2)},
			want: []rec{{0x1080, 12}, {0x1010, 16}}},
		{name: "unknown clock phase", in: []wire.ShaderData{sdAt(2, 0x101D0, 12), sdAt(2, 0x10DFC, packed(0x100, 3, 0))},
			want: []rec{{0xFE0B, 12}, {0x10DFC, 12}}},
		{name: "immediate never a header", in: []wire.ShaderData{{Time: 0x1010, Value: 12, CU: 1, SIMD: 2, WaveID: 3, Flags: 1}},
			want: []rec{{0x1010, 12}}},
		{name: "privileged never a header", in: []wire.ShaderData{{Time: 0x1010, Value: packed(0x100, 3, 0), CU: 1, SIMD: 2, WaveID: 3, Flags: 2}},
			want: []rec{{0x1010, packed(0x100, 3, 0)}}},
		{name: "id 0 without exit flag", in: []wire.ShaderData{sdAt(2, 20, 4<<20), sdAt(2, 10, 4<<20)},
			want: []rec{{20, 4 << 20}, {10, 4 << 20}}},
		{name: "bare exit", funcmap: []wire.FuncmapEntry{{CodeObj: 7, MarkerID: 9, Kind: "K"}},
			in: []wire.ShaderData{sdAt(2, 0x1010, packed(0x100, 0, 1))}, want: []rec{{0x1010, 1}}},
		{name: "unknown id left alone", in: []wire.ShaderData{sdAt(2, 0x1010, packed(0x100, 5, 2)), sdAt(2, 0x1080, packed(0x101, 5, 2))},
			want: []rec{{0x1010, packed(0x100, 5, 2)}, {0x1080, packed(0x101, 5, 2)}}},
		{name: "kernel rows are not marker ids", funcmap: []wire.FuncmapEntry{{CodeObj: 7, MarkerID: 3, Kind: "Kernel"}},
			in: []wire.ShaderData{sdAt(2, 0x1010, packed(0x100, 3, 0))}, want: []rec{{0x1010, packed(0x100, 3, 0)}}},
		{name: "payload code object: no timing, payloads untouched",
			payloads: []wire.FuncmapPayload{{CodeObj: 7, MarkerID: 3, Count: 2}},
			in: []wire.ShaderData{sdAt(2, 0x1010, packed(0x100, 4, 0)), sdAt(2, 0x1080, packed(0x101, 3, 0)),
				sdAt(2, 0x1081, 0xDEADBEEF), sdAt(2, 0x1082, 0xCAFEBABE)},
			want: []rec{{0x1010, 16}, {0x1080, 12}, {0x1081, 0xDEADBEEF}, {0x1082, 0xCAFEBABE}}},
		{name: "payload rows of unknown ids are dropped",
			payloads: []wire.FuncmapPayload{{CodeObj: 7, MarkerID: 8, Count: 2}, {CodeObj: 7, MarkerID: 3, Count: 0}},
			in:       []wire.ShaderData{sdAt(2, 0x1010, packed(0x100, 3, 0)), sdAt(2, 0x1080, packed(0x101, 3, 0))},
			want:     []rec{{0x1010, 12}, {0x102F, 12}}},
		{name: "payload block stays adjacent, no re-sort",
			layouts:  []wire.FuncmapLayout{{CodeObj: 8, Bits: 12, Shift: 4}},
			funcmap:  []wire.FuncmapEntry{{CodeObj: 7, MarkerID: 3, Kind: "F"}, {CodeObj: 8, MarkerID: 4, Kind: "F"}},
			payloads: []wire.FuncmapPayload{{CodeObj: 7, MarkerID: 3, Count: 1}},
			launches: []wire.Occupancy{launchAt(7, 0, 2), launchAt(8, 0x1030, 2)},
			in: []wire.ShaderData{sdAt(2, 0x1000, packed(0x100, 3, 0)), sdAt(2, 0x1020, 0xDEADBEEF),
				sdAt(2, 0x1070, packed(0x100, 4, 0)), sdAt(2, 0x1080, packed(0x107, 4, 0))},
			want: []rec{{0x1000, packed(0x100, 3, 0)}, {0x1020, 0xDEADBEEF}, {0x101F, 16}, {0x1080, 16}}},
		{name: "moved records re-sorted without payloads",
			in: []wire.ShaderData{{Time: 0x1050, Value: 99, CU: 1, SIMD: 2, WaveID: 3, Flags: 1},
				sdAt(2, 0x1070, packed(0x100, 4, 0)), sdAt(2, 0x1080, packed(0x107, 4, 0))},
			want: []rec{{0x101F, 16}, {0x1050, 99}, {0x1080, 16}}},
		{name: "no layout: nothing changes", layouts: []wire.FuncmapLayout{{CodeObj: 7, Bits: 0, Shift: 4}, {CodeObj: 7, Bits: 30, Shift: 0}, {CodeObj: 7, Bits: 20, Shift: 13}},
			in:   []wire.ShaderData{sdAt(2, 0x1080, packed(0x101, 3, 0)), sdAt(2, 0x1010, packed(0x100, 3, 0))},
			want: []rec{{0x1080, packed(0x101, 3, 0)}, {0x1010, packed(0x100, 3, 0)}}},
		{name: "later layout row wins", layouts: []wire.FuncmapLayout{{CodeObj: 7, Bits: 11, Shift: 5}, {CodeObj: 7, Bits: 12, Shift: 4}},
			in:   []wire.ShaderData{sdAt(2, 0x1010, packed(0x100, 3, 0)), sdAt(2, 0x1080, packed(0x101, 3, 0))},
			want: []rec{{0x1010, 12}, {0x102F, 12}}},
		{name: "no occupancy: untouched even for code object 0", noLaunch: true,
			layouts: []wire.FuncmapLayout{{CodeObj: 0, Bits: 12, Shift: 4}}, funcmap: []wire.FuncmapEntry{{CodeObj: 0, MarkerID: 3, Kind: "F"}},
			in:   []wire.ShaderData{sdAt(2, 0x1010, packed(0x100, 3, 0)), sdAt(2, 0x1080, packed(0x101, 3, 0))},
			want: []rec{{0x1010, packed(0x100, 3, 0)}, {0x1080, packed(0x101, 3, 0)}}},
		{name: "record before the first launch", launches: []wire.Occupancy{launchAt(7, 0x2000, 2)},
			in:   []wire.ShaderData{sdAt(2, 0x1010, packed(0x100, 3, 0)), sdAt(2, 0x1080, packed(0x101, 3, 0))},
			want: []rec{{0x1010, packed(0x100, 3, 0)}, {0x1080, packed(0x101, 3, 0)}}},
		{name: "per-SIMD domains",
			launches: []wire.Occupancy{launchAt(7, 0, 2), launchAt(7, 0, 3)},
			in: []wire.ShaderData{sdAt(2, 0x1000, packed(0x100, 3, 0)), sdAt(2, 0x1070, packed(0x101, 3, 0)),
				sdAt(3, 0x3000, packed(0x300, 3, 0)), sdAt(3, 0x3070, packed(0x301, 3, 0))},
			want: []rec{{0x1000, 12}, {0x101F, 12}, {0x3000, 12}, {0x301F, 12}}},
		{name: "header after retirement still corrected",
			launches: []wire.Occupancy{launchAt(7, 0, 2), {PC: pc(7, 0x100), Time: 0x1020, CU: 1, SIMD: 2, WaveID: 3}},
			in:       []wire.ShaderData{sdAt(2, 0x1010, packed(0x100, 3, 0)), sdAt(2, 0x1080, packed(0x101, 3, 0))},
			want:     []rec{{0x1010, 12}, {0x102F, 12}}},
		{name: "later launch supersedes a retired slot",
			layouts:  []wire.FuncmapLayout{{CodeObj: 7, Bits: 12, Shift: 4}, {CodeObj: 8, Bits: 11, Shift: 5}},
			funcmap:  []wire.FuncmapEntry{{CodeObj: 7, MarkerID: 3, Kind: "F"}, {CodeObj: 8, MarkerID: 3, Kind: "F"}},
			launches: []wire.Occupancy{launchAt(8, 0x1040, 2), launchAt(7, 0, 2)},
			// 21-bit sample field for code object 8: equal samples, no move.
			in:   []wire.ShaderData{sdAt(2, 0x1050, 0x80<<21|3<<2), sdAt(2, 0x1090, 0x80<<21|3<<2)},
			want: []rec{{0x1050, 12}, {0x1090, 12}}},
		{name: "launch at the record's time owns it",
			layouts:  []wire.FuncmapLayout{{CodeObj: 8, Bits: 12, Shift: 4}},
			funcmap:  []wire.FuncmapEntry{{CodeObj: 8, MarkerID: 3, Kind: "F"}},
			launches: []wire.Occupancy{launchAt(7, 0, 2), launchAt(8, 0x1010, 2)},
			in:       []wire.ShaderData{sdAt(2, 0x1010, packed(0x100, 3, 0)), sdAt(2, 0x1080, packed(0x101, 3, 0))},
			want:     []rec{{0x1010, 12}, {0x102F, 12}}},
		{name: "within the bucket: no move",
			in:   []wire.ShaderData{sdAt(2, 0x1010, packed(0x100, 3, 0)), sdAt(2, 0x102F, packed(0x101, 3, 0))},
			want: []rec{{0x1010, 12}, {0x102F, 12}}},
	}
	for _, c := range cases {
		if got := c.run(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %v\nwant %v", c.name, got, c.want)
		}
	}
}

// Through the Writer: correction is the default when the index has a
// layout, covers traces of the same SE together, and re-sorts; with
// DecodeMarkers off the records pass untouched.
func TestMarkerCorrectionInWriter(t *testing.T) {
	ix := &wire.Index{FuncmapLayout: layout7, Funcmap: funcmap7}
	traces := []trace{
		{se: 0, batches: []wire.Batch{
			{Type: wire.TypeShaderData, ShaderData: []wire.ShaderData{sdAt(2, 0x1080, 0x101<<20|12)}},
		}},
		{se: 0, batches: []wire.Batch{
			{Type: wire.TypeShaderData, ShaderData: []wire.ShaderData{sdAt(2, 0x1010, 0x100<<20|12), sdAt(2, 0x1000, 5)}},
			// the launch arrives in the second trace, after the records
			{Type: wire.TypeOccupancy, Occupancy: []wire.Occupancy{launchAt(7, 0, 2)}},
		}},
	}
	sink := runWriter(t, ix, jsonOnly, traces...)
	recs := func(name string) string {
		return string(mustJSON(get(sink.decode(t, name), "records")))
	}
	if got := recs("shaderdata_0_0.json"); got != `[[4143,12,1,2,3,0]]` {
		t.Errorf("trace 0: %s", got)
	}
	if got := recs("shaderdata_0_1.json"); got != `[[4096,5,1,2,3,0],[4112,12,1,2,3,0]]` {
		t.Errorf("trace 1 (re-sorted): %s", got)
	}
	sink = runWriter(t, ix, Options{JSON: true}, traces...)
	if got := recs("shaderdata_0_0.json"); got != `[[4224,269484044,1,2,3,0]]` {
		t.Errorf("no decode: %s", got)
	}
	if got := recs("shaderdata_0_1.json"); got != `[[4112,268435468,1,2,3,0],[4096,5,1,2,3,0]]` {
		t.Errorf("no decode: %s", got)
	}
}

// The fold is unaffected by deferring shader data.
func TestMarkerDeferKeepsFold(t *testing.T) {
	ix := &wire.Index{FuncmapLayout: layout7, Funcmap: funcmap7}
	f := fold.New(ix)
	w := NewWriter(memSink{}, ix, f, jsonOnly)
	if !w.deferSD {
		t.Fatal("shader data not deferred with a layout")
	}
	if NewWriter(memSink{}, ix, f, Options{JSON: true}).deferSD || NewWriter(memSink{}, ix, f, Options{DecodeMarkers: true}).deferSD {
		t.Fatal("shader data deferred without correction")
	}
}
