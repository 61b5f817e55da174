// Package rollup sums the per-PC counters of a fold by source line, by
// function or by kernel: att-stats --by line|function|kernel, and the
// per-line and per-kernel views of att-report.
//
// In: a *fold.Fold (its entries, one per PC, and the index it was built
// from) and, optionally, the hidden latency per PC (hidden.Result.ByPC).
// Out: []Group, one per key with the exact sums of its PCs' counters, and
// their CSV (WriteCSV) or JSON lines (WriteJSON).
//
// Keys. Every entry of the fold (every instruction row of the index, every
// PC the trace touched) counts in exactly one group, so the groups' sums
// are the sums of the per-PC rows:
//
//   - ByLine: the instruction's own source line, the first file:line of
//     its Source ("helper.h:8" for "helper.h:8 -> k.cl:24"): an inlined
//     helper's line sums over every place it was inlined. A PC with no
//     source line (the index lacks it, no DWARF row, padding) is in the
//     group with the empty Source. Groups are sorted by file, then line
//     number ("file:?", line 0, first), the empty Source last.
//   - ByFunction: the innermost function of the PC's inline chain
//     (wire.Row.Inline: the helper whose code it is, not the kernel that
//     inlined it). Without a named chain (no DWARF, a code.json index, a
//     PC the index lacks) the PC's kernel names the group; with neither
//     the group is the empty name.
//   - ByKernel: the kernel, the function label row ("; _name") that
//     precedes the PC in its code object, named as the index's kernel list
//     names it (demangled); the group is per code object and kernel
//     address. A PC before every label, or that the index lacks, is in its
//     code object's group with the empty name.
//
// Functions and kernels come in the order their first PC has in the stats
// CSV (code order), the empty name last. ByPC is one group per entry, in
// the stats CSV's order, for callers that want one code path.
package rollup

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/attkit/attkit/internal/fold"
	"github.com/attkit/attkit/internal/hidden"
	"github.com/attkit/attkit/internal/pyjson"
	"github.com/attkit/attkit/internal/wire"
)

// By is a roll-up key.
type By string

// The roll-up keys of att-stats --by.
const (
	ByPC       By = "pc"
	ByLine     By = "line"
	ByFunction By = "function"
	ByKernel   By = "kernel"
)

// Counters are the summed counters of a group: those of the stats CSV
// (Hit is its Hitcount), the hidden latency of hidden.csv (HiddenIdle,
// HiddenStall, HiddenIssue), and the split of python-layer §8.1 that
// att-stats --format top shows: Hidden = hidden stall + hidden issue +
// min(hidden idle, idle), Exposed = latency + idle - Hidden, both summed
// per PC (see Of).
type Counters struct {
	Hit, Latency, Stall, Idle            int64
	HiddenIdle, HiddenStall, HiddenIssue int64
	Hidden, Exposed                      int64
}

// Of returns one PC's counters.
func Of(e *fold.Entry, h hidden.Latency) Counters {
	c := Counters{Hit: e.Hit, Latency: e.Latency, Stall: e.Stall, Idle: e.Idle,
		HiddenIdle: h.Idle, HiddenStall: h.Stall, HiddenIssue: h.Issue}
	c.Hidden = h.Stall + h.Issue + min(h.Idle, e.Idle)
	c.Exposed = e.Latency + e.Idle - c.Hidden
	return c
}

// Add adds o to c.
func (c *Counters) Add(o Counters) {
	c.Hit += o.Hit
	c.Latency += o.Latency
	c.Stall += o.Stall
	c.Idle += o.Idle
	c.HiddenIdle += o.HiddenIdle
	c.HiddenStall += o.HiddenStall
	c.HiddenIssue += o.HiddenIssue
	c.Hidden += o.Hidden
	c.Exposed += o.Exposed
}

// A Group is one row of a roll-up.
type Group struct {
	// Key is the Source ("file:line"), the function or the kernel name;
	// "" for the PCs without one. For ByPC it is the PC's Source.
	Key string
	// CodeObj and Vaddr identify a ByKernel group (its code object and
	// the kernel's label address; Vaddr 0 for the group without a
	// kernel); for ByPC they are the PC.
	CodeObj, Vaddr uint64
	// File and Line split a ByLine key ("" and 0 for the empty Source,
	// line 0 for "file:?").
	File string
	Line int64
	// PCs is the number of the fold's entries in the group.
	PCs int
	Counters
}

