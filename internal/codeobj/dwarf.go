package codeobj

import (
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/attkit/attkit/internal/pypath"
	"github.com/attkit/attkit/internal/wire"
)

// A LineTable maps instruction addresses to source text as python-layer
// §3.5 says: "file:line", "file:?" for line 0, followed by the inlined call
// chain (" -> call_file:call_line", innermost first).
type LineTable struct {
	ranges []lineRange
}

type lineRange struct {
	begin, end uint64
	text       string
	frames     []wire.InlineFrame // the inline chain, one frame per element of text
}

// Len returns the number of address ranges in the table.
func (t *LineTable) Len() int {
	if t == nil {
		return 0
	}
	return len(t.ranges)
}

// Lookup returns the source text of address a, or "".
func (t *LineTable) Lookup(a uint64) string {
	if t == nil {
		return ""
	}
	// The last range whose start is <= a.
	i := sort.Search(len(t.ranges), func(i int) bool { return t.ranges[i].begin > a }) - 1
	if i < 0 || a >= t.ranges[i].end {
		return ""
	}
	return t.ranges[i].text
}

// LookupInline returns the inline chain of address a (wire.InlineFrame:
// innermost first, one frame per file:line of Lookup's text, with the
// function names from DWARF), or nil. The slice is shared: do not modify
// it.
func (t *LineTable) LookupInline(a uint64) []wire.InlineFrame {
	if t == nil {
		return nil
	}
	i := sort.Search(len(t.ranges), func(i int) bool { return t.ranges[i].begin > a }) - 1
	if i < 0 || a >= t.ranges[i].end {
		return nil
	}
	return t.ranges[i].frames
}

// readLines builds the line table of f. No DWARF, or DWARF that debug/dwarf
// rejects at file level, gives an empty table; DWARF that debug/elf cannot
// relocate is an error.
func readLines(f *elf.File) (*LineTable, error) {
	t := &LineTable{}
	if f.Section(".debug_info") == nil || f.Section(".debug_line") == nil {
		return t, nil
	}
	d, err := f.DWARF()
	if err != nil {
		if hasDebugRelocations(f) {
			return nil, fmt.Errorf("cannot relocate the debug sections of this %v object (%v); index the linked code object instead", f.Type, err)
		}
		return t, nil
	}
	lineSec, _ := sectionData(f, ".debug_line")
	lineStr, _ := sectionData(f, ".debug_line_str")
	str, _ := sectionData(f, ".debug_str")
	raw := rawSections{line: lineSec, lineStr: lineStr, str: str, order: f.ByteOrder}

	// Every entry takes at least one byte of .debug_info: a reader that
	// returns more entries than that is going round in circles on
	// damaged input.
	info, _ := sectionData(f, ".debug_info")
	budget := len(info) + 1
	r := d.Reader()
	for ; budget > 0; budget-- {
		cu, err := r.Next()
		if err != nil || cu == nil {
			break // an error while iterating units stops iteration
		}
		if cu.Tag != dwarf.TagCompileUnit && cu.Tag != dwarf.TagPartialUnit {
			r.SkipChildren()
			continue
		}
		ranges, err := unitRanges(d, &raw, cu, len(info)+1)
		if err == nil {
			t.ranges = append(t.ranges, ranges...)
		}
		r.SkipChildren()
	}
	sort.SliceStable(t.ranges, func(i, j int) bool { return t.ranges[i].begin < t.ranges[j].begin })
	return t, nil
}

func sectionData(f *elf.File, name string) ([]byte, error) {
	s := f.Section(name)
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil, errNoDWARF
	}
	return s.Data()
}

// hasDebugRelocations reports whether f has relocation sections that apply
// to debug sections, which debug/elf only knows to apply for some machines.
func hasDebugRelocations(f *elf.File) bool {
	for _, s := range f.Sections {
		if (s.Type == elf.SHT_REL || s.Type == elf.SHT_RELA) && int(s.Info) < len(f.Sections) &&
			strings.HasPrefix(f.Sections[s.Info].Name, ".debug_") {
			return true
		}
	}
	return false
}

