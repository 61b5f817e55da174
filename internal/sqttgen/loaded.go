package sqttgen

import (
	"fmt"

	"github.com/attkit/attkit/internal/wire"
)

// Loaded returns the index ix as a capture without code-object load
// records shows it, for traces of runtimes other than rocprofv3: the code
// objects sit at the GPU addresses loads gives per code object id, no
// CODEOBJ packet announces them, so a decoder leaves their PCs absolute, in
// code object 0 (spec §2.1.3). Every row, kernel and object range of ix
// moves to load address + ELF vaddr in code object 0, which is what
// co-index --code-object 0=PATH@ADDR indexes; a trace generated from the
// result with Instrument off carries those absolute PCs and no load
// record. (With Instrument on, the generator would announce code object 0
// at LoadAddress and move it again.)
//
// Every code object of ix needs a load address, a multiple of 256 (kernel
// entries must stay aligned), and the objects must not overlap once
// loaded. The funcmap tables are left out.
func Loaded(ix *wire.Index, loads map[uint64]uint64) (*wire.Index, error) {
	load := func(id uint64) (uint64, error) {
		a, ok := loads[id]
		switch {
		case !ok:
			return 0, fmt.Errorf("code object %d has no load address", id)
		case a%256 != 0:
			return 0, fmt.Errorf("load address %#x of code object %d is not 256-byte aligned", a, id)
		}
		return a, nil
	}
	moved := func(id, vaddr uint64) (uint64, error) {
		a, err := load(id)
		if err == nil && a+vaddr < a {
			err = fmt.Errorf("code object %d at %#x: vaddr %#x is beyond the 64-bit address space", id, a, vaddr)
		}
		return a + vaddr, err
	}
	out := &wire.Index{Header: ix.Header, Doc: ix.Doc}
	owner := map[uint64]uint64{} // absolute address -> code object of its instruction row
	for _, r := range ix.Rows {
		a, err := moved(r.CodeObj, r.Vaddr)
		if err != nil {
			return nil, err
		}
		if r.Kind == wire.RowInstruction {
			if o, dup := owner[a]; dup && o != r.CodeObj {
				return nil, fmt.Errorf("code objects %d and %d overlap at %#x once loaded", o, r.CodeObj, a)
			}
			owner[a] = r.CodeObj
		}
		r.CodeObj, r.Vaddr = 0, a
		out.Rows = append(out.Rows, r)
	}
	for _, k := range ix.Kernels {
		a, err := moved(k.CodeObj, k.Address)
		if err != nil {
			return nil, err
		}
		k.CodeObj, k.Address = 0, a
		out.Kernels = append(out.Kernels, k)
	}
	for _, o := range ix.Objects {
		c := wire.CodeObject{ID: 0, Path: o.Path, Target: o.Target}
		for _, r := range o.Ranges {
			b, err := moved(o.ID, r.Begin)
			if err != nil {
				return nil, err
			}
			e, err := moved(o.ID, r.End)
			if err != nil {
				return nil, err
			}
			c.Ranges = append(c.Ranges, wire.LoadRange{Begin: b, End: e})
		}
		out.Objects = append(out.Objects, c)
	}
	return out, nil
}
