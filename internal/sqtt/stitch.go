package sqtt

import (
	"cmp"
	"slices"
	"strings"

	"github.com/attkit/attkit/internal/wire"
)

// Trap states of a wave (2.2.5).
const (
	trapRestored = iota
	trapRequest
	trapStandby
	trapWaitNewPC
)

// pcInfo says that instruction idx starts at pc (3.5).
type pcInfo struct {
	idx int
	pc  wire.PC
}

// wave is the decoder's state of one traced wave.
type wave struct {
	// begin and end: the wave's first and last times. end is read once
	// the wave has ended (finishWave), so an RDNA wave sets it at its
	// WAVE_END only (rwave.complete), not at each instruction.
	begin, end                 int64
	ended                      bool
	cu, simd, id, me, pipe, wg uint8
	contexts                   int
	insts                      []wire.Instruction
	timeline                   []wire.WaveState
	curState                   wire.WaveStateType
	stateStart                 int64
	issued                     []int // FIFO of issued, unresolved instruction indices
	issuedHead                 int
	stallStarts                []int64 // FIFO of ISSUE STALL times
	stallHead                  int
	pcInfos                    []pcInfo
	trap                       int
	trapping                   bool
	lastOfType                 [32]int  // by INST type: 1 + the index of the last entry
	exclBarrier                bool     // gfx12 header bit 59: barrier waits may have no token
	gaps                       []pcInfo // barrier waits found without a token (3.5 step 9)
	// lastNone is the time of the wave's last RDNA INST token of a code
	// without a category (Lib016): it ends an incomplete wave no
	// earlier (A.4 item 7.15).
	lastNone int64
	// msg016 says the wave resolved an OTHER_MSG (Lib016), the last
	// of them at msgTime: 0.1.6 deletes the entry but keeps its time
	// (programEnd016, A.4 items 8.3 and 8.8).
	msg016  bool
	msgTime int64
	// lastSeg is one more than the state of the last timeline segment
	// mergeTimeline (RDNA) added to, 0 on an empty timeline: its test
	// for a merge reads no slice.
	lastSeg wire.WaveStateType
}

// reset prepares w (possibly recycled) for a new wave, keeping capacity.
// It zeroes w in place and puts the slices back (a composite literal of
// them was built on the stack, then copied into w).
func (w *wave) reset() {
	insts, timeline, issued, stallStarts, pcInfos, gaps := w.insts[:0], w.timeline[:0], w.issued[:0],
		w.stallStarts[:0], w.pcInfos[:0], w.gaps[:0]
	*w = wave{}
	w.insts, w.timeline, w.issued, w.stallStarts, w.pcInfos, w.gaps = insts, timeline, issued,
		stallStarts, pcInfos, gaps
}

func end(in *wire.Instruction) int64 { return in.Time + int64(in.Duration) }

// addTimeline adds d cycles of state s, merging into the last segment when
// it has the same state.
func (w *wave) addTimeline(s wire.WaveStateType, d int64) {
	if n := len(w.timeline); n > 0 && w.timeline[n-1].Type == s {
		w.timeline[n-1].Duration += int32(d)
		return
	}
	w.timeline = append(w.timeline, wire.WaveState{Type: s, Duration: int32(d)})
}

// setPC applies the PC of an INST_PC (gfx9) or NEW_PC (RDNA) token: it
// goes to the pc_info after the last one with a PC, a new one for the next
// instruction when there is none.
func (w *wave) setPC(pc wire.PC) {
	p := 0
	for i := len(w.pcInfos) - 1; i >= 0; i-- {
		if w.pcInfos[i].pc != (wire.PC{}) {
			p = i + 1
			break
		}
	}
	if p == len(w.pcInfos) {
		w.pcInfos = append(w.pcInfos, pcInfo{idx: len(w.insts)})
	}
	w.pcInfos[p].pc = pc
}