// Sum rolls the fold's entries up by key. hid may be nil (no hidden
// latency: those counters are zero and Exposed is latency + idle).
func Sum(fo *fold.Fold, hid map[wire.PC]hidden.Latency, by By) ([]Group, error) {
	entries := fo.Ordered()
	switch by {
	case ByPC:
		out := make([]Group, len(entries))
		for i, e := range entries {
			out[i] = Group{Key: e.Source, CodeObj: e.PC.CodeObjectID, Vaddr: e.PC.Address, PCs: 1, Counters: Of(e, hid[e.PC])}
		}
		return out, nil
	case ByLine, ByFunction, ByKernel:
	default:
		return nil, fmt.Errorf("unknown roll-up key %q (want pc, line, function or kernel)", by)
	}
	kernels := KernelsOf(fo.Index())
	var inline map[wire.PC][]wire.InlineFrame
	if by == ByFunction {
		inline = InlineOf(fo.Index())
	}
	type key struct {
		name   string
		co, at uint64
	}
	pos := map[key]int{}
	var out []Group
	for _, e := range entries {
		var k key
		switch by {
		case ByLine:
			k.name = FirstSource(e.Source)
		case ByFunction:
			if fr := inline[e.PC]; len(fr) > 0 && fr[0].Function != "" {
				k.name = fr[0].Function
			} else if kn := kernels[e.PC]; kn != nil {
				k.name = kn.Name
			}
		case ByKernel:
			k.co = e.PC.CodeObjectID
			if kn := kernels[e.PC]; kn != nil {
				k.name, k.at = kn.Name, kn.Address
			}
		}
		i, ok := pos[k]
		if !ok {
			i = len(out)
			pos[k] = i
			g := Group{Key: k.name, CodeObj: k.co, Vaddr: k.at}
			if by == ByLine {
				g.File, g.Line = SplitSource(k.name)
			}
			out = append(out, g)
		}
		out[i].PCs++
		out[i].Add(Of(e, hid[e.PC]))
	}
	if by == ByLine {
		slices.SortStableFunc(out, func(a, b Group) int {
			return cmp.Or(cmp.Compare(boolInt(a.Key == ""), boolInt(b.Key == "")),
				cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Key, b.Key))
		})
	} else {
		slices.SortStableFunc(out, func(a, b Group) int {
			return cmp.Compare(boolInt(a.Key == ""), boolInt(b.Key == ""))
		})
	}
	return out, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// InlineOf returns the inline chain of each instruction PC of the index
// (wire.Row.Inline; the last row of a PC wins, as in a fold). PCs without
// a chain are absent.
func InlineOf(ix *wire.Index) map[wire.PC][]wire.InlineFrame {
	out := map[wire.PC][]wire.InlineFrame{}
	if ix == nil {
		return out
	}
	for i := range ix.Rows {
		r := &ix.Rows[i]
		if r.Raw == nil && !r.IsLabel() {
			if r.Inline != nil {
				out[r.PC()] = r.Inline
			} else {
				delete(out, r.PC())
			}
		}
	}
	return out
}

// FirstSource returns the first file:line of a source chain
// ("helper.h:8 -> k.cl:24" gives "helper.h:8"), trimmed.
func FirstSource(src string) string {
	if i := strings.Index(src, " -> "); i >= 0 {
		src = src[:i]
	}
	return strings.TrimSpace(src)
}

// SplitSource splits "file:line" into file and line; "file:?" and a text
// without a line number give line 0 (the whole text as the file when it
// has no ':').
func SplitSource(s string) (string, int64) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return s, 0
	}
	if n, err := strconv.ParseInt(s[i+1:], 10, 64); err == nil {
		return s[:i], n
	}
	if s[i+1:] == "?" {
		return s[:i], 0
	}
	return s, 0
}

// A Kernel is a function label of an index: its code object and address,
// its name (demangled, as the index's kernel list names it, else the
// label's symbol), and its own source file with the first line of it that
// its instructions map to (their outermost frames).
type Kernel struct {
	CodeObj, Address uint64
	Name, File       string
	Line             int64
}