// unitRanges computes the source ranges of one compilation unit. Any error
// skips the unit.
func unitRanges(d *dwarf.Data, raw *rawSections, cu *dwarf.Entry, budget int) (out []lineRange, err error) {
	off, ok := cu.Val(dwarf.AttrStmtList).(int64)
	if !ok {
		return nil, fmt.Errorf("no line program")
	}
	// Read the header first: debug/dwarf trusts its directory and file
	// counts and allocates whatever a damaged header asks for.
	hdr, herr := raw.header(off)
	if herr != nil && herr != errLineForm {
		return nil, herr
	}
	lr, err := d.LineReader(cu)
	if err != nil || lr == nil {
		return nil, err
	}
	// Map the line reader's file entries back to their numbers, so the
	// file rules of §3.5 apply to the raw names rather than debug/dwarf's
	// joined paths.
	fileIndex := map[*dwarf.LineFile]int{}
	for i, lf := range lr.Files() {
		if lf != nil {
			fileIndex[lf] = i
		}
	}
	resolve := func(idx int, lf *dwarf.LineFile) (string, bool) {
		if herr == nil {
			if s, ok := hdr.resolve(idx); ok {
				return s, true
			}
			if idx < len(hdr.files) {
				return "", false
			}
		}
		// A file the raw header does not list (DW_LNE_define_file) or a
		// header this package cannot read: debug/dwarf's name.
		if lf == nil || lf.Name == "" {
			return "", false
		}
		return pypath.Normpath(lf.Name), true
	}

	// The line rows.
	var rows []dwarf.LineEntry
	for {
		var e dwarf.LineEntry
		if err := lr.Next(&e); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
		rows = append(rows, e)
	}
	pos := map[uint64]int{}
	fileText := map[*dwarf.LineFile]string{}
	for i := 0; i+1 < len(rows); i++ {
		a, b := &rows[i], &rows[i+1]
		if a.EndSequence || b.Address <= a.Address {
			continue
		}
		name, ok := fileText[a.File]
		if !ok {
			idx, known := fileIndex[a.File]
			if !known {
				idx = -1
			}
			if s, ok := resolve(idx, a.File); ok {
				name = s
			} else {
				name = "\x00"
			}
			fileText[a.File] = name
		}
		if name == "\x00" {
			continue
		}
		text := name + ":?"
		if a.Line != 0 {
			text = name + ":" + strconv.Itoa(a.Line)
		}
		r := lineRange{a.Address, b.Address, text, []wire.InlineFrame{{File: name, Line: int64(a.Line)}}}
		if p, ok := pos[r.begin]; ok {
			out[p].text, out[p].end, out[p].frames = r.text, r.end, r.frames
			continue
		}
		pos[r.begin] = len(out)
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, nil
	}

	// The inline call chains.
	root, err := inlineTree(d, cu, budget, func(idx int) (string, bool) {
		var lf *dwarf.LineFile
		if files := lr.Files(); idx >= 0 && idx < len(files) {
			lf = files[idx]
		}
		return resolve(idx, lf)
	})
	if err != nil {
		return nil, err
	}
	if root != nil {
		names := &dieNames{d: d, cache: map[dwarf.Offset]string{}, budget: budget}
		var chain []*inlineNode
		for i := range out {
			chain = chain[:0]
			a := out[i].begin
			root.chain(a, &chain)
			fr := out[i].frames
			for _, n := range chain {
				fr[len(fr)-1].Function = names.of(n.entry)
				if n.callSite != "" {
					out[i].text += " -> " + n.callSite
				} else {
					out[i].text += " -> "
				}
				fr = append(fr, wire.InlineFrame{File: n.callFile, Line: n.callLine})
			}
			if sp := root.concrete(a); sp != nil {
				fr[len(fr)-1].Function = names.of(sp.entry)
			}
			out[i].frames = fr
		}
	}
	return out, nil
}

// dieNames names the functions of DIEs: DW_AT_name, else the name of the
// DIE its DW_AT_abstract_origin or DW_AT_specification refers to (an
// inlined or out-of-line instance, a definition of a declaration),
// followed a few steps at most. Names are cached by DIE offset.
type dieNames struct {
	d      *dwarf.Data
	cache  map[dwarf.Offset]string
	budget int // DIE reads left: damaged input cannot make it read forever
}

func (dn *dieNames) of(e *dwarf.Entry) string {
	if e == nil {
		return ""
	}
	if s, ok := dn.cache[e.Offset]; ok {
		return s
	}
	name := ""
	cur := e
	for step := 0; step < 8 && cur != nil; step++ {
		if s, ok := cur.Val(dwarf.AttrName).(string); ok && s != "" {
			name = s
			break
		}
		off, ok := cur.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		if !ok {
			off, ok = cur.Val(dwarf.AttrSpecification).(dwarf.Offset)
		}
		if !ok {
			break
		}
		if s, ok := dn.cache[off]; ok {
			name = s
			break
		}
		if dn.budget--; dn.budget < 0 {
			break
		}
		r := dn.d.Reader()
		r.Seek(off)
		next, err := r.Next()
		if err != nil || next == nil || next.Offset != off {
			break
		}
		cur = next
	}
	dn.cache[e.Offset] = name
	return name
}

