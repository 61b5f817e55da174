package sqtt

import "errors"

// errNoLineAfter016 is how AMD's 0.1.6 library fails a gfx9 stitch whose
// swap rescue (3.5 step 10) needs the line after the current one and the
// ISA callback does not know it (A.4 item 8.9).
var errNoLineAfter016 = errors.New("the stitcher needs the line after the last one the ISA callback knows")

// stitchGFX9 assigns PCs to the instructions of gfx9 wave w (3.5) and
// returns the number of instructions consumed; under Compat Lib016 it
// fails with errNoLineAfter016 where 0.1.6 fails.
func (ps *parseState) stitchGFX9(w *wave) (int, error) {
	s := newWalk(ps.cache, w)
	s.pairBarrier = !ps.rules.noBarrierPCPair
	ins, n := s.ins, len(s.ins)
	for s.running() {
		if !s.usual() {
			break
		}
		if s.known() {
			continue
		}
		l, more := s.take()
		if !more {
			break
		}
		if l == nil {
			continue
		}
		// 10. Match.
		i := s.i
		ic := uint8(ins[i].Category)
		switch {
		case trivial(ic, l.cat):
			s.place(l)
		case l.cat == lcBranch:
			if !s.branch(ic, l) {
				return s.i, nil
			}
		case l.cat == lcMFMAScale && ic == catVALU:
			mfmaScale(w, i)
			s.place(l)
		case l.cat == lcGFX9Barrier && ic == catMessage:
			// Barrier entry and exit: the IMMED that follows shares the
			// PC. i moves past the next instruction whatever it is, as the
			// specification words it (a MESSAGE last in the list thus
			// leaves the wave's stitch incomplete).
			if i+1 < n && uint8(ins[i+1].Category) == catImmed {
				ins[i+1].PC = l.pc
			}
			s.place(l)
			s.i++
		case l.cat == lcGFX9Barrier && ic == catImmed:
			s.place(l)
		case l.cat == lcGFX9Barrier: // no other instruction takes it
			s.fails++
		case ps.rules.failNoLineAfter && i+1 < n && s.next == nil && uint8(ins[i+1].Category) == l.cat:
			// 0.1.6 looks up the line after l to try the swap below,
			// and fails when it cannot.
			return i, errNoLineAfter016
		case i+1 < n && s.next != nil && uint8(ins[i+1].Category) == l.cat && ic == s.next.cat:
			ins[i], ins[i+1] = ins[i+1], ins[i]
			s.next = l
			s.fails++
		case waitOrLoad(l):
			return i, nil
		default:
			s.fails++
		}
	}
	return s.consumed(), nil
}
