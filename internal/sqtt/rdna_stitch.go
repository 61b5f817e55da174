package sqtt

import (
	"strings"

	"github.com/attkit/attkit/internal/wire"
)

// stitchRDNA assigns PCs to the instructions of RDNA wave w (3.5) and
// returns the number of instructions consumed.
func (ps *parseState) stitchRDNA(w *wave) int {
	s := newWalk(ps.cache, w)
	gfx12 := ps.cache.gfxip >= 12
	ins := s.ins
	skippedImmed := 0
	for s.running() {
		// The usual step is not taken where a barrier wait may have no
		// token (step 9), nor for a gfx12 wave's first instruction (step 5).
		if !w.exclBarrier && (s.i > 0 || !gfx12) && !s.usual() {
			break
		}
		if s.known() {
			continue
		}
		// 5. (gfx12) The first instruction has no PC.
		if s.i == 0 && gfx12 {
			if l := s.c.lookup(wire.PC{}); l == nil || l.text == "" {
				break
			}
		}
		l, more := s.take()
		if !more {
			break
		}
		if l == nil {
			continue
		}
		// 9. (gfx12) A barrier wait the hardware may not have reported.
		if w.exclBarrier && s.c.excludedBarrier(w, l, s.next, s.i) {
			continue
		}
		// 10. Match.
		I := &ins[s.i]
		ic := uint8(I.Category)
		switch {
		case trivial(ic, l.cat):
			s.place(l)
		case l.cat == lcBranch:
			if !s.branch(ic, l) {
				return s.i
			}
		case l.cat == lcVMovB64 && ic == catVALU:
			if d := int32(I.Stall) + 2; I.Duration < d {
				I.Duration = d
			}
			s.place(l)
		case ic == catImmed && skippable(l.cat) && !(ps.rules.immedSkipsNoSMEM && l.cat == lcSMEM):
			s.place(l)
			skippedImmed++
		case strings.HasPrefix(l.text, "s_waitcnt") && skippedImmed > 0:
			s.place(l)
			skippedImmed--
		case waitOrLoad(l):
			return s.i
		default:
			s.fails++
		}
	}
	return s.consumed()
}

// elaborate is the stitcher's looser match (3.4).
func elaborate(ic, lc uint8) bool {
	return trivial(ic, lc) || lc == lcBranch && ic == catJump || ic == catImmed && skippable(lc)
}

// excludedBarrier is step 9 of the stitch walk (3.5) for gfx12 traces whose
// header says barrier waits may produce no token: it decides whether line
// l, a barrier wait, had no token before instruction i. If so it records
// the gap, marks the cached line (for later waves too) and returns true;
// the walk then tries the same instruction against the next line.
func (c *isaCache) excludedBarrier(w *wave, l, next *line, i int) bool {
	if l.cat != lcBarrierExcl && (l.cat != lcImmed || l.matched || !strings.HasPrefix(l.text, "s_barrier_wait")) {
		return false
	}
	ins := w.insts
	add := true
	if uint8(ins[i].Category) == catImmed {
		L, x, kind := next, i, uint8(0)
		for x < len(ins) && add && L != nil {
			lc, ic := L.cat, uint8(ins[x].Category)
			if lc == lcBranch && ic == catJump {
				L = c.target(L)
			} else {
				L = c.next(L)
			}
			if lc == lcDontKnow || lc == lcSkip {
				x++
				continue
			}
			add = elaborate(ic, lc)
			if ic != catImmed && lc != lcVALU {
				if kind != 0 && kind != lc {
					break
				}
				kind = lc
			}
			x += 2 // the library advances twice per compared pair
		}
	}
	if !add {
		return false
	}
	w.gaps = append(w.gaps, pcInfo{i, l.pc})
	l.cat = lcBarrierExcl
	return true
}

// barrierWait is a synthetic barrier-wait instruction: its time and
// duration, for the timeline split.
type barrierWait struct{ t, d int64 }

// insertBarrierWaits adds an IMMED instruction for every barrier wait the
// stitcher found without a token, and a WAIT segment for it in the
// timeline (3.6).
func insertBarrierWaits(w *wave) {
	in := w.insts
	out := make([]wire.Instruction, 0, len(in)+len(w.gaps))
	var waits []barrierWait
	prev, copied := 0, 0
	for _, g := range w.gaps {
		if g.idx <= prev || g.idx > len(in) {
			continue
		}
		prev = g.idx
		out = append(out, in[copied:g.idx]...)
		copied = g.idx
		t := end(&in[g.idx-1])
		bw := wire.Instruction{Category: wire.CatImmed, Time: t, PC: g.pc}
		if g.idx < len(in) {
			nx := &in[g.idx]
			if nx.Time == t && nx.Duration > 1 {
				nx.Time++
				nx.Duration--
			}
			bw.Duration = int32(nx.Time - t)
		}
		out = append(out, bw)
		waits = append(waits, barrierWait{t, int64(bw.Duration)})
	}
	w.insts = append(out, in[copied:]...)

	tl := make([]wire.WaveState, 0, len(w.timeline)+2*len(waits))
	start, k := w.begin, 0
	for _, seg := range w.timeline {
		segEnd := start + int64(seg.Duration)
		s := start // start of the part of seg not yet written
		for ; k < len(waits) && waits[k].t < segEnd; k++ {
			b := waits[k]
			if b.t < s || b.t+b.d > segEnd {
				// Not covered by this segment, or it is too short. A
				// wait of 0 or fewer cycles is split in too, as 0.1.6
				// does (sqtt-format.md A.4 R7).
				continue
			}
			// The pieces before and after the WAIT are kept even when
			// empty, as AMD's 0.1.6 library keeps them.
			tl = append(tl, wire.WaveState{Type: seg.Type, Duration: int32(b.t - s)})
			tl = append(tl, wire.WaveState{Type: wire.StateWait, Duration: int32(b.d)})
			s = b.t + b.d
		}
		if s == start {
			tl = append(tl, seg)
		} else {
			tl = append(tl, wire.WaveState{Type: seg.Type, Duration: int32(segEnd - s)})
		}
		start = segEnd
	}
	w.timeline = tl
}
