package sqtt

import (
	"errors"
	"sort"
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
	lastOfType                 [17]int
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
}

// reset prepares w (possibly recycled) for a new wave, keeping capacity.
func (w *wave) reset() {
	*w = wave{
		insts:       w.insts[:0],
		timeline:    w.timeline[:0],
		issued:      w.issued[:0],
		stallStarts: w.stallStarts[:0],
		pcInfos:     w.pcInfos[:0],
		gaps:        w.gaps[:0],
	}
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

// errNoLineAfter016 is how AMD's 0.1.6 library fails a gfx9 stitch whose
// swap rescue (3.5 step 10) needs the line after the current one and the
// ISA callback does not know it (A.4 item 8.9).
var errNoLineAfter016 = errors.New("the stitcher needs the line after the last one the ISA callback knows")

// stitch assigns PCs to the wave's instructions (3.5) and returns the
// number of instructions consumed; under Compat Lib016 it fails with
// errNoLineAfter016 where 0.1.6 fails.
func (ps *parseState) stitch(w *wave) (int, error) {
	c := ps.cache
	gfx9, gfx12 := c.gfxip == 9, c.gfxip >= 12
	ins := w.insts
	n := len(ins)
	pcs := w.pcInfos
	if !sort.SliceIsSorted(pcs, func(a, b int) bool { return pcs[a].idx < pcs[b].idx }) {
		sort.SliceStable(pcs, func(a, b int) bool { return pcs[a].idx < pcs[b].idx })
	}
	i, k, fails, skippedImmed := 0, 0, 0, 0
	var next *line
	fast := !w.exclBarrier
	for i < n && fails < maxStitchFails {
		// The usual step first, as steps 1 to 10 take it: no pc_info at
		// i, no PC, no CONTEXT, a known next line with a token that
		// matches trivially.
		for fast && next != nil && (i > 0 || !gfx12) && (k >= len(pcs) || pcs[k].idx > i) {
			I, l := &ins[i], next
			ic := uint8(I.Category)
			if ic == catContext || ic == catUnfinished || I.PC != (wire.PC{}) || l.text == "" ||
				l.cat == lcDontKnow || l.cat == lcSkip || !trivial(ic, l.cat) {
				break
			}
			next = c.next(l)
			I.PC = l.pc
			fails = 0
			l.matched = true
			if i++; i == n {
				return i, nil
			}
		}
		// 1. Apply pc_infos.
		for k < len(pcs) && pcs[k].idx <= i {
			if pcs[k].idx == i {
				if c.lookup(pcs[k].pc) != nil {
					ins[i].PC = pcs[k].pc
				} else if k+1 < len(pcs) {
					i = pcs[k+1].idx
					if i >= n {
						return i, nil
					}
				}
			}
			k++
		}
		I := &ins[i]
		// 3. Trap or context switch.
		if I.Category == wire.CatContext {
			i++
			continue
		}
		// 4. A known PC re-seeds the walk.
		if I.PC != (wire.PC{}) {
			i++
			l := c.lookup(I.PC)
			if l == nil {
				return 0, nil
			}
			for l.cat == lcSkip {
				I.PC = l.nextPC
				if l = c.next(l); l == nil {
					return 0, nil
				}
			}
			if l.cat == lcGFX9Barrier && i < n && !ps.old {
				ins[i].PC = I.PC
				i++
			}
			if l.cat == lcBranch && uint8(I.Category) == catJump {
				next = c.target(l)
			} else {
				next = c.next(l)
			}
			continue
		}
		// 5. (gfx12) The first instruction has no PC.
		if i == 0 && c.gfxip >= 12 {
			if l := c.lookup(wire.PC{}); l == nil || l.text == "" {
				break
			}
		}
		// 6, 7. Walk on.
		l := next
		next = nil
		if l == nil || l.text == "" || uint8(I.Category) == catUnfinished {
			break
		}
		next = c.next(l)
		// 8. Lines without a token.
		if l.cat == lcDontKnow || l.cat == lcSkip {
			continue
		}
		// 9. (gfx12) A barrier wait the hardware may not have reported.
		if w.exclBarrier && c.excludedBarrier(w, l, next, i) {
			continue
		}
		// 10. Match.
		ic := uint8(I.Category)
		matched, stop := false, false
		switch {
		case trivial(ic, l.cat):
			matched = true
		case l.cat == lcBranch:
			if ic != catJump {
				stop = true
				break
			}
			next = c.target(l)
			matched = true
		case !gfx9 && l.cat == lcVMovB64 && ic == catVALU:
			if d := int32(I.Stall) + 2; I.Duration < d {
				I.Duration = d
			}
			matched = true
		case gfx9 && l.cat == lcMFMAScale && ic == catVALU:
			mfmaScale(w, i)
			matched = true
		case gfx9 && l.cat == lcGFX9Barrier && ic == catMessage:
			// Barrier entry and exit: the IMMED that follows shares the
			// PC. i moves past the next instruction whatever it is, as the
			// specification words it (a MESSAGE last in the list thus
			// leaves the wave's stitch incomplete).
			i++
			if i < n && uint8(ins[i].Category) == catImmed {
				ins[i].PC = l.pc
			}
			matched = true
		case gfx9 && l.cat == lcGFX9Barrier:
			matched = ic == catImmed
		case gfx9 && ps.old && i+1 < n && next == nil && uint8(ins[i+1].Category) == l.cat:
			// 0.1.6 looks up the line after l to try the swap below,
			// and fails when it cannot.
			return i, errNoLineAfter016
		case gfx9 && i+1 < n && next != nil && uint8(ins[i+1].Category) == l.cat && ic == next.cat:
			ins[i], ins[i+1] = ins[i+1], ins[i]
			next = l
			fails++
			continue
		case !gfx9 && ic == catImmed && skippable(l.cat) && !(ps.old && l.cat == lcSMEM):
			// (0.1.6 does not skip SMEM lines for an IMMED: A.4 item 7.9.)
			matched = true
			skippedImmed++
		case strings.HasPrefix(l.text, "s_waitcnt") && skippedImmed > 0:
			matched = true
			skippedImmed--
		case strings.HasPrefix(l.text, "s_waitcnt") ||
			strings.Contains(l.text, "_load_") && !strings.Contains(l.text, "scratch_"):
			stop = true
		}
		if stop {
			break
		}
		if matched {
			I.PC = l.pc
			i++
			fails = 0
			l.matched = true
		} else {
			fails++
		}
	}
	return i, nil
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

// finishWave stitches w, raises the infos it calls for and emits its WAVE
// record (3.5 "after the loop", 4.3).
func (ps *parseState) finishWave(w *wave) error {
	consumed, err := ps.stitch(w)
	if err != nil {
		return err
	}
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
	for i := range w.insts {
		w.insts[i].Stall &= 0xFFFFFF
		if ps.old && uint8(w.insts[i].Category) == catUnfinished {
			// As 0.1.6 reports them (A.4 item 8.2): category 16 when the
			// stitcher gave the entry a PC, else NONE.
			w.insts[i].Category = wire.CatNone
			if w.insts[i].PC != (wire.PC{}) {
				w.insts[i].Category = cat016Unfinished
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
