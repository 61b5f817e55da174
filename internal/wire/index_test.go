package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/attkit/attkit/internal/testutil"
	"github.com/vmihailenco/msgpack/v5"
)

// workedExample is the two-label kernel of python-layer §3.7.
func workedExample() *Index {
	row := func(kind RowKind, text, src string, line int64, addr uint64) Row {
		return Row{Kind: kind, Text: text, Source: src, Line: line, CodeObj: 1, Vaddr: addr}
	}
	return &Index{
		Header:  IndexHeader{Producer: "test"},
		Objects: []CodeObject{{ID: 1, Path: "/k/mykernel.hsaco", Target: "gfx942", Ranges: []LoadRange{{0x1300, 0x1324}}}},
		Rows: []Row{
			row(RowFunction, "; _mykernel", "mykernel", 1, 4864),
			row(0, "s_load_dwordx2 s[0:1], s[4:5], 0x0", "", 2, 4864),
			row(0, "s_cmp_eq_u32 s2, 0", "", 3, 4872),
			row(0, "s_cbranch_scc1 4", "", 4, 4876),
			row(0, "v_mov_b32_e32 v0, 1", "", 5, 4880),
			row(RowLabel, "; _label_loop", "", 6, 4884),
			row(0, "s_sub_u32 s2, s2, 1", "", 7, 4884),
			row(0, "s_cmp_lg_u32 s2, 0", "", 8, 4888),
			row(0, "s_cbranch_scc1 65533", "", 9, 4892),
			row(RowLabel, "; _label_end", "", 10, 4896),
			row(0, "s_endpgm", "", 11, 4896),
		},
		Kernels: []Kernel{{Address: 4864, CodeObj: 1, Name: "mykernel", Demangled: "mykernel"}},
		Doc:     DocMeta{Hsaco: []string{"/k/mykernel.hsaco"}},
	}
}

func TestCodeJSONWorkedExample(t *testing.T) {
	ix := workedExample()
	got := ix.CodeJSON()
	testutil.Golden(t, "worked-example.code.json", got)
	if bytes.HasSuffix(got, []byte("\n")) {
		t.Error("code.json ends with a newline")
	}
	back, err := ParseCodeJSON(got)
	if err != nil {
		t.Fatal(err)
	}
	if again := back.CodeJSON(); !bytes.Equal(again, got) {
		t.Errorf("code.json does not round-trip:\n%s", again)
	}
	if len(back.Rows) != 11 || back.Rows[0].Kind != RowFunction || back.Rows[5].Kind != RowLabel ||
		back.Rows[8].Text != "s_cbranch_scc1 65533" || back.Rows[8].Vaddr != 4892 {
		t.Errorf("parsed rows wrong: %+v", back.Rows)
	}
}

func TestIndexStreamRoundTrip(t *testing.T) {
	ix := workedExample()
	ix.Rows[1].Size = 8
	ix.Rows[2].Extra = []byte(`[3,4,[0,1,2,3,4,5,6,7,8,9]]`)
	ix.Rows[3].SourceNull = true
	ix.Rows[2].Source = "h.h:3 -> k.cl:9"
	ix.Rows[2].Inline = []InlineFrame{{"mix", "h.h", 3}, {"mykernel", "k.cl", 9}}
	ix.Rows[4].Inline = []InlineFrame{{"", "", 0}}
	ix.Rows = append(ix.Rows, Row{Raw: []byte(`["odd",1]`)})
	ix.Funcmap = []FuncmapEntry{{CodeObj: 1, MarkerID: 7, Kind: "F", Name: "scope", Source: "s.cpp:1"}}
	ix.FuncmapLayout = []FuncmapLayout{{CodeObj: 1, Bits: 12, Shift: 4}}
	ix.FuncmapPayloads = []FuncmapPayload{{CodeObj: 1, MarkerID: 8, Count: 1}}
	ix.Doc.Keys = []string{"code", "header", "zz"}
	ix.Doc.Unknown = map[string]json.RawMessage{"zz": json.RawMessage(`{"b":1,"a":[true,null]}`)}
	var buf bytes.Buffer
	if err := WriteIndex(&buf, ix); err != nil {
		t.Fatal(err)
	}
	back, err := ReadIndex(bytes.NewReader(buf.Bytes()), "x")
	if err != nil {
		t.Fatal(err)
	}
	ix.Header.Format, ix.Header.Major, ix.Header.Minor = IndexFormat, IndexMajor, IndexMinor
	if back.Header.Minor != 1 {
		t.Errorf("minor %d, want 1 (the inline entries)", back.Header.Minor)
	}
	if !reflect.DeepEqual(back, ix) {
		t.Errorf("round trip differs:\n got %+v\nwant %+v", back, ix)
	}
	// code.json cannot carry the chains: it is the same with and without.
	plain := *ix
	plain.Rows = slices.Clone(ix.Rows)
	for i := range plain.Rows {
		plain.Rows[i].Inline = nil
	}
	if !bytes.Equal(plain.CodeJSON(), ix.CodeJSON()) {
		t.Error("the inline chains changed code.json")
	}
	// code.json of both agree, and the code.json keeps the unknown key.
	if !bytes.Equal(back.CodeJSON(), ix.CodeJSON()) {
		t.Error("code.json differs after an index-stream round trip")
	}
	if !bytes.Contains(ix.CodeJSON(), []byte("\"zz\": {\n    \"b\": 1,")) {
		t.Errorf("unknown key not kept in order:\n%s", ix.CodeJSON())
	}
}

