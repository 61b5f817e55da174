package codeobj

import (
	"bufio"
	"bytes"
	"encoding/json"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

// dumpDIE is one DIE as the test reads llvm-dwarfdump --debug-info itself.
type dumpDIE struct {
	off      uint64
	tag      string
	attrs    map[string]string // attribute name -> the text in its parentheses
	ranges   [][2]uint64
	children []*dumpDIE
}

var (
	dieLineRE   = regexp.MustCompile(`^0x([0-9a-f]{8}):( +)(DW_TAG_\w+|NULL)`)
	attrLineRE  = regexp.MustCompile(`^\s+(DW_AT_\w+)\s+\((.*)$`)
	rangeLineRE = regexp.MustCompile(`\[0x([0-9a-f]+), 0x([0-9a-f]+)\)`)
	refRE       = regexp.MustCompile(`^0x([0-9a-f]+)\b`)
)

// readDwarfdump parses the DIE tree llvm-dwarfdump prints: the roots (one
// per unit) and every DIE by offset. A DIE's depth is its indentation;
// NULL lines end a list of children; the address ranges of low_pc/high_pc
// and of DW_AT_ranges (one "[lo, hi)" per line) are collected.
func readDwarfdump(t *testing.T, out []byte) ([]*dumpDIE, map[uint64]*dumpDIE) {
	var roots []*dumpDIE
	byOff := map[uint64]*dumpDIE{}
	var stack []*dumpDIE // stack[d] is the open DIE at depth d
	var cur *dumpDIE
	inRanges := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := dieLineRE.FindStringSubmatch(line); m != nil {
			inRanges = false
			depth := (len(m[2]) - 1) / 2
			if m[3] == "NULL" {
				cur = nil
				continue
			}
			off, _ := strconv.ParseUint(m[1], 16, 64)
			d := &dumpDIE{off: off, tag: m[3], attrs: map[string]string{}}
			byOff[off] = d
			if depth > len(stack) {
				t.Fatalf("dwarfdump: DIE %#x at depth %d under %d open", off, depth, len(stack))
			}
			stack = append(stack[:depth], d)
			if depth == 0 {
				roots = append(roots, d)
			} else {
				p := stack[depth-1]
				p.children = append(p.children, d)
			}
			cur = d
			continue
		}
		if cur == nil {
			continue
		}
		if m := attrLineRE.FindStringSubmatch(line); m != nil {
			v := strings.TrimSuffix(m[2], ")")
			cur.attrs[m[1]] = v
			inRanges = m[1] == "DW_AT_ranges"
			if inRanges {
				for _, r := range rangeLineRE.FindAllStringSubmatch(line, -1) {
					cur.addRange(r[1], r[2])
				}
			}
			continue
		}
		if inRanges {
			for _, r := range rangeLineRE.FindAllStringSubmatch(line, -1) {
				cur.addRange(r[1], r[2])
			}
		}
	}
	for _, d := range byOff {
		lo, lok := d.attrs["DW_AT_low_pc"]
		hi, hok := d.attrs["DW_AT_high_pc"]
		if lok && hok {
			d.addRange(strings.TrimPrefix(lo, "0x"), strings.TrimPrefix(hi, "0x"))
		}
	}
	return roots, byOff
}

func (d *dumpDIE) addRange(lo, hi string) {
	a, err1 := strconv.ParseUint(lo, 16, 64)
	b, err2 := strconv.ParseUint(hi, 16, 64)
	if err1 == nil && err2 == nil && b > a {
		d.ranges = append(d.ranges, [2]uint64{a, b})
	}
}

func (d *dumpDIE) has(a uint64) bool {
	for _, r := range d.ranges {
		if r[0] <= a && a < r[1] {
			return true
		}
	}
	return false
}

// unquote returns the string of an attribute text `"x"`.
func unquote(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return strings.Trim(s, `"`)
}

