package sqttgen

import (
	"strings"

	"github.com/attkit/attkit/internal/wire"
)

// clsBarrierWaitExcl marks a cached s_barrier_wait line the stitcher found
// without a token (spec §3.2, §3.5 step 9).
const clsBarrierWaitExcl lineClass = 17

// rdnaGap is a barrier wait the stitcher found without a token: the
// instruction index it precedes and its PC (spec §3.5 step 9).
type rdnaGap struct {
	idx int
	pc  wire.PC
}

// skippable is spec §3.4: a line category that may have produced no token
// (SKIP, SMEM, VMEM, FLAT, LDS, VALU, IMMED).
func skippable(c lineClass) bool { return c != clsSALU && c <= clsImmed }

// rstitch assigns PCs to an RDNA wave's instructions as spec §3.5 says
// (the non-gfx9 branches; gfx12 V_MOV_B64 and excluded barrier waits) and
// returns the number of instructions consumed; the excluded waits are in
// m.gaps.
func (m *rdnaModel) rstitch(w *rdnaWave) int {
	m.gaps = m.gaps[:0]
	ins := w.rec.Instructions
	infos := w.pcInfos
	i, k, fails, skipped := 0, 0, 0, 0
	var next *isaLine
	for i < len(ins) && fails < 1000 {
		if i, k = m.anchor(ins, infos, i, k); i >= len(ins) {
			return i
		}
		I := &ins[i]
		if I.Category == wire.CatContext {
			i++
			continue
		}
		if I.PC != (wire.PC{}) {
			i++
			line := m.known(I)
			if line == nil {
				return 0
			}
			next = m.after(line, I.Category)
			continue
		}
		if m.gen >= 12 && i == 0 {
			if l := m.line(wire.PC{}); l == nil || l.text == "" {
				return 0
			}
		}
		line := next
		next = nil
		if line == nil || line.text == "" {
			return i
		}
		next = m.line(line.next)
		if line.cls == clsDontKnow || line.cls == clsSkip {
			continue
		}
		if m.exclBW && (line.cls == clsBarrierWaitExcl ||
			line.cls == clsImmed && strings.HasPrefix(line.text, "s_barrier_wait") && !line.matched) {
			add := I.Category != wire.CatImmed
			if !add {
				add = m.waitHadNoToken(ins, i, next)
				if add {
					m.lookahead[0]++
				} else {
					m.lookahead[1]++
				}
			}
			if add {
				m.gaps = append(m.gaps, rdnaGap{i, line.pc})
				line.cls = clsBarrierWaitExcl
				continue
			}
		}
		matched := false
		switch {
		case trivial(I.Category, line.cls):
			matched = true
		case line.cls == clsBranch:
			if I.Category != wire.CatJump {
				return i
			}
			next = m.line(line.target)
			matched = true
		case m.gen >= 12 && line.cls == clsVMovB64 && I.Category == wire.CatVALU:
			I.Duration = max(I.Duration, int32(I.Stall)+2)
			matched = true
		case I.Category == wire.CatImmed && skippable(line.cls) && !(m.compat016 && line.cls == clsSMEM):
			// (0.1.6 does not take an SMEM line as skippable here)
			matched = true
			skipped++
		case strings.HasPrefix(line.text, "s_waitcnt") && skipped > 0:
			matched = true
			skipped--
		case strings.HasPrefix(line.text, "s_waitcnt") ||
			strings.Contains(line.text, "_load_") && !strings.Contains(line.text, "scratch_"):
			return i
		}
		if matched {
			I.PC = line.pc
			line.matched = true
			i++
			fails = 0
		} else {
			fails++
		}
	}
	return i
}

// elaborate is the stitcher's elaborate match (spec §3.4).
func elaborate(c wire.InstCategory, l lineClass) bool {
	return trivial(c, l) || l == clsBranch && c == wire.CatJump || c == wire.CatImmed && skippable(l)
}

// waitHadNoToken is the look-ahead of spec §3.5 step 9 for an IMMED
// instruction i met at a barrier wait line whose next line is L: it
// compares the following lines with the instructions from i on (two
// instructions per compared pair, as upstream does) and says whether the
// wait produced no token.
func (m *rdnaModel) waitHadNoToken(ins []wire.Instruction, i int, L *isaLine) bool {
	add := true
	var kind lineClass
	for x := i; x < len(ins) && add && L != nil; {
		lc, ic := L.cls, ins[x].Category
		L = m.after(L, ic)
		if lc == clsDontKnow || lc == clsSkip {
			x++
			continue
		}
		add = elaborate(ic, lc)
		if ic != wire.CatImmed && lc != clsVALU {
			if kind != 0 && kind != lc {
				break
			}
			kind = lc
		}
		x += 2
	}
	return add
}

// insertGaps adds the IMMED instructions of the excluded barrier waits
// (spec §3.6): each from the end of the instruction before it to the
// start of the one after it (delayed by a cycle when it starts right
// there and lasts longer), and a WAIT segment of that length split into
// the timeline segment covering its time when that one is long enough.
func (w *rdnaWave) insertGaps(gaps []rdnaGap) {
	ins, noted := w.rec.Instructions, w.noted
	var out []wire.Instruction
	var outN []wire.PC
	type split struct{ t, d int64 }
	var splits []split
	prev, copied := 0, 0
	for _, g := range gaps {
		if g.idx <= prev || g.idx > len(ins) {
			continue
		}
		out = append(out, ins[copied:g.idx]...)
		outN = append(outN, noted[copied:g.idx]...)
		copied = g.idx
		T := iend(&ins[g.idx-1])
		in := wire.Instruction{Category: wire.CatImmed, Time: T, PC: g.pc}
		if g.idx < len(ins) {
			nx := &ins[g.idx]
			if nx.Time == T && nx.Duration > 1 {
				nx.Time++
				nx.Duration--
			}
			in.Duration = int32(nx.Time - T)
		}
		out = append(out, in)
		outN = append(outN, g.pc)
		splits = append(splits, split{T, int64(in.Duration)})
		prev = g.idx
	}
	if len(splits) == 0 {
		return
	}
	w.rec.Instructions = append(out, ins[copied:]...)
	w.noted = append(outN, noted[copied:]...)
	var tl []wire.WaveState
	start, si := w.rec.BeginTime, 0
	for _, seg := range w.rec.Timeline {
		end := start + int64(seg.Duration)
		cur := start
		for si < len(splits) && splits[si].t < end {
			sp := splits[si]
			si++
			if sp.t < cur || end-sp.t < sp.d {
				continue
			}
			tl = append(tl, wire.WaveState{Type: seg.Type, Duration: int32(sp.t - cur)},
				wire.WaveState{Type: wire.StateWait, Duration: int32(sp.d)})
			cur = sp.t + sp.d
		}
		// Empty pieces before and after the WAIT are kept, as AMD's
		// 0.1.6 library does (sqtt-format.md A.4 R7).
		tl = append(tl, wire.WaveState{Type: seg.Type, Duration: int32(end - cur)})
		start = end
	}
	w.rec.Timeline = tl
}
