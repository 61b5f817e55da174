package codeobj

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

// objdumpInst is one instruction as the test reads llvm-objdump -d
// (with raw encodings) itself, independently of ParseObjdump.
type objdumpInst struct {
	addr   uint64
	text   string
	words  []uint32
	target string // "sym+0xoff" annotation, "" without
}

var (
	instLineRE = regexp.MustCompile(`^\s+(\S.*?)\s*//\s*([0-9A-Fa-f]+):((?:\s+[0-9A-F]{8})+)(?:\s+<([^>]+)>)?$`)
	symLineRE  = regexp.MustCompile(`^([0-9a-f]{16}) <(.+)>:$`)
)

func readObjdump(t *testing.T, tool, path string) ([]objdumpInst, map[string]uint64) {
	out := runTool(t, tool, "-d", path)
	var insts []objdumpInst
	syms := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if m := symLineRE.FindStringSubmatch(line); m != nil {
			a, _ := strconv.ParseUint(m[1], 16, 64)
			syms[m[2]] = a
			continue
		}
		if !strings.Contains(line, "//") {
			continue
		}
		m := instLineRE.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("%s: unexpected objdump line %q", path, line)
		}
		a, _ := strconv.ParseUint(m[2], 16, 64)
		in := objdumpInst{addr: a, text: m[1], target: m[4]}
		for _, w := range strings.Fields(m[3]) {
			v, _ := strconv.ParseUint(w, 16, 32)
			in.words = append(in.words, uint32(v))
		}
		insts = append(insts, in)
	}
	return insts, syms
}

// TestEveryObjdumpInstructionIndexed checks, for every committed object,
// that each instruction llvm-objdump (19, or 22 for gfx950) prints is in
// the index with its address, size and text, that function labels precede
// their first instruction, and that every branch target decodes to the
// address objdump annotates and to an indexed instruction.
func TestEveryObjdumpInstructionIndexed(t *testing.T) {
	for _, path := range committedObjects(t) {
		t.Run(filepath.Base(filepath.Dir(path))+"/"+filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			tool := toolFor(t, "llvm-objdump", path)
			ix := buildOne(t, path, 5)
			want, syms := readObjdump(t, tool, path)
			if len(want) < 100 {
				t.Fatalf("objdump printed only %d instructions", len(want))
			}
			rows := map[uint64]*wire.Row{}
			var order []uint64
			for i := range ix.Rows {
				r := &ix.Rows[i]
				if r.CodeObj != 5 {
					t.Fatalf("row %d: code object %d, want 5", i, r.CodeObj)
				}
				if r.Line != int64(i+1) {
					t.Fatalf("row %d: line %d, want %d", i, r.Line, i+1)
				}
				if r.Kind == wire.RowInstruction {
					rows[r.Vaddr] = r
					order = append(order, r.Vaddr)
				}
			}
			if len(order) != len(want) {
				t.Fatalf("index has %d instructions, objdump %d", len(order), len(want))
			}
			branches := 0
			for i, w := range want {
				if order[i] != w.addr {
					t.Fatalf("instruction %d at %#x, objdump %#x", i, order[i], w.addr)
				}
				r := rows[w.addr]
				size := uint64(len(w.words)) * 4
				if i+1 < len(want) && want[i+1].addr-w.addr != size {
					t.Fatalf("%#x: encoding %d bytes but next instruction %d bytes on", w.addr, size, want[i+1].addr-w.addr)
				}
				if r.Size != size {
					t.Errorf("%#x %q: size %d, want %d", w.addr, w.text, r.Size, size)
				}
				wantText := w.text
				if isSOPPBranch(w.text) {
					branches++
					imm := w.words[0] & 0xffff
					fields := strings.Fields(w.text)
					if last := fields[len(fields)-1]; !isDecimal(last) {
						wantText = strings.Join(fields[:len(fields)-1], " ") + " " + strconv.Itoa(int(imm))
					}
					target := uint64(int64(w.addr) + 4 + 4*int64(int16(imm)))
					if _, ok := rows[target]; !ok {
						t.Errorf("%#x %q: branch target %#x is not an indexed instruction", w.addr, w.text, target)
					}
					if w.target != "" {
						sym, off, _ := strings.Cut(w.target, "+")
						o, _ := strconv.ParseUint(strings.TrimPrefix(off, "0x"), 16, 64)
						if base, ok := syms[sym]; ok && base+o != target {
							t.Errorf("%#x %q: branch decodes to %#x, objdump says %s = %#x", w.addr, w.text, target, w.target, base+o)
						}
					}
					// The normalised operand is the raw immediate.
					rf := strings.Fields(r.Text)
					if got := rf[len(rf)-1]; got != strconv.Itoa(int(imm)) {
						t.Errorf("%#x: normalised operand %s, want %d", w.addr, got, imm)
					}
				}
				if r.Text != wantText {
					t.Errorf("%#x: text %q, want %q", w.addr, r.Text, wantText)
				}
			}
			if strings.Contains(path, "kernels_") && branches < 10 {
				t.Errorf("only %d branches in %s", branches, path)
			}
			// Function labels: one row right before the symbol's address.
			for i := range ix.Rows {
				r := &ix.Rows[i]
				if r.Kind != wire.RowFunction {
					continue
				}
				if a, ok := syms[r.Source]; !ok || a != r.Vaddr {
					t.Errorf("function row %q at %#x: objdump has %#x", r.Source, r.Vaddr, a)
				}
				if r.Text != LabelText(r.Source) || i+1 >= len(ix.Rows) || ix.Rows[i+1].Vaddr != r.Vaddr {
					t.Errorf("function row %d %+v not followed by its first instruction", i, *r)
				}
			}
			if len(ix.Kernels) == 0 || len(ix.Kernels) != len(syms) {
				t.Errorf("kernels %v, objdump symbols %v", ix.Kernels, syms)
			}
		})
	}
}

func isSOPPBranch(text string) bool {
	op, _, _ := strings.Cut(text, " ")
	return op == "s_branch" || strings.HasPrefix(op, "s_cbranch_")
}

// TestTargetsFromFlags checks the target of each object against its
// directory name.
func TestTargetsFromFlags(t *testing.T) {
	for _, path := range committedObjects(t) {
		obj, err := ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Base(filepath.Dir(path)); obj.Target != want {
			t.Errorf("%s: target %q, want %q", path, obj.Target, want)
		}
		if len(obj.Ranges) == 0 {
			t.Errorf("%s: no load ranges", path)
		}
		if strings.Contains(path, "nodebug") != (obj.Lines.Len() == 0) {
			t.Errorf("%s: %d line ranges", path, obj.Lines.Len())
		}
	}
}

func ExampleTargetName() {
	fmt.Println(TargetName(0x04c), TargetName(0x34e), TargetName(0x03f), TargetName(0x041), TargetName(0x0ff))
	// Output: gfx942 gfx1201 gfx90a gfx1100
}