// nameOf is the DIE's DW_AT_name, or that of the DIE its abstract origin
// or specification refers to.
func nameOf(d *dumpDIE, byOff map[uint64]*dumpDIE) string {
	for step := 0; d != nil && step < 8; step++ {
		if n, ok := d.attrs["DW_AT_name"]; ok {
			return unquote(n)
		}
		ref, ok := d.attrs["DW_AT_abstract_origin"]
		if !ok {
			ref, ok = d.attrs["DW_AT_specification"]
		}
		m := refRE.FindStringSubmatch(ref)
		if !ok || m == nil {
			return ""
		}
		off, _ := strconv.ParseUint(m[1], 16, 64)
		d = byOff[off]
	}
	return ""
}

// dumpChain is the chain at address a by the dump: the subprogram whose
// ranges hold a, then the inlined subroutines under it whose ranges hold
// a, outermost first.
func dumpChain(roots []*dumpDIE, a uint64) []*dumpDIE {
	var out []*dumpDIE
	var walk func(d *dumpDIE, inSub bool)
	walk = func(d *dumpDIE, inSub bool) {
		for _, c := range d.children {
			switch {
			case !inSub && c.tag == "DW_TAG_subprogram" && c.has(a):
				out = append(out, c)
				walk(c, true)
				return
			case inSub && c.tag == "DW_TAG_inlined_subroutine" && c.has(a):
				out = append(out, c)
				walk(c, true)
				return
			case inSub && c.tag == "DW_TAG_lexical_block":
				n := len(out)
				walk(c, true)
				if len(out) > n {
					return
				}
			}
		}
	}
	for _, r := range roots {
		walk(r, false)
		if len(out) > 0 {
			break
		}
	}
	return out
}

var lineRowRE = regexp.MustCompile(`^0x([0-9a-f]{16})\s+\d+\s`)

// readLineStarts returns the addresses of the line-table rows that
// llvm-dwarfdump --debug-line prints, but for those ending a sequence,
// sorted: where the source ranges of §3.5 start.
func readLineStarts(out []byte) []uint64 {
	var starts []uint64
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if m := lineRowRE.FindStringSubmatch(line); m != nil && !strings.Contains(line, "end_sequence") {
			a, _ := strconv.ParseUint(m[1], 16, 64)
			starts = append(starts, a)
		}
	}
	slices.Sort(starts)
	return starts
}

// rangeStart returns the greatest start <= a.
func rangeStart(starts []uint64, a uint64) uint64 {
	i, found := slices.BinarySearch(starts, a)
	if found {
		return a
	}
	if i == 0 {
		return a
	}
	return starts[i-1]
}