// KernelsOf returns, per instruction PC of the index, its kernel: the
// function label row that precedes it in the same code object.
func KernelsOf(ix *wire.Index) map[wire.PC]*Kernel {
	out := map[wire.PC]*Kernel{}
	if ix == nil {
		return out
	}
	demangled := map[wire.PC]string{}
	for _, k := range ix.Kernels {
		if k.Demangled != "" && k.Demangled != k.Name {
			demangled[wire.PC{CodeObjectID: k.CodeObj, Address: k.Address}] = k.Demangled
		}
	}
	var cur *Kernel
	var co uint64
	for i := range ix.Rows {
		r := &ix.Rows[i]
		if r.Raw != nil {
			continue
		}
		if r.CodeObj != co {
			cur, co = nil, r.CodeObj
		}
		if r.Kind == wire.RowFunction {
			name := r.Source
			if name == "" {
				name = strings.TrimPrefix(strings.TrimPrefix(r.Text, ";"), " _")
			}
			if d := demangled[r.PC()]; d != "" {
				name = d
			}
			cur = &Kernel{CodeObj: r.CodeObj, Address: r.Vaddr, Name: name}
			continue
		}
		if cur == nil || r.IsLabel() {
			continue
		}
		out[r.PC()] = cur
		if src := strings.TrimSpace(r.Source); src != "" && src != "None" {
			parts := strings.Split(src, " -> ")
			file, line := SplitSource(strings.TrimSpace(parts[len(parts)-1]))
			if cur.File == "" {
				cur.File = file
			}
			if file == cur.File && line > 0 && (cur.Line == 0 || line < cur.Line) {
				cur.Line = line
			}
		}
	}
	return out
}

// Header returns the CSV header of a roll-up by by: the key columns
// (Source; Function; CodeObj, Kernel; for ByPC CodeObj, Vaddr, Source),
// then Hitcount, Latency, Stall, Idle, HiddenIdle, HiddenStall,
// HiddenIssue, Hidden, Exposed, PCs.
func Header(by By) []string {
	var h []string
	switch by {
	case ByPC:
		h = []string{"CodeObj", "Vaddr", "Source"}
	case ByLine:
		h = []string{"Source"}
	case ByFunction:
		h = []string{"Function"}
	case ByKernel:
		h = []string{"CodeObj", "Kernel"}
	}
	return append(h, "Hitcount", "Latency", "Stall", "Idle", "HiddenIdle", "HiddenStall", "HiddenIssue", "Hidden", "Exposed", "PCs")
}

func (g *Group) keyFields(by By) []string {
	switch by {
	case ByPC:
		return []string{strconv.FormatUint(g.CodeObj, 10), strconv.FormatUint(g.Vaddr, 10), g.Key}
	case ByKernel:
		return []string{strconv.FormatUint(g.CodeObj, 10), g.Key}
	}
	return []string{g.Key}
}

func (c *Counters) fields() []int64 {
	return []int64{c.Hit, c.Latency, c.Stall, c.Idle, c.HiddenIdle, c.HiddenStall, c.HiddenIssue, c.Hidden, c.Exposed}
}

// WriteCSV writes the groups as CSV in the stats CSV's bytes (Python's
// csv module: CRLF, minimal quoting), with Header(by) first.
func WriteCSV(w io.Writer, groups []Group, by By) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	b := fold.AppendCSVRow(nil, Header(by)...)
	for i := range groups {
		g := &groups[i]
		f := g.keyFields(by)
		for _, v := range g.fields() {
			f = append(f, strconv.FormatInt(v, 10))
		}
		f = append(f, strconv.Itoa(g.PCs))
		b = fold.AppendCSVRow(b, f...)
		if len(b) > 32<<10 {
			if _, err := bw.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	if _, err := bw.Write(b); err != nil {
		return err
	}
	return bw.Flush()
}

// WriteJSON writes one JSON object per group a line: the key members
// (source; function; codeobj and kernel; for ByPC codeobj, vaddr and
// source), then hitcount, latency, stall, idle, hidden_idle,
// hidden_stall, hidden_issue, hidden, exposed and pcs.
func WriteJSON(w io.Writer, groups []Group, by By) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var b []byte
	for i := range groups {
		g := &groups[i]
		b = append(b[:0], '{')
		switch by {
		case ByPC:
			b = append(b, `"codeobj":`...)
			b = strconv.AppendUint(b, g.CodeObj, 10)
			b = append(b, `,"vaddr":`...)
			b = strconv.AppendUint(b, g.Vaddr, 10)
			b = append(b, `,"source":`...)
		case ByLine:
			b = append(b, `"source":`...)
		case ByFunction:
			b = append(b, `"function":`...)
		case ByKernel:
			b = append(b, `"codeobj":`...)
			b = strconv.AppendUint(b, g.CodeObj, 10)
			b = append(b, `,"kernel":`...)
		}
		b = pyjson.AppendString(b, g.Key)
		for k, v := range g.fields() {
			b = append(b, `,"`...)
			b = append(b, jsonNames[k]...)
			b = append(b, `":`...)
			b = strconv.AppendInt(b, v, 10)
		}
		b = append(b, `,"pcs":`...)
		b = strconv.AppendInt(b, int64(g.PCs), 10)
		b = append(b, "}\n"...)
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

var jsonNames = []string{"hitcount", "latency", "stall", "idle", "hidden_idle", "hidden_stall", "hidden_issue", "hidden", "exposed"}