// retranslate attributes the wave's unattributed PCs through the "from
// start" table (2.1.3).
func (w *wave) retranslate(t *codeTables) {
	if len(t.fromStart.r) == 0 {
		return
	}
	for i := range w.pcInfos {
		w.pcInfos[i].pc = t.late(w.pcInfos[i].pc)
	}
}

// walk is one stitch walk (3.5) over a wave's instructions: the steps
// every family takes (the usual step, steps 1 to 4 and 6 to 8) as
// methods, driven by the family stitchers, stitchGFX9 (gfx9_stitch.go)
// and stitchRDNA (rdna_stitch.go), which add their own steps and match
// (step 10).
type walk struct {
	c     *isaCache
	ins   []wire.Instruction
	pcs   []pcInfo // sorted by idx
	i, k  int      // the instruction to place, the next pc_info
	fails int      // failed matches in a row
	next  *line    // the line expected next, nil when unknown
	// lost says a known PC led out of the known code (step 4): the walk
	// ends having consumed nothing.
	lost bool
	// pairBarrier is the gfx9 rule of step 4: an s_barrier at a known PC
	// gives its PC to the instruction after it too.
	pairBarrier bool
}

// newWalk starts a walk over w, its pc_infos sorted.
func newWalk(c *isaCache, w *wave) walk {
	pcs := w.pcInfos
	byIdx := func(a, b pcInfo) int { return cmp.Compare(a.idx, b.idx) }
	if !slices.IsSortedFunc(pcs, byIdx) {
		slices.SortStableFunc(pcs, byIdx)
	}
	return walk{c: c, ins: w.insts, pcs: pcs}
}

// running reports whether the walk goes on.
func (s *walk) running() bool { return !s.lost && s.i < len(s.ins) && s.fails < maxStitchFails }

// consumed is the walk's result: the number of instructions consumed.
func (s *walk) consumed() int {
	if s.lost {
		return 0
	}
	return s.i
}

// usual takes the usual step as long as it applies, as steps 1 to 10
// would take it: no pc_info at i, no PC, no CONTEXT, a known next line
// with a token that matches trivially, or a branch line and a JUMP (which
// goes on at the branch's target). It reports whether instructions are
// left. usualRun takes the steps whose next line is resolved already;
// usual resolves the others (isaCache.next and target) and goes on.
func (s *walk) usual() bool {
	ins, i, next := s.ins, s.i, s.next
	limit := len(ins)
	if s.k < len(s.pcs) && s.pcs[s.k].idx < limit {
		limit = s.pcs[s.k].idx
	}
	start := i
run:
	for i < limit {
		if i, next = usualRun(ins[:limit], i, next); i >= limit || next == nil {
			break
		}
		I, l := &ins[i], next
		ic := uint8(I.Category)
		if I.PC != (wire.PC{}) {
			break
		}
		switch {
		case l.usual>>ic&1 != 0:
			next = s.c.next(l)
		case l.cat == lcBranch && ic == catJump:
			next = s.c.target(l)
		default:
			break run
		}
		I.PC = l.pc
		l.matched = true
		i++
	}
	if i > start {
		s.fails = 0
	}
	s.i, s.next = i, next
	return i < len(ins)
}

// usualRun is usual's loop over the steps whose next line is resolved
// to a line (line.run, or a JUMP at a branch line whose target is
// known): from instruction i of ins on, it gives each instruction the
// line expected next (next, nil when unknown) and returns where it
// stopped and the line expected there. It also passes a line without a
// token (line.pass) as steps 1 to 8 would, before an instruction that is
// neither CONTEXT nor unfinished (known and take, from usual's caller,
// then do nothing but move to the next line). It makes no call: kept out
// of line, a leaf, it holds its values in registers, which the calls that
// resolve lines made usual's loop keep on the stack.
//
//go:noinline
func usualRun(ins []wire.Instruction, i int, next *line) (int, *line) {
	if next == nil || i >= len(ins) {
		return i, next
	}
	rest := ins[i:]
	j := 0
	for j < len(rest) {
		I, l := &rest[j], next
		if I.PC.Address|I.PC.CodeObjectID != 0 {
			break
		}
		ic := uint8(I.Category)
		// Categories are below 64 (wire.InstCategory's go up to 16), so
		// ic&63 is ic: the mask spares the shift the test of a count
		// past its width.
		if uint64(l.run)>>(ic&63)&1 != 0 {
			next = l.next
		} else if l.target != nil && ic == catJump && l.cat == lcBranch {
			next = l.target
		} else if l.pass && ic != catContext && ic != catUnfinished {
			next = l.next // the instruction stays
			continue
		} else {
			break
		}
		I.PC = l.pc
		l.matched = true
		j++
	}
	return i + j, next
}