// TestInlineChainsAgreeWithDwarfdump checks, on every committed object
// with DWARF, every instruction's inline chain against the DIE tree that
// llvm-dwarfdump (19, or 22 for gfx950) prints: the function names
// (innermost inlined subroutine first, the concrete subprogram last) and
// the call sites (DW_AT_call_file, DW_AT_call_line) of the outer frames;
// the first frame is the instruction's source line, the first file:line
// of its Source, and the chain has one frame per file:line of Source. As
// Source's call sites (§3.5), the chain is the one at the start of the
// line-table range the instruction is in (a range that goes on past a
// function's end, into the padding after it, keeps the function's chain).
func TestInlineChainsAgreeWithDwarfdump(t *testing.T) {
	total, inlined := 0, 0
	for _, p := range committedObjects(t) {
		if strings.Contains(p, "nodebug") {
			continue
		}
		t.Run(filepath.Base(filepath.Dir(p))+"/"+filepath.Base(p), func(t *testing.T) {
			dd := toolFor(t, "llvm-dwarfdump", p)
			roots, byOff := readDwarfdump(t, runTool(t, dd, "--debug-info", p))
			starts := readLineStarts(runTool(t, dd, "--debug-line", p))
			ix := buildOne(t, p, 1)
			for i := range ix.Rows {
				r := &ix.Rows[i]
				if r.Kind != wire.RowInstruction {
					if r.Inline != nil {
						t.Errorf("label row %q has an inline chain", r.Text)
					}
					continue
				}
				if r.Source == "" {
					if r.Inline != nil {
						t.Errorf("%#x: inline chain %v without a source line", r.Vaddr, r.Inline)
					}
					continue
				}
				total++
				parts := strings.Split(r.Source, " -> ")
				if len(r.Inline) != len(parts) {
					t.Fatalf("%#x: %d frames for source %q: %+v", r.Vaddr, len(r.Inline), r.Source, r.Inline)
				}
				for k, f := range r.Inline {
					want := f.File + ":" + strconv.FormatInt(f.Line, 10)
					if f.Line == 0 {
						want = f.File + ":?"
					}
					if k > 0 && f.File == "" && f.Line == 0 {
						want = "" // a call site that does not resolve
					}
					if parts[k] != want {
						t.Errorf("%#x: frame %d is %s, source says %s", r.Vaddr, k, want, parts[k])
					}
				}
				dc := dumpChain(roots, rangeStart(starts, r.Vaddr))
				if len(dc) != len(r.Inline) {
					t.Errorf("%#x: chain %+v, dwarfdump has %d DIEs", r.Vaddr, r.Inline, len(dc))
					continue
				}
				if len(dc) > 1 {
					inlined++
				}
				for k := range dc {
					d := dc[len(dc)-1-k] // innermost first
					if got, want := r.Inline[k].Function, nameOf(d, byOff); got != want {
						t.Errorf("%#x: frame %d function %q, dwarfdump %q", r.Vaddr, k, got, want)
					}
					if k == 0 {
						continue
					}
					callee := dc[len(dc)-k] // the DIE inlined at this frame's line
					file := path.Clean(unquote(callee.attrs["DW_AT_call_file"]))
					line, _ := strconv.ParseInt(callee.attrs["DW_AT_call_line"], 10, 64)
					if f := r.Inline[k]; f.File != file || f.Line != line {
						t.Errorf("%#x: frame %d at %s:%d, dwarfdump call site %s:%d", r.Vaddr, k, f.File, f.Line, file, line)
					}
				}
			}
		})
	}
	t.Logf("%d instructions with a chain, %d of them inlined", total, inlined)
	if total < 1000 || inlined < 50 {
		t.Errorf("only %d instructions with a chain, %d of them inlined", total, inlined)
	}
}

// TestJSONRowsCarryInline: co-index --format json's instruction rows have
// the index's chains as "inline" (function, file, line objects), rows
// without one have no member, and the header says minor 1.
func TestJSONRowsCarryInline(t *testing.T) {
	ix := buildOne(t, filepath.Join(kernelsDir, "gfx942", "kernels_code_object_id_1.hsaco"), 1)
	var buf bytes.Buffer
	if err := WriteJSON(&buf, ix); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if !strings.Contains(lines[0], `"minor":1,`) {
		t.Errorf("header %s", lines[0])
	}
	type frame struct {
		Function, File string
		Line           int64
	}
	seen := 0
	for _, l := range lines {
		var r struct {
			Type   string  `json:"type"`
			Inline []frame `json:"inline"`
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		json.Unmarshal([]byte(l), &m)
		if r.Type != "row" {
			continue
		}
		row := &ix.Rows[seen]
		seen++
		if _, has := m["inline"]; has != (len(row.Inline) > 0) {
			t.Errorf("row %d: inline member %v, chain %v", seen, has, row.Inline)
		}
		for k, f := range row.Inline {
			if k >= len(r.Inline) || r.Inline[k] != (frame{f.Function, f.File, f.Line}) {
				t.Errorf("row %d: %s, want %+v", seen, l, row.Inline)
				break
			}
		}
	}
	if seen != len(ix.Rows) || seen < 100 {
		t.Errorf("%d row lines for %d rows", seen, len(ix.Rows))
	}
}
