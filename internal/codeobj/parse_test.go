package codeobj

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

func TestNormalizeBranch(t *testing.T) {
	for _, c := range []struct{ inst, words, want string }{
		// The table of python-layer §3.3.
		{"s_cbranch_scc1 label_end", "BF850004", "s_cbranch_scc1 4"},
		{"s_cbranch_scc1 label_loop", "BF85FFFD", "s_cbranch_scc1 65533"},
		{"s_branch label_0012", "BF82000B", "s_branch 11"},
		{"s_cbranch_execz 17", "BF880011 <scale+0x64>", "s_cbranch_execz 17"},
		{"s_endpgm", "BF810000", "s_endpgm"},
		// Edge cases of the rule.
		{"s_cbranch_scc1 -3", "BF85FFFD", "s_cbranch_scc1 -3"},
		{"s_branch", "BF82000B", "s_branch"},
		{"s_setpc_b64_branch s[0:1]", "BE802000", "s_setpc_b64_branch 8192"}, // the quirk: any "branch"
		{"s_branch x", "", "s_branch x"},
		{"s_branch x", "BF8", "s_branch x"},
		{"s_branch x", "BF82GGGG", "s_branch x"},
		{"s_branch  \tlabel", "BF820001 <k+0x4>", "s_branch 1"},
		{"s_cbranch_vccz label_x", "bfa3ffff", "s_cbranch_vccz 65535"},
	} {
		if got := NormalizeBranch(c.inst, c.words); got != c.want {
			t.Errorf("NormalizeBranch(%q, %q) = %q, want %q", c.inst, c.words, got, c.want)
		}
	}
}

// The example output of python-layer §3.2.
const objdumpSample = `
/tmp/k.hsaco:	file format elf64-amdgpu

Disassembly of section .text:

0000000000001300 <mykernel>:
	s_load_dwordx2 s[0:1], s[4:5], 0x0                         // 000000001300: C0060002 00000000
	s_cmp_eq_u32 s2, 0                                         // 000000001308: BF068002
	s_cbranch_scc1 label_end                                   // 00000000130C: BF850004
  ; a comment line // 000000001310: 00000000
0000000000001314 <label_loop>:
	s_cbranch_scc1 label_loop                                  // 00000000131C: BF85FFFD
	s_delay_alu instid0(VALU_DEP_1) | instskip(NEXT) | instid1(VALU_DEP_1)// 000000001320: BF870091
		...
	s_cbranch_execz 17                                         // 00000000161C: BF880011 <scale+0x64>
	not an instruction // zz: 00
Disassembly of section .text.other:
	s_endpgm                                                   // 000000002000: BF810000
`

func TestParseObjdump(t *testing.T) {
	got, err := ParseObjdump(strings.NewReader(objdumpSample))
	if err != nil {
		t.Fatal(err)
	}
	want := []Inst{
		{Addr: 0x1300, Text: "s_load_dwordx2 s[0:1], s[4:5], 0x0", Raw: "s_load_dwordx2 s[0:1], s[4:5], 0x0", Words: 2, Size: 8},
		{Addr: 0x1308, Text: "s_cmp_eq_u32 s2, 0", Raw: "s_cmp_eq_u32 s2, 0", Words: 1, Size: 4},
		{Addr: 0x130c, Text: "s_cbranch_scc1 4", Raw: "s_cbranch_scc1 label_end", Words: 1, Size: 4},
		{Addr: 0x131c, Text: "s_cbranch_scc1 65533", Raw: "s_cbranch_scc1 label_loop", Words: 1, Size: 4},
		{Addr: 0x1320, Text: "s_delay_alu instid0(VALU_DEP_1) | instskip(NEXT) | instid1(VALU_DEP_1)",
			Raw: "s_delay_alu instid0(VALU_DEP_1) | instskip(NEXT) | instid1(VALU_DEP_1)", Words: 1, Size: 4},
		{Addr: 0x161c, Text: "s_cbranch_execz 17", Raw: "s_cbranch_execz 17", Words: 1, Size: 4},
		{Addr: 0x2000, Text: "s_endpgm", Raw: "s_endpgm", Words: 1, Section: 1, Size: 4},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseObjdump:\n got %+v\nwant %+v", got, want)
	}
}

func TestSetSizesWithoutWords(t *testing.T) {
	// --no-show-raw-insn output of an objdump that prints no words: the
	// distance to the next instruction, 4 for the last.
	in := []Inst{{Addr: 0x100}, {Addr: 0x108}, {Addr: 0x10c}, {Addr: 0x200, Section: 1}}
	SetSizes(in)
	for i, want := range []uint64{8, 4, 4, 4} {
		if in[i].Size != want {
			t.Errorf("inst %d: size %d, want %d", i, in[i].Size, want)
		}
	}
}