// known takes steps 1, 3 and 4: it applies the pc_infos at i, then
// passes a CONTEXT instruction or re-seeds the walk at a known PC. It
// reports whether it took the step for instruction i (the walk then goes
// on or ended, see running).
func (s *walk) known() bool {
	ins, pcs, n := s.ins, s.pcs, len(s.ins)
	// 1. Apply pc_infos.
	for ; s.k < len(pcs) && pcs[s.k].idx <= s.i; s.k++ {
		if pcs[s.k].idx != s.i {
			continue
		}
		if s.c.lookup(pcs[s.k].pc) != nil {
			ins[s.i].PC = pcs[s.k].pc
		} else if s.k+1 < len(pcs) {
			if s.i = pcs[s.k+1].idx; s.i >= n {
				return true
			}
		}
	}
	I := &ins[s.i]
	// 3. Trap or context switch.
	if I.Category == wire.CatContext {
		s.i++
		return true
	}
	// 4. A known PC re-seeds the walk.
	if I.PC == (wire.PC{}) {
		return false
	}
	s.i++
	l := s.c.lookup(I.PC)
	for l != nil && l.cat == lcSkip {
		I.PC = l.nextPC
		l = s.c.next(l)
	}
	if l == nil {
		s.lost = true
		return true
	}
	if s.pairBarrier && l.cat == lcGFX9Barrier && s.i < n {
		ins[s.i].PC = I.PC
		s.i++
	}
	if l.cat == lcBranch && uint8(I.Category) == catJump {
		s.next = s.c.target(l)
	} else {
		s.next = s.c.next(l)
	}
	return true
}

// take is steps 6 to 8: it moves the walk past the expected line and
// returns it, nil for a line without a token (step 8; the walk goes on).
// It reports false when the walk ends there: no line is known, or
// instruction i is unfinished.
func (s *walk) take() (*line, bool) {
	l := s.next
	s.next = nil
	if l == nil || l.text == "" || uint8(s.ins[s.i].Category) == catUnfinished {
		return nil, false
	}
	s.next = s.c.next(l)
	if l.cat == lcDontKnow || l.cat == lcSkip {
		return nil, true
	}
	return l, true
}

// place gives instruction i line l's PC and moves on (step 10, a match).
func (s *walk) place(l *line) {
	s.ins[s.i].PC = l.pc
	s.i++
	s.fails = 0
	l.matched = true
}

// branch is the match of a branch line (step 10): only a JUMP or NEXT
// instruction takes it, a JUMP going on at its target. It reports false
// when the walk ends there.
func (s *walk) branch(ic uint8, l *line) bool {
	if ic != catJump {
		return false
	}
	s.next = s.c.target(l)
	s.place(l)
	return true
}

// waitOrLoad reports whether line l ends the walk when no match takes
// it (step 10): an s_waitcnt, or a load other than scratch.
func waitOrLoad(l *line) bool {
	return strings.HasPrefix(l.text, "s_waitcnt") ||
		strings.Contains(l.text, "_load_") && !strings.Contains(l.text, "scratch_")
}

func trivial(ic, lc uint8) bool {
	return ic == lc || lc == lcBranch && ic == catNext || ic == catMessage && lc == lcImmed ||
		ic == catFLAT && lc == lcVMEM
}

