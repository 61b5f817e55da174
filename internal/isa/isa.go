// Package isa answers the decoders' question "what instruction is at this
// PC, and how long is it?" from an attkit index, so that no decoder ever sees
// a file format. Both the native decoder and the ROCm library binding ask a
// Provider.
package isa

import (
	"sort"

	"github.com/attkit/attkit/internal/wire"
)

// A Provider returns the disassembled text of the instruction at pc (as
// llvm-objdump prints it, branch operands normalised to the raw SOPP
// immediate) and its memory size in bytes. ok is false for an unknown PC.
// Implementations must be safe for concurrent use.
type Provider interface {
	ISA(pc wire.PC) (text string, size uint64, ok bool)
}

type entry struct {
	text string
	size uint64
}

// A Table is a Provider over the instruction rows of an index. Sizes missing
// from the index are estimated as upstream does: the distance to the next
// instruction of the same code object, at least 4; 4 for the last one.
type Table struct {
	m map[wire.PC]entry
}

// NewTable builds a Table from the instruction rows of ix.
func NewTable(ix *wire.Index) *Table {
	t := &Table{m: make(map[wire.PC]entry, len(ix.Rows))}
	byObj := map[uint64][]uint64{}
	for i := range ix.Rows {
		r := &ix.Rows[i]
		if r.IsLabel() || r.Raw != nil {
			continue
		}
		pc := r.PC()
		if _, dup := t.m[pc]; !dup {
			byObj[pc.CodeObjectID] = append(byObj[pc.CodeObjectID], pc.Address)
		}
		t.m[pc] = entry{text: r.Text, size: r.Size}
	}
	for id, addrs := range byObj {
		sort.Slice(addrs, func(i, j int) bool { return addrs[i] < addrs[j] })
		for i, a := range addrs {
			pc := wire.PC{Address: a, CodeObjectID: id}
			e := t.m[pc]
			if e.size != 0 {
				continue
			}
			e.size = 4
			if i+1 < len(addrs) && addrs[i+1]-a > 4 {
				e.size = addrs[i+1] - a
			}
			t.m[pc] = e
		}
	}
	return t
}

// ISA implements Provider.
func (t *Table) ISA(pc wire.PC) (string, uint64, bool) {
	e, ok := t.m[pc]
	return e.text, e.size, ok
}

// Len returns the number of instructions in the table.
func (t *Table) Len() int { return len(t.m) }
