// Package fold accumulates decoded waves into per-instruction counters, the
// CodeIndex statistics of python-layer §3.8 and §4.1–4.6: hit count,
// latency, stall and idle cycles per program counter. It writes the stats
// CSV (§4.3) and the viewer's code.json with counters (§4.5), and compares
// the counters with control CSVs (§4.6).
//
// A Fold keeps one Entry per PC and never the waves, so its memory depends
// on the number of distinct PCs, not on the length of the trace. Entries
// come first from the instruction rows of an index, in row order; PCs that
// the trace touches but the index lacks get the next line numbers in
// first-touch order (§4.2). A Fold is not safe for concurrent use.
package fold

import (
	"slices"

	"github.com/attkit/attkit/internal/wire"
)

// An Entry holds the counters of one PC. Text and Source come from the
// index ("" for a PC the index lacks); Line is the viewer's line number.
// The Exp fields hold expectations loaded from control CSVs.
type Entry struct {
	PC     wire.PC
	Text   string
	Source string
	Line   int64

	Hit, Latency, Stall, Idle             int64
	ExpHit, ExpLatency, ExpStall, ExpIdle int64

	// InIndex reports whether the PC has an instruction row in the index.
	InIndex bool

	next *Entry // the entry created after this one: the likely next PC
}

// A Fold is the per-PC state of one run.
type Fold struct {
	ix       *wire.Index
	byPC     map[wire.PC]*Entry
	entries  []*Entry // creation order: index rows first, then first touch
	nextLine int64
	last     *Entry // entry of the previous instruction folded
}

// New returns a Fold whose entries are the instruction rows of ix, with
// zero counters (the counters of a code.json index are not carried over: a
// fold starts fresh, as each run does upstream). Label rows and rows that
// are not of the ten-column form make no entry. When rows share a PC the
// last one gives the entry its text, source and line. A nil ix is the empty
// index, CodeIndex([]).
func New(ix *wire.Index) *Fold {
	f := &Fold{ix: ix, byPC: map[wire.PC]*Entry{}}
	if ix != nil {
		for i := range ix.Rows {
			r := &ix.Rows[i]
			if r.Raw != nil || r.IsLabel() {
				continue
			}
			pc := r.PC()
			e := f.byPC[pc]
			if e == nil {
				e = &Entry{PC: pc, InIndex: true}
				f.add(e)
			}
			e.Text, e.Source, e.Line = r.Text, r.Source, r.Line
			if r.SourceNull {
				e.Source = "None" // upstream's str(None): what its stats CSV shows for a null Source
			}
		}
	}
	for _, e := range f.entries {
		f.nextLine = max(f.nextLine, e.Line)
	}
	f.nextLine++
	return f
}

func (f *Fold) add(e *Entry) {
	if n := len(f.entries); n > 0 {
		f.entries[n-1].next = e
	}
	f.entries = append(f.entries, e)
	f.byPC[e.PC] = e
}

// Index returns the index the fold was built from (nil for none).
func (f *Fold) Index() *wire.Index { return f.ix }

// get is get_or_create (§4.2).
func (f *Fold) get(pc wire.PC) *Entry {
	if e := f.byPC[pc]; e != nil {
		return e
	}
	e := &Entry{PC: pc, Line: f.nextLine}
	f.nextLine++
	f.add(e)
	return e
}

// AddWave folds the instructions of w into the counters (§4.1): the PC
// (0, 0) is skipped; every other instruction adds one hit, max(stall,
// duration) latency, its stall, and as idle the time between the furthest
// completion reached so far in the wave (starting at the wave's begin time)
// and its own time, when positive.
func (f *Fold) AddWave(w *wire.Wave) {
	prevEnd := w.BeginTime
	e := f.last
	for i := range w.Instructions {
		in := &w.Instructions[i]
		if in.PC == (wire.PC{}) {
			continue
		}
		// Straight-line code runs the entries in index order: try the
		// previous entry and its successor before the map.
		switch {
		case e != nil && e.next != nil && e.next.PC == in.PC:
			e = e.next
		case e != nil && e.PC == in.PC:
		default:
			e = f.get(in.PC)
		}
		stall := int64(in.Stall)
		lat := max(stall, int64(in.Duration))
		e.Hit++
		e.Latency += lat
		e.Stall += stall
		if d := in.Time - prevEnd; d > 0 {
			e.Idle += d
		}
		prevEnd = max(prevEnd, in.Time+lat)
	}
	f.last = e
}

// Line returns the line number of pc, creating an entry with the next line
// number when pc is new (get_or_create, §4.2). The PC (0, 0) gets an entry
// too when asked: the wave writer of att-rcv asks for it.
func (f *Fold) Line(pc wire.PC) int64 { return f.get(pc).Line }

// AskLines does for w, after AddWave(w), what upstream's wave-file writer
// does (python-layer §5.6): it asks for the line number of every
// instruction. Only the unresolved PC (0, 0), which AddWave skips, can be
// new by then, so an unresolved instruction gives it an entry with zero
// counters and the next line number. That entry is the row "0,0,,0,0,0,0,"
// of upstream's stats CSV, and a code.json row, whenever viewer JSON is
// written (§4.4 note). att-rcv's wave writer asks through Line instead.
func (f *Fold) AskLines(w *wire.Wave) {
	if f.byPC[wire.PC{}] != nil {
		return
	}
	for i := range w.Instructions {
		if w.Instructions[i].PC == (wire.PC{}) {
			f.get(wire.PC{})
			return
		}
	}
}

// Entry returns the entry of pc, or nil when there is none. The pointer
// stays valid for the life of the fold.
func (f *Fold) Entry(pc wire.PC) *Entry { return f.byPC[pc] }

// Entries returns every entry in creation order: the index's instruction
// rows, then new PCs in first-touch order (line-number order). The slice
// must not be modified.
func (f *Fold) Entries() []*Entry { return f.entries }

// Len returns the number of entries.
func (f *Fold) Len() int { return len(f.entries) }

// newEntries returns the entries the index lacks, in line-number order.
func (f *Fold) newEntries() []*Entry {
	var out []*Entry
	for _, e := range f.entries {
		if !e.InIndex {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b *Entry) int { return cmpInt(a.Line, b.Line) })
	return out
}

// sortedByPC returns entries sorted by (code object id, address).
func sortedByPC(es []*Entry) []*Entry {
	out := slices.Clone(es)
	slices.SortStableFunc(out, func(a, b *Entry) int { return ComparePC(a.PC, b.PC) })
	return out
}

// ComparePC orders PCs by code object id, then address.
func ComparePC(a, b wire.PC) int {
	if a.CodeObjectID != b.CodeObjectID {
		if a.CodeObjectID < b.CodeObjectID {
			return -1
		}
		return 1
	}
	if a.Address != b.Address {
		if a.Address < b.Address {
			return -1
		}
		return 1
	}
	return 0
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