// An inlineNode is a DIE of the inlining tree (§3.5) with a non-empty
// covered span.
type inlineNode struct {
	inlined    bool
	subprogram bool // a DW_TAG_subprogram with code: ranges holds its own
	ranges     [][2]uint64
	callSite   string // "call_file:call_line", "" when either is unknown
	callFile   string // the call site's file and line ("" and 0 when callSite is "")
	callLine   int64
	entry      *dwarf.Entry // the DIE, for its function name
	lo, hi     uint64       // covered span
	children   []*inlineNode
}

// concrete returns the innermost subprogram node one of whose own
// ranges contains a, or nil.
func (n *inlineNode) concrete(a uint64) *inlineNode {
	if a < n.lo || a >= n.hi {
		return nil
	}
	for _, c := range n.children {
		if sp := c.concrete(a); sp != nil {
			return sp
		}
	}
	if n.subprogram {
		for _, r := range n.ranges {
			if r[0] <= a && a < r[1] {
				return n
			}
		}
	}
	return nil
}

// chain appends the inlined nodes whose call sites make the chain at a
// (§3.5), innermost first.
func (n *inlineNode) chain(a uint64, out *[]*inlineNode) bool {
	if a < n.lo || a >= n.hi {
		return false
	}
	found := false
	for _, c := range n.children {
		if c.chain(a, out) {
			found = true
			break
		}
	}
	if n.inlined {
		for _, r := range n.ranges {
			if r[0] <= a && a < r[1] {
				*out = append(*out, n)
				return true
			}
		}
	}
	return found
}

// inlineTree reads the DIEs of the unit cu and returns the root of its
// inlining tree with empty nodes dropped, nil when nothing is inlined.
func inlineTree(d *dwarf.Data, cu *dwarf.Entry, budget int, resolve func(int) (string, bool)) (*inlineNode, error) {
	r := d.Reader()
	r.Seek(cu.Offset)
	var build func(e *dwarf.Entry, depth int) (*inlineNode, error)
	build = func(e *dwarf.Entry, depth int) (*inlineNode, error) {
		if depth > 512 {
			return nil, fmt.Errorf("DIE tree too deep")
		}
		n := &inlineNode{entry: e}
		if e.Tag == dwarf.TagInlinedSubroutine {
			n.inlined = true
			rs, err := d.Ranges(e)
			if err != nil {
				return nil, err
			}
			for _, x := range rs {
				if x[1] > x[0] {
					n.ranges = append(n.ranges, x)
				}
			}
			file, fok := e.Val(dwarf.AttrCallFile).(int64)
			line, lok := e.Val(dwarf.AttrCallLine).(int64)
			if fok && lok {
				if s, ok := resolve(int(file)); ok {
					n.callSite = s + ":" + strconv.FormatInt(line, 10)
					n.callFile, n.callLine = s, line
				}
			}
		} else if e.Tag == dwarf.TagSubprogram {
			// Its own ranges name the concrete function of the chain.
			// They widen its covered span, which leaves §3.5's source
			// text as it was: only inlined ranges contribute call
			// sites, and those lie inside the spans they had. A
			// subprogram whose ranges cannot be read only loses its
			// name.
			if rs, err := d.Ranges(e); err == nil {
				for _, x := range rs {
					if x[1] > x[0] {
						n.ranges = append(n.ranges, x)
					}
				}
			}
			n.subprogram = len(n.ranges) > 0
		}
		if e.Children {
			for {
				if budget--; budget < 0 {
					return nil, fmt.Errorf("DIE tree does not end")
				}
				c, err := r.Next()
				if err != nil {
					return nil, err
				}
				if c == nil {
					return nil, fmt.Errorf("unterminated DIE children")
				}
				if c.Tag == 0 {
					break
				}
				cn, err := build(c, depth+1)
				if err != nil {
					return nil, err
				}
				if cn != nil {
					n.children = append(n.children, cn)
				}
			}
		}
		first := true
		span := func(lo, hi uint64) {
			if first || lo < n.lo {
				n.lo = lo
			}
			if first || hi > n.hi {
				n.hi = hi
			}
			first = false
		}
		for _, x := range n.ranges {
			span(x[0], x[1])
		}
		for _, c := range n.children {
			span(c.lo, c.hi)
		}
		if first || n.hi <= n.lo {
			return nil, nil
		}
		return n, nil
	}
	e, err := r.Next()
	if err != nil || e == nil {
		return nil, err
	}
	return build(e, 0)
}