func TestReadIndexErrors(t *testing.T) {
	var buf bytes.Buffer
	WriteIndex(&buf, workedExample())
	full := buf.Bytes()
	for _, tc := range []struct {
		name string
		in   []byte
		code int
	}{
		{"empty", nil, 1},
		{"garbage", []byte("\x01\x02garbage"), 3},
		{"records stream", recordsStreamBytes(t), 3},
		{"truncated", full[:len(full)-3], 1},
		{"bad json", []byte(`{"code": [`), 1},
		{"json without code", []byte(`{"x": 1}`), 1},
		{"inline before any row", indexWith(t, nil, "inline", []any{"f", "a.c", 1}), 1},
		{"inline twice", indexWith(t, []Row{{Text: "s_nop 0"}}, "inline", []any{"f", "a.c", 1}, "inline", []any{"f", "a.c", 1}), 1},
		{"inline frames of 2", indexWith(t, []Row{{Text: "s_nop 0"}}, "inline", []any{"f", "a.c"}), 1},
		{"inline empty", indexWith(t, []Row{{Text: "s_nop 0"}}, "inline", []any{}), 1},
		{"inline line not a number", indexWith(t, []Row{{Text: "s_nop 0"}}, "inline", []any{"f", "a.c", "x"}), 1},
	} {
		_, err := ReadIndex(bytes.NewReader(tc.in), tc.name)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if c := codeOf(err); c != tc.code {
			t.Errorf("%s: exit code %d, want %d (%v)", tc.name, c, tc.code, err)
		}
	}
}

// indexWith returns an index stream of rows followed by tagged entries,
// each a tag and its one field.
func indexWith(t *testing.T, rows []Row, tagged ...any) []byte {
	var buf bytes.Buffer
	if err := WriteIndex(&buf, &Index{Rows: rows}); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	for i := 0; i+1 < len(tagged); i += 2 {
		p, err := msgpack.Marshal([]any{tagged[i], tagged[i+1]})
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, p...)
	}
	return b
}

// TestIndexSkipsUnknownTags: an entry of a later minor version, with any
// number of fields, is skipped, so the "inline" entries of minor 1 are
// skipped by a reader of minor 0 in the same way.
func TestIndexSkipsUnknownTags(t *testing.T) {
	in := indexWith(t, []Row{{Text: "s_nop 0", Source: "a.c:1"}}, "later", []any{1, "x", []any{2}})
	ix, err := ReadIndex(bytes.NewReader(in), "x")
	if err != nil || len(ix.Rows) != 1 || ix.Rows[0].Source != "a.c:1" {
		t.Fatalf("%v %+v", err, ix)
	}
}

func codeOf(err error) int {
	if e, ok := err.(interface{ ExitCode() int }); ok {
		return e.ExitCode()
	}
	return 1
}

func recordsStreamBytes(t *testing.T) []byte {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.WriteHeader(&Header{Producer: "t"})
	w.Flush()
	return buf.Bytes()
}

func TestCodeJSONSkipsMalformedFuncmapRows(t *testing.T) {
	in := `{"code": [], "sqtt_funcmap": [[10, 7, "F", "scope", "s.cpp:1", 0], "junk", [1]],
	"sqtt_funcmap_layout": [[10, 12, 4], [-1, 2, 3]], "sqtt_funcmap_payloads": [[10, 8, 1], [10, "x", 1]]}`
	ix, err := ParseCodeJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(ix.Funcmap) != 1 || ix.Funcmap[0].Name != "scope" || len(ix.FuncmapLayout) != 1 ||
		ix.FuncmapLayout[0].Bits != 12 || len(ix.FuncmapPayloads) != 1 {
		t.Errorf("tables: %+v %+v %+v", ix.Funcmap, ix.FuncmapLayout, ix.FuncmapPayloads)
	}
	if _, err := ParseCodeJSON([]byte(`{"code": [], "sqtt_funcmap": 5}`)); err == nil {
		t.Error("a funcmap table that is not an array was accepted")
	}
}
