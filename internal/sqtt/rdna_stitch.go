package sqtt

import (
	"strings"

	"github.com/attkit/attkit/internal/wire"
)

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
	old := w.insts
	out := make([]wire.Instruction, 0, len(old)+len(w.gaps))
	var waits []barrierWait
	prev, copied := 0, 0
	for _, g := range w.gaps {
		if g.idx <= prev || g.idx > len(old) {
			continue
		}
		prev = g.idx
		out = append(out, old[copied:g.idx]...)
		copied = g.idx
		t := end(&old[g.idx-1])
		bw := wire.Instruction{Category: wire.CatImmed, Time: t, PC: g.pc}
		if g.idx < len(old) {
			nx := &old[g.idx]
			if nx.Time == t && nx.Duration > 1 {
				nx.Time++
				nx.Duration--
			}
			bw.Duration = int32(nx.Time - t)
		}
		out = append(out, bw)
		waits = append(waits, barrierWait{t, int64(bw.Duration)})
	}
	w.insts = append(out, old[copied:]...)

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
