package codeobj

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuzzObject caps fuzzed ELF inputs: the small committed objects fit,
// and larger inputs only slow the fuzzer down.
const maxFuzzObject = 64 << 10

// FuzzParse fuzzes the ELF, symbol, DWARF and funcmap reading of a code
// object, seeded from the committed objects.
func FuzzParse(f *testing.F) {
	objs, _ := filepath.Glob(filepath.Join(kernelsDir, "*", "*.hsaco"))
	for _, p := range objs {
		b, err := os.ReadFile(p)
		if err != nil || len(b) > maxFuzzObject {
			continue
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add([]byte("\x7fELF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxFuzzObject {
			return
		}
		obj, err := Parse(data, "fuzz")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, r := range obj.Lines.ranges {
			if r.end <= r.begin {
				t.Fatalf("empty range %+v", r)
			}
			obj.Lines.Lookup(r.begin)
		}
		for a := range obj.Labels.Func {
			if obj.Labels.FuncMin[obj.Labels.Func[a]] > a {
				t.Fatalf("FuncMin above a label address")
			}
		}
		if obj.Funcmap != nil {
			ParseFuncmap(obj.Funcmap)
		}
	})
}

// FuzzLineHeader fuzzes the hand-written line-program header reader,
// seeded with the .debug_line sections of the committed objects.
func FuzzLineHeader(f *testing.F) {
	objs, _ := filepath.Glob(filepath.Join(kernelsDir, "gfx*", "kernels_*.hsaco"))
	for _, p := range objs {
		ef, err := elf.Open(p)
		if err != nil {
			f.Fatal(err)
		}
		line, _ := sectionData(ef, ".debug_line")
		lineStr, _ := sectionData(ef, ".debug_line_str")
		f.Add(line, lineStr)
		ef.Close()
	}
	f.Fuzz(func(t *testing.T, line, lineStr []byte) {
		s := &rawSections{line: line, lineStr: lineStr, order: binary.LittleEndian}
		h, err := s.header(0)
		if err != nil {
			return
		}
		for i := -1; i <= len(h.files); i++ {
			h.resolve(i)
		}
	})
}

// FuzzParseObjdump fuzzes the objdump output parser and the branch
// normalisation.
func FuzzParseObjdump(f *testing.F) {
	f.Add([]byte(objdumpSample))
	if b, err := os.ReadFile("testdata/objdump-gfx1201.txt"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		insts, err := ParseObjdump(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, in := range insts {
			if in.Size == 0 {
				t.Fatalf("zero size: %+v", in)
			}
			if again := NormalizeBranch(in.Text, "BF820001"); strings.Contains(in.Text, "branch") && in.Text != in.Raw && again != in.Text {
				t.Fatalf("normalisation not idempotent: %q -> %q", in.Text, again)
			}
		}
	})
}

// FuzzParseFuncmap fuzzes the .sqtt_funcmap parser.
func FuzzParseFuncmap(f *testing.F) {
	f.Add([]byte("M:shader_clock_bits=12;shader_clock_shift=4\nF:7:scope@source.cpp:1\nU:8:user\nR:8:extra_payload_count=1\n"))
	f.Add([]byte("K:kern@k.cl:3\x00P:2:p@a@b\r\nW:64\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m := ParseFuncmap(data)
		if m.Bits > 29 || m.Bits == 0 && m.Shift != 0 || m.Bits != 0 && m.Bits+m.Shift > 32 {
			t.Fatalf("layout accepted: bits %d shift %d", m.Bits, m.Shift)
		}
		for _, e := range m.Entries {
			if e.Name == "" || !strings.ContainsRune("KFUP", rune(e.Kind)) || e.Kind == 'K' && e.MarkerID != 0 {
				t.Fatalf("bad entry %+v", e)
			}
		}
	})
}