func TestLabelText(t *testing.T) {
	for in, want := range map[string]string{"_Z5scalePf": "; _Z5scalePf", "mykernel": "; _mykernel", "label_loop": "; _label_loop"} {
		if got := LabelText(in); got != want {
			t.Errorf("LabelText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseFuncmap(t *testing.T) {
	// The test example of python-layer §3.6.
	m := ParseFuncmap([]byte("M:shader_clock_bits=12;shader_clock_shift=4\nF:7:scope@source.cpp:1\nU:8:user\nR:8:extra_payload_count=1\n"))
	want := &Funcmap{Bits: 12, Shift: 4, Entries: []FuncmapEntry{
		{Kind: 'F', MarkerID: 7, Name: "scope", Source: "source.cpp:1"},
		{Kind: 'U', MarkerID: 8, Name: "user"},
	}, Payloads: map[uint32]uint32{8: 1}}
	if !reflect.DeepEqual(m, want) || !m.Packed() {
		t.Errorf("ParseFuncmap:\n got %+v\nwant %+v", m, want)
	}
	for _, c := range []struct {
		text        string
		bits, shift uint32
		entries     int
	}{
		{"M:shader_clock_bits=0\n", 0, 0, 0},
		{"M:shader_clock_bits=0;shader_clock_shift=9\n", 0, 0, 0},
		{"M:shader_clock_bits=12\n", 0, 0, 0},                       // shift missing
		{"M:shader_clock_bits=30;shader_clock_shift=0\n", 0, 0, 0},  // bits > 29
		{"M:shader_clock_bits=20;shader_clock_shift=13\n", 0, 0, 0}, // bits > 32-shift
		{"M:shader_clock_bits=x;shader_clock_shift=1\n", 0, 0, 0},   // not a u32
		{"M:shader_clock_bits=4;shader_clock_shift=2\x00M:shader_clock_bits=5;shader_clock_shift=3\r\n", 5, 3, 0},
		{"M:shader_clock_bits=4;shader_clock_shift=2\nM:shader_clock_bits=99;shader_clock_shift=3\n", 4, 2, 0},
		{"K:kern@k.cl:3\nK:\nF:x:bad\nF:4294967296:big\nF:1:\nP:2:p@a@b\nW:64\n\xff:\n", 0, 0, 2},
	} {
		m := ParseFuncmap([]byte(c.text))
		if m.Bits != c.bits || m.Shift != c.shift || len(m.Entries) != c.entries {
			t.Errorf("ParseFuncmap(%q) = bits %d shift %d entries %+v", c.text, m.Bits, m.Shift, m.Entries)
		}
	}
	m = ParseFuncmap([]byte("P:2:p@a@b\n"))
	if e := m.Entries[0]; e.Name != "p" || e.Source != "a@b" {
		t.Errorf("name/source split at the first @: %+v", e)
	}
}

func TestInferIDs(t *testing.T) {
	for path, want := range map[string]int64{
		"1234_agent_code_object_id_7.out": 7,
		"codeobj_12.hsaco":                12,
		"kernel.hsaco":                    -1,
		"/d/CODE_OBJECT_ID_3_x.co":        3,
		"x_code_object_id_5":              5,
		"mycode_object_id_5.o":            5, // no "_" before: falls to rule 2
		"a_code_object_id_5x_9.hsaco":     9,
		"k_ 8 .hsaco":                     8,
		"k_+8.hsaco":                      8,
		"k_-0.hsaco":                      0,
		"k_8.tar.gz":                      -1, // stem "k_8.tar"
	} {
		id, ok, err := InferID(path)
		if err != nil {
			t.Errorf("InferID(%q): %v", path, err)
			continue
		}
		if got := map[bool]int64{true: int64(id), false: -1}[ok]; got != want {
			t.Errorf("InferID(%q) = %d, want %d", path, got, want)
		}
	}
	if _, _, err := InferID("k_-3.hsaco"); err == nil {
		t.Error("negative id accepted")
	}
	in, err := InferIDs([]string{"a_code_object_id_1.hsaco", "kernel.hsaco"})
	if err != nil || in[1].ID != 0 || in[0].ID != 1 {
		t.Errorf("one untagged file: %v %v", in, err)
	}
	for _, c := range []struct {
		paths []string
		msg   string
	}{
		{[]string{"a.hsaco", "b.hsaco"}, "Cannot infer code object IDs for multiple unnamed inputs: a.hsaco, b.hsaco"},
		{[]string{"x_0.hsaco", "b.hsaco"}, "Cannot assign code object id 0 to b.hsaco: another input already uses id 0."},
	} {
		if _, err := InferIDs(c.paths); err == nil || err.Error() != c.msg {
			t.Errorf("InferIDs(%q) error %v, want %q", c.paths, err, c.msg)
		}
	}
	err = CheckIDs([]Input{{ID: 1, Path: "a"}, {ID: 2, Path: "b"}, {ID: 1, Path: "c"}})
	if err == nil || err.Error() != "Code object id 1 is used by both a and c." {
		t.Errorf("CheckIDs: %v", err)
	}
	if err := CheckIDs(nil); err == nil || err.Error() != "No code objects were provided." {
		t.Errorf("CheckIDs(nil): %v", err)
	}
}

// TestFuncmapObject indexes the committed object that carries a
// .sqtt_funcmap section (testdata/kernels/src/funcmap.txt).
func TestFuncmapObject(t *testing.T) {
	ix := buildOne(t, kernelsDir+"/gfx942/funcmap_code_object_id_5.hsaco", 5)
	wantMap := []wire.FuncmapEntry{
		{CodeObj: 5, MarkerID: 0, Kind: "K", Name: "loop_sum", Source: "testdata/kernels/src/kernels.cl:16", Vaddr: 0x1e00},
		{CodeObj: 5, MarkerID: 7, Kind: "F", Name: "branches", Source: "testdata/kernels/src/kernels.cl:32", Vaddr: 0x1f00},
		{CodeObj: 5, MarkerID: 8, Kind: "U", Name: "user_scope"},
		{CodeObj: 5, MarkerID: 9, Kind: "P", Name: "point", Source: "kernels.cl:60"},
		{CodeObj: 5, MarkerID: 10, Kind: "F", Name: "not_a_symbol"},
	}
	if !reflect.DeepEqual(ix.Funcmap, wantMap) {
		t.Errorf("funcmap:\n got %+v\nwant %+v", ix.Funcmap, wantMap)
	}
	if want := []wire.FuncmapLayout{{CodeObj: 5, Bits: 12, Shift: 4}}; !reflect.DeepEqual(ix.FuncmapLayout, want) {
		t.Errorf("layout %+v", ix.FuncmapLayout)
	}
	if want := []wire.FuncmapPayload{{CodeObj: 5, MarkerID: 8, Count: 2}}; !reflect.DeepEqual(ix.FuncmapPayloads, want) {
		t.Errorf("payloads %+v", ix.FuncmapPayloads)
	}
	// The same kernels without the section: no tables.
	plain := buildOne(t, kernelsDir+"/gfx942/kernels_code_object_id_1.hsaco", 5)
	if plain.Funcmap != nil || plain.FuncmapLayout != nil || len(plain.Rows) != len(ix.Rows) {
		t.Errorf("object without funcmap: %d entries, %d rows vs %d", len(plain.Funcmap), len(plain.Rows), len(ix.Rows))
	}
}

// TestPlacedFuncmap: a placed object's funcmap entries name their functions
// at load address + vaddr (entries without a function stay 0); placed
// inputs may share an id, a placed and an unplaced one may not.
func TestPlacedFuncmap(t *testing.T) {
	path := kernelsDir + "/gfx942/funcmap_code_object_id_5.hsaco"
	const load = 0x10000000
	od := &Objdump{Explicit: toolFor(t, "llvm-objdump", path)}
	in, err := Normalize([]Input{{ID: 0, Path: path, Load: load, Placed: true}})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := Build(context.Background(), in, Options{Objdump: od})
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for _, e := range ix.Funcmap {
		got = append(got, e.Vaddr)
	}
	if want := []uint64{load + 0x1e00, load + 0x1f00, 0, 0, 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("funcmap addresses %#x, want %#x", got, want)
	}
	if err := CheckIDs([]Input{{ID: 0, Path: "a", Placed: true}, {ID: 0, Path: "b", Load: 1 << 32, Placed: true}}); err != nil {
		t.Errorf("two placed inputs with id 0: %v", err)
	}
	err = CheckIDs([]Input{{ID: 0, Path: "a", Placed: true}, {ID: 0, Path: "b"}})
	if err == nil || err.Error() != "Code object id 0 is used by both a and b." {
		t.Errorf("placed and unplaced with one id: %v", err)
	}
}
