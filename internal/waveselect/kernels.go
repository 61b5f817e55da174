package waveselect

import (
	"fmt"
	"math"
	"slices"

	"github.com/attkit/attkit/internal/wire"
)

// A Kernels tells which kernel a PC belongs to: the code ranges of an
// index's kernels. A kernel's range starts at its entry (a "kernels" entry
// of the index, or a function label row) and ends at the next entry of the
// same code object, else at the end of the object's load range holding
// it, else after the object's last row. A code object of the index with
// rows but no entry at all (a code.json without kernels list, as the real
// captures' ones) is one kernel, from its lowest row to past its highest,
// named as a PC outside every range is: "<code object> / 0x<address>"
// (python-layer §5.4's default kernel name) of its lowest row.
type Kernels struct {
	byObj map[uint64][]kernelRange // sorted by begin
}

type kernelRange struct {
	begin, end uint64
	name       string // shown: the demangled name, else the symbol
	alias      string // the other name matched by --kernel ("" if none)
}

// NewKernels reads the kernel ranges of ix (nil: none; every PC then has
// its default name).
func NewKernels(ix *wire.Index) *Kernels {
	k := &Kernels{byObj: map[uint64][]kernelRange{}}
	if ix == nil {
		return k
	}
	type entry struct {
		pc          wire.PC
		name, alias string
	}
	var entries []entry
	seen := map[wire.PC]int{}
	add := func(pc wire.PC, name, alias string) {
		if name == "" {
			name, alias = alias, ""
		}
		if name == alias {
			alias = ""
		}
		if i, ok := seen[pc]; ok {
			if name != "" {
				entries[i].name, entries[i].alias = name, alias // later list entries win (§5.4)
			}
			return
		}
		seen[pc] = len(entries)
		entries = append(entries, entry{pc, name, alias})
	}
	for _, kn := range ix.Kernels {
		add(wire.PC{Address: kn.Address, CodeObjectID: kn.CodeObj}, kn.Demangled, kn.Name)
	}
	// Function labels not in the kernels list start a range too (a
	// code.json from elsewhere may name its kernels only so).
	lowest, highest := map[uint64]uint64{}, map[uint64]uint64{}
	for i := range ix.Rows {
		r := &ix.Rows[i]
		if r.Kind == wire.RowFunction {
			if i, ok := seen[r.PC()]; !ok {
				add(r.PC(), r.Source, "")
			} else if e := &entries[i]; e.alias == "" && r.Source != e.name {
				e.alias = r.Source // the label's (symbol) name, matched too
			}
			continue
		}
		if r.IsLabel() || r.Raw != nil {
			continue
		}
		end := r.Vaddr + max(r.Size, 1)
		if lo, ok := lowest[r.CodeObj]; !ok || r.Vaddr < lo {
			lowest[r.CodeObj] = r.Vaddr
		}
		highest[r.CodeObj] = max(highest[r.CodeObj], end)
	}
	for _, e := range entries {
		if e.name == "" {
			e.name = DefaultName(e.pc)
		}
		k.byObj[e.pc.CodeObjectID] = append(k.byObj[e.pc.CodeObjectID],
			kernelRange{begin: e.pc.Address, name: e.name, alias: e.alias})
	}
	for co, lo := range lowest {
		if _, ok := k.byObj[co]; !ok {
			k.byObj[co] = []kernelRange{{begin: lo, end: highest[co],
				name: DefaultName(wire.PC{Address: lo, CodeObjectID: co})}}
		}
	}
	loads := map[uint64][]wire.LoadRange{}
	for _, o := range ix.Objects {
		loads[o.ID] = append(loads[o.ID], o.Ranges...)
	}
	for co, rs := range k.byObj {
		slices.SortStableFunc(rs, func(a, b kernelRange) int {
			switch {
			case a.begin < b.begin:
				return -1
			case a.begin > b.begin:
				return 1
			}
			return 0
		})
		for i := range rs {
			if rs[i].end != 0 {
				continue // a whole code object's range
			}
			end := uint64(math.MaxUint64)
			if i+1 < len(rs) {
				end = rs[i+1].begin
			}
			for _, lr := range loads[co] {
				if lr.Begin <= rs[i].begin && rs[i].begin < lr.End {
					end = min(end, lr.End)
				}
			}
			if h, ok := highest[co]; ok && h > rs[i].begin && len(loads[co]) == 0 {
				end = min(end, h)
			}
			rs[i].end = end
		}
	}
	return k
}

// DefaultName is the name of a kernel the index does not know, after the
// PC of its entry (or of the first instruction of a wave outside every
// range): "<code object> / 0x<address>", python-layer §5.4's default.
func DefaultName(pc wire.PC) string {
	return fmt.Sprintf("%d / %#x", pc.CodeObjectID, pc.Address)
}

// Lookup returns the name of the kernel whose range holds pc, and whether
// one does.
func (k *Kernels) Lookup(pc wire.PC) (name string, ok bool) {
	r := k.lookup(pc)
	if r == nil {
		return "", false
	}
	return r.name, true
}

func (k *Kernels) lookup(pc wire.PC) *kernelRange {
	rs := k.byObj[pc.CodeObjectID]
	i, _ := slices.BinarySearchFunc(rs, pc.Address, func(r kernelRange, a uint64) int {
		switch {
		case r.begin < a:
			return -1
		case r.begin > a:
			return 1
		}
		return 0
	})
	// rs[i].begin >= pc.Address; the range holding pc starts at or before.
	if i < len(rs) && rs[i].begin == pc.Address {
		return &rs[i]
	}
	if i == 0 {
		return nil
	}
	if r := &rs[i-1]; pc.Address < r.end {
		return r
	}
	return nil
}

// Range returns the code range [begin, end) of the kernel named name (its
// shown name or its other one) in code object co, for tests and reports.
func (k *Kernels) Range(co uint64, name string) (begin, end uint64, ok bool) {
	for _, r := range k.byObj[co] {
		if r.name == name || r.alias == name {
			return r.begin, r.end, true
		}
	}
	return 0, 0, false
}
