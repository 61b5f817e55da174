package main

import (
	"bufio"
	"debug/elf"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

// need22 returns the path of llvm-objdump-22 and fails the test (not a
// skip: CI must index gfx950) when it is missing.
func need22(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("llvm-objdump-22")
	if err != nil {
		t.Fatalf("llvm-objdump-22 not found on PATH: LLVM 19 cannot disassemble gfx950 (MI350) code objects; " +
			"run scripts/install-deps (it installs Debian's llvm-22)")
	}
	return p
}

// TestIndexGfx950 indexes the gfx950 (MI350) test kernels the way a fresh
// machine does: no --objdump, no $LLVM_OBJDUMP, so co-index searches, LLVM
// 19 fails on the target and llvm-objdump-22 disassembles it. It checks the
// index against the kernel sources and the ELF bytes: the gfx950-only
// instructions are there with their source lines from DWARF, and every PC
// holds the encoding of the instruction named there.
func TestIndexGfx950(t *testing.T) {
	v22 := need22(t)
	t.Setenv("LLVM_OBJDUMP", "")
	t.Setenv("ROCM_HOME", "")
	t.Setenv("ROCM_PATH", "")
	gfx, kern := kernels+"/gfx950/gfx950_code_object_id_7.hsaco", kernels+"/gfx950/kernels_code_object_id_1.hsaco"
	var stdout, stderr strings.Builder
	if code := run([]string{gfx, kern}, strings.NewReader(""), &stdout, &stderr); code != 0 || stderr.Len() != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	ix, err := wire.ReadIndex(strings.NewReader(stdout.String()), "stdout")
	if err != nil {
		t.Fatal(err)
	}

	// The tool: llvm-objdump-22, unless a ROCm install or LLVM 20/21 comes
	// first in the search; never 19.
	other := ""
	for _, p := range []string{"/opt/rocm/llvm/bin/llvm-objdump", "/opt/rocm/bin/llvm-objdump"} {
		if _, err := os.Stat(p); err == nil {
			other = p
		}
	}
	for _, n := range []string{"llvm-objdump-18", "llvm-objdump-17", "llvm-objdump-20", "llvm-objdump-21"} {
		if p, err := exec.LookPath(n); err == nil {
			other = p
		}
	}
	if strings.Contains(ix.Header.Objdump, "llvm-objdump-19") || strings.Contains(ix.Header.Objdump, ";") {
		t.Errorf("header names %q: one tool that knows gfx950 expected", ix.Header.Objdump)
	}
	if other == "" && !(strings.HasPrefix(ix.Header.Objdump, v22+" (") && strings.Contains(ix.Header.Objdump, "LLVM version 22")) {
		t.Errorf("header names %q, want %s (…LLVM version 22…)", ix.Header.Objdump, v22)
	} else if other != "" {
		t.Logf("%s is installed and may come before llvm-objdump-22: header %q", other, ix.Header.Objdump)
	}

	if len(ix.Objects) != 2 || ix.Objects[0].ID != 7 || ix.Objects[1].ID != 1 {
		t.Fatalf("objects %+v, want ids 7 and 1 from the file names", ix.Objects)
	}
	for _, o := range ix.Objects {
		if o.Target != "gfx950" || len(o.Ranges) == 0 {
			t.Errorf("object %d: target %q, ranges %v", o.ID, o.Target, o.Ranges)
		}
	}
	text := map[uint64]func(vaddr uint64) uint32{7: elfWords(t, gfx), 1: elfWords(t, kern)}

	// Kernels, each at its function label.
	labels := map[[2]uint64]string{}
	for _, r := range ix.Rows {
		if r.Kind == wire.RowFunction {
			labels[[2]uint64{r.CodeObj, r.Vaddr}] = r.Source
		}
	}
	want := map[string]uint64{"prng_chain": 7, "bitop3_tables": 7, "loop_sum": 1, "branches": 1, "lds_reduce": 1, "nested": 1}
	for _, k := range ix.Kernels {
		if id, ok := want[k.Name]; ok && id == k.CodeObj {
			delete(want, k.Name)
			if got := labels[[2]uint64{k.CodeObj, k.Address}]; got != k.Name {
				t.Errorf("kernel %s at %#x: function label there is %q", k.Name, k.Address, got)
			}
		}
	}
	if len(want) != 0 {
		t.Errorf("kernels missing from the index: %v", want)
	}

	// PCs and sizes: within a function the instructions follow each other
	// without gaps, each 4 or 8 bytes (gfx9 encodings), inside a load
	// range, and the ELF holds a valid encoding class at each PC.
	fn := ""
	var prev *wire.Row
	counts := map[uint64]int{}
	for i := range ix.Rows {
		r := &ix.Rows[i]
		if r.Kind == wire.RowFunction {
			fn, prev = r.Source, nil
			if i+1 >= len(ix.Rows) || ix.Rows[i+1].Vaddr != r.Vaddr {
				t.Errorf("function %s at %#x: not followed by its first instruction", fn, r.Vaddr)
			}
			continue
		}
		if r.Kind != wire.RowInstruction {
			continue
		}
		counts[r.CodeObj]++
		if r.Size != 4 && r.Size != 8 {
			t.Errorf("%s %#x %q: size %d", fn, r.Vaddr, r.Text, r.Size)
		}
		if prev != nil && prev.CodeObj == r.CodeObj && prev.Vaddr+prev.Size != r.Vaddr {
			t.Errorf("%s: %#x + %d != next PC %#x", fn, prev.Vaddr, prev.Size, r.Vaddr)
		}
		if !inRanges(ix.Objects, r.CodeObj, r.Vaddr, r.Size) {
			t.Errorf("%s %#x: outside the load ranges of object %d", fn, r.Vaddr, r.CodeObj)
		}
		prev = r
	}
	if counts[7] < 100 || counts[1] < 300 {
		t.Errorf("instructions per object: %v", counts)
	}

	// The gfx950-only instructions, at the source lines that ask for them.
	src := "testdata/kernels/src/gfx950.cl"
	lines := sourceLines(t, filepath.Join(repoRoot(t), src))
	type want950 struct {
		fn, op, table, line string
		size                uint64
		word                func(uint32) bool
	}
	// v_prng_b32 is VOP1 opcode 0x58 (bits 31:25 = 0x3f); v_bitop3_b32 is
	// VOP3 opcode 0x234 (bits 31:26 = 0x34, 25:16 = opcode).
	prng := func(w uint32) bool { return w>>25 == 0x3f && (w>>9)&0xff == 0x58 }
	bitop3 := func(w uint32) bool { return w>>26 == 0x34 && (w>>16)&0x3ff == 0x234 }
	checks := []want950{
		{"prng_chain", "v_prng_b32_e32", "", lineOf(t, lines, "__builtin_amdgcn_prng_b32"), 4, prng},
		{"prng_chain", "v_bitop3_b32", "bitop3:0x96", lineOf(t, lines, "(uint)r, 0x96"), 8, bitop3},
	}
	for _, tbl := range []string{"0xe8", "0xca", "0x96", "0x7f"} {
		checks = append(checks, want950{"bitop3_tables", "v_bitop3_b32", "bitop3:" + tbl, lineOf(t, lines, "z, "+tbl+")"), 8, bitop3})
	}
	for _, c := range checks {
		found := 0
		fn = ""
		for _, r := range ix.Rows {
			if r.Kind == wire.RowFunction {
				fn = r.Source
			}
			if r.Kind != wire.RowInstruction || r.CodeObj != 7 || fn != c.fn || !strings.HasPrefix(r.Text, c.op+" ") ||
				!strings.HasSuffix(r.Text, c.table) {
				continue
			}
			found++
			inner, _, _ := strings.Cut(r.Source, " -> ")
			if inner != src+":"+c.line {
				t.Errorf("%s %#x %q: source %q, want %s:%s", c.fn, r.Vaddr, r.Text, r.Source, src, c.line)
			}
			if r.Size != c.size {
				t.Errorf("%s %#x %q: size %d, want %d", c.fn, r.Vaddr, r.Text, r.Size, c.size)
			}
			if w := text[7](r.Vaddr); !c.word(w) {
				t.Errorf("%s %#x %q: the ELF holds %08X there", c.fn, r.Vaddr, r.Text, w)
			}
		}
		if found != 1 {
			t.Errorf("%s: %d rows %s…%s, want 1", c.fn, found, c.op, c.table)
		}
	}
	// No other instruction carries those encodings (the index has every
	// one of them, and only at the PCs above).
	for _, r := range ix.Rows {
		if r.Kind != wire.RowInstruction || r.CodeObj != 7 {
			continue
		}
		w := text[7](r.Vaddr)
		if prng(w) != strings.HasPrefix(r.Text, "v_prng_b32") || bitop3(w) != strings.HasPrefix(r.Text, "v_bitop3_b32") {
			t.Errorf("%#x %q: ELF word %08X", r.Vaddr, r.Text, w)
		}
	}

	// The inlined mix from helper.h keeps its call chain.
	mix := " -> " + src + ":" + lineOf(t, lines, "mix(x, key)")
	chained := 0
	for _, r := range ix.Rows {
		if r.CodeObj == 7 && strings.HasPrefix(r.Source, "testdata/kernels/src/helper.h:") && strings.Contains(r.Source, mix) {
			chained++
		}
	}
	if chained < 3 {
		t.Errorf("%d rows inside the inlined mix (helper.h …%s)", chained, mix)
	}
}

// elfWords returns a reader of the 32-bit little-endian word at an ELF
// virtual address of the code object at path (0 outside its sections).
func elfWords(t *testing.T, path string) func(uint64) uint32 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type sec struct {
		addr uint64
		data []byte
	}
	var secs []sec
	for _, s := range f.Sections {
		if s.Type == elf.SHT_PROGBITS && s.Flags&elf.SHF_EXECINSTR != 0 {
			d, err := s.Data()
			if err != nil {
				t.Fatal(err)
			}
			secs = append(secs, sec{s.Addr, d})
		}
	}
	if len(secs) == 0 {
		t.Fatalf("%s: no executable section", path)
	}
	return func(a uint64) uint32 {
		for _, s := range secs {
			if a >= s.addr && a+4 <= s.addr+uint64(len(s.data)) {
				return binary.LittleEndian.Uint32(s.data[a-s.addr:])
			}
		}
		return 0
	}
}

func inRanges(objs []wire.CodeObject, id, vaddr, size uint64) bool {
	for _, o := range objs {
		if o.ID != id {
			continue
		}
		for _, r := range o.Ranges {
			if vaddr >= r.Begin && vaddr+size <= r.End {
				return true
			}
		}
	}
	return false
}

func sourceLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// lineOf returns the number of the one source line containing s.
func lineOf(t *testing.T, lines []string, s string) string {
	t.Helper()
	n := 0
	for i, l := range lines {
		if strings.Contains(l, s) {
			if n != 0 {
				t.Fatalf("%q on lines %d and %d", s, n, i+1)
			}
			n = i + 1
		}
	}
	if n == 0 {
		t.Fatalf("%q in no source line", s)
	}
	return strconv.Itoa(n)
}