func skippable(lc uint8) bool { return lc != lcSALU && lc <= lcImmed }

// mfmaScale applies the gfx9 v_mfma_scale_* timing correction (3.5 step 10).
func mfmaScale(w *wave, i int) {
	ins := w.insts
	I := &ins[i]
	I.Duration += 4
	prevEnd := w.begin
	if i > 0 {
		prevEnd = end(&ins[i-1])
	}
	nextTime := w.end
	if i+1 < len(ins) {
		nextTime = ins[i+1].Time
	}
	if I.Time > prevEnd {
		I.Time -= 4
		if end(I) < nextTime {
			I.Duration += 4
		}
	} else if end(I) > nextTime {
		I.Duration -= 4
	}
}

// maskStalls keeps the 24 bits of each entry's Stall that the C struct
// holds. Four entries a turn, the loop's own work shared by four; the last
// one to three entries are masked as part of the last four, again for
// some (masking twice is masking once), so that no loop of 0 to 3 turns
// follows (its exit was mispredicted often).
func maskStalls(ins []wire.Instruction) {
	n := len(ins)
	if n < 4 {
		for i := range ins {
			ins[i].Stall &= 0xFFFFFF
		}
		return
	}
	for rest := ins; len(rest) >= 4; rest = rest[4:] {
		q := (*[4]wire.Instruction)(rest)
		q[0].Stall &= 0xFFFFFF
		q[1].Stall &= 0xFFFFFF
		q[2].Stall &= 0xFFFFFF
		q[3].Stall &= 0xFFFFFF
	}
	q := (*[4]wire.Instruction)(ins[n-4:])
	q[0].Stall &= 0xFFFFFF
	q[1].Stall &= 0xFFFFFF
	q[2].Stall &= 0xFFFFFF
	q[3].Stall &= 0xFFFFFF
}

// finishWave raises the infos w calls for, w stitched with consumed of
// its instructions consumed, and emits its WAVE record (3.5 "after the
// loop", 4.3).
func (ps *parseState) finishWave(w *wave, consumed int) error {
	switch {
	case !w.ended && !w.trapping:
		if !ps.sentIncomplete {
			ps.sentIncomplete = true
			if err := ps.em.infoRec(wire.InfoWaveIncomplete); err != nil {
				return err
			}
		}
	case consumed != len(w.insts) && len(w.pcInfos) > 0 && w.pcInfos[0].pc.CodeObjectID != 0:
		if !ps.sentStitch {
			ps.sentStitch = true
			if err := ps.em.infoRec(wire.InfoStitchIncomplete); err != nil {
				return err
			}
		}
	}
	if w.exclBarrier && len(w.gaps) > 0 {
		insertBarrierWaits(w)
	}
	endTime := w.end
	if !w.ended {
		endTime = w.lastNone
		for i := range w.insts {
			if e := end(&w.insts[i]) + 4; e > endTime {
				endTime = e
			}
		}
	}
	ins := w.insts
	maskStalls(ins)
	if ps.rules.placeholderNone {
		for i := range ins {
			if uint8(ins[i].Category) == catUnfinished {
				// As 0.1.6 reports them (A.4 item 8.2): category 16 when
				// the stitcher gave the entry a PC, else NONE.
				ins[i].Category = wire.CatNone
				if ins[i].PC != (wire.PC{}) {
					ins[i].Category = cat016Unfinished
				}
			}
		}
	}
	return ps.em.waveRec(wire.Wave{
		CU: w.cu, SIMD: w.simd, WaveID: w.id,
		Contexts:    uint8(w.contexts),
		Dispatcher:  w.pipe&15 | (w.me&7)<<4,
		WorkgroupID: w.wg,
		Size:        64,
		BeginTime:   w.begin, EndTime: endTime,
		Timeline: w.timeline, Instructions: w.insts,
	})
}
