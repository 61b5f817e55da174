package sqttgen

import (
	"fmt"
	"sort"

	"github.com/attkit/attkit/internal/wire"
)

// The model turns the tokens the encoder writes into the records a decoder
// that follows the specification emits, in callback order (spec §4.3). It
// implements the gfx9 semantics of §2.1 and §2.2.6 for the token kinds the
// generator writes. PCs of instructions are not stitched from the text: they
// are the PCs the simulated waves executed, noted on each ISSUE.

type trapState uint8

const (
	trapRestored trapState = iota
	trapRequest
	trapStandby
	trapWaitNewPC
)

const catPlaceholder = wire.CatUnresolved

// modelWave is the model's state of one traced wave (spec §2.2.5).
type modelWave struct {
	rec        wire.Wave
	ended      bool
	lost       bool // started by an INST token, no start PC
	cur        wire.WaveStateType
	stateStart int64
	issued     []int
	stalls     []int64
	trap       trapState
	trapping   bool
	lastOfType [17]int
	pcInfos    []pcInfo
	// msg016 says the wave resolved an OTHER_MSG under the 0.1.6
	// model, the last of them issued at msgTime: 0.1.6 deletes the
	// entry but keeps its time (spec A.4 items 8.3 and 8.8).
	msg016  bool
	msgTime int64
}

// pcInfo anchors the stitcher: instruction idx is at pc.
type pcInfo struct {
	idx int
	pc  wire.PC
}

// notePC gives pc (of a gfx9 INST_PC or an RDNA NEW_PC token) to the first
// placeholder after the last anchor with a PC, or else anchors instruction
// idx at pc.
func notePC(infos []pcInfo, idx int, pc wire.PC) []pcInfo {
	last := -1
	for n := range infos {
		if infos[n].pc != (wire.PC{}) {
			last = n
		}
	}
	if last+1 < len(infos) {
		infos[last+1].pc = pc
		return infos
	}
	return append(infos, pcInfo{idx: idx, pc: pc})
}

type coRange struct {
	addr, size, id uint64
}

type cuBank struct{ cu, bank uint8 }

// model holds the decoder state of one buffer.
type model struct {
	recOut

	hdr      Header
	haveHdr  bool
	phase    int64
	waves    [4][10][]*modelWave
	running  map[uint32]wire.PC
	occ      []wire.Occupancy
	sdata    []wire.ShaderData
	rt       []wire.Realtime
	perfRecs []wire.PerfEvent
	perfLast map[cuBank]int64
	perfSeen []cuBank
	dataLost bool

	cpState

	rtLeft, rtOp, rtIdx int
	rtLow, rtHi, rtNow  uint32

	isaLines
	// checkWalk makes emitWave compare the stitched PCs with the PCs the
	// generator noted, and report a disagreement to fail.
	checkWalk bool
	// v016 models the 0.1.6 library where it differs from the newest
	// source (spec A.3 items 1 and 2; item 5, the record layouts, is
	// Normalize016's).
	v016 bool
}

func newModel(out func(*wire.Batch)) *model {
	return &model{recOut: recOut{out: out}, isaLines: isaLines{classify: classify}, phase: 15, running: map[uint32]wire.PC{}, perfLast: map[cuBank]int64{}, cpState: cpState{udWait: -1}}
}

// recOut is where a model's records go: out takes them, fail the internal
// errors of the model.
type recOut struct {
	out  func(*wire.Batch)
	fail func(error)
	// WAVE_INCOMPLETE and STITCH_INCOMPLETE are reported once per buffer.
	waveIncSent, stitchSent bool
}

func (o *recOut) emit(b *wire.Batch) { o.out(b) }

func (o *recOut) failf(format string, a ...any) {
	if o.fail != nil {
		o.fail(fmt.Errorf(format, a...))
	}
}

func (o *recOut) event(t int64, typ wire.EventType, me, pipe uint8, flags uint16, payload uint64) {
	o.emit(&wire.Batch{Type: wire.TypeEvent, Events: []wire.Event{{
		Size: 40, Time: t, Type: typ, MEID: me, PipeID: pipe, Flags: flags, Payload: payload}}})
}

// waveInfo reports the first incomplete wave, or else the first wave the
// stitcher left after n of its total instructions though its first anchor
// is attributed to a code object.
func (o *recOut) waveInfo(incomplete bool, n, total int, infos []pcInfo) {
	switch {
	case incomplete:
		if !o.waveIncSent {
			o.waveIncSent = true
			o.emit(&wire.Batch{Type: wire.TypeInfo, Info: []wire.Info{wire.InfoWaveIncomplete}})
		}
	case n != total && len(infos) > 0 && infos[0].pc.CodeObjectID != 0:
		if !o.stitchSent {
			o.stitchSent = true
			o.emit(&wire.Batch{Type: wire.TypeInfo, Info: []wire.Info{wire.InfoStitchIncomplete}})
		}
	}
}

func (m *model) header(h Header) {
	m.hdr, m.haveHdr = h, true
	m.emit(&wire.Batch{Type: wire.TypeGFXIP, GFXIP: 9})
}

func translateIn(t []coRange, addr uint64) wire.PC {
	for _, r := range t {
		if r.addr <= addr && addr < r.addr+r.size {
			return wire.PC{Address: addr - r.addr, CodeObjectID: r.id}
		}
	}
	return wire.PC{Address: addr}
}

func (m *model) top(simd, slot uint8) *modelWave {
	s := m.waves[simd&3][slot]
	if len(s) == 0 {
		return nil
	}
	return s[len(s)-1]
}

func (m *model) misc(t int64, typ int) {
	switch typ {
	case miscPacketLost:
		m.dataLost = true
		m.event(t, wire.EventPacketLoss, 0, 0, 0, 0)
	case miscTTStallBeg:
		m.event(t, wire.EventTTStallBegin, 0, 0, 0, 0)
	case miscTTStallEnd:
		m.event(t, wire.EventTTStallEnd, 0, 0, 0, 0)
	case miscSaveContext:
		m.event(t, wire.EventSaveContext, 0, 0, 0, 0)
		for simd := range m.waves {
			for slot := range m.waves[simd] {
				if w := m.top(uint8(simd), uint8(slot)); w != nil && !w.ended {
					w.trap = trapRequest
				}
			}
		}
	}
}

func occKey(cu, simd, wave uint8) uint32 {
	return uint32(wave) | uint32(simd)<<5 | uint32(cu)<<7
}

func (m *model) waveStart(t int64, sh, cu, simd, slot, me, pipe, count, tg uint8) {
	pc := m.translate(m.startPC(me, pipe))
	if cu == m.hdr.TargetCU && sh == 0 {
		w := m.top(simd, slot)
		if count > 64 {
			if w == nil {
				return
			}
			switch w.trap {
			case trapRequest:
				if w.rec.Contexts < 255 {
					w.rec.Contexts++
				}
				w.trap = trapStandby
				w.rec.Instructions = append(w.rec.Instructions, wire.Instruction{
					Time: t, Category: wire.CatContext, Duration: 4})
				w.trapping = true
			case trapStandby:
				w.trap = trapWaitNewPC
			}
			return
		}
		if w == nil || w.ended {
			nw := &modelWave{cur: wire.StateIdle, stateStart: t}
			if pc != (wire.PC{}) {
				nw.pcInfos = []pcInfo{{0, pc}}
			}
			nw.rec = wire.Wave{CU: cu, SIMD: simd, WaveID: slot, Dispatcher: pipe&0xF | (me&7)<<4,
				WorkgroupID: count, Size: 64, BeginTime: t}
			m.waves[simd][slot] = append(m.waves[simd][slot], nw)
		}
	}
	k := occKey(cu, simd, slot)
	if _, ok := m.running[k]; ok {
		m.running[k] = pc
		return
	}
	m.running[k] = pc
	m.occ = append(m.occ, wire.Occupancy{PC: pc, Time: uint64(t), CU: cu, SIMD: simd, WaveID: slot,
		Start: true, MEID: me, PipeID: pipe, IsExt: true, WorkgroupID: tg})
}

func (m *model) waveEnd(t int64, sh, cu, simd, slot uint8) {
	if cu == m.hdr.TargetCU && sh == 0 {
		w := m.top(simd, slot)
		if w == nil || w.trap != trapRestored {
			return
		}
		if m.v016 {
			m.programEnd016(w)
		}
		m.complete(w, t)
		m.emitWave(w)
		s := m.waves[simd][slot]
		m.waves[simd][slot] = s[:len(s)-1]
	}
	k := occKey(cu, simd, slot)
	if pc, ok := m.running[k]; ok {
		delete(m.running, k)
		pc = m.retranslate(pc)
		m.occ = append(m.occ, wire.Occupancy{PC: pc, Time: uint64(t), CU: cu, SIMD: simd, WaveID: slot,
			IsExt: true})
	} else if !m.dataLost {
		// Spec §2.2.6 WAVE_END step 2: a synthetic START and END at time 0.
		m.occ = append([]wire.Occupancy{{CU: cu, SIMD: simd, WaveID: slot, Start: true, IsExt: true}}, m.occ...)
		m.occ = append(m.occ, wire.Occupancy{CU: cu, SIMD: simd, WaveID: slot, IsExt: true})
	}
	if m.hdr.DoubleBuffer && len(m.occ) >= 65536 {
		m.flushOcc()
	}
}

// programEnd016 brings back, at the WAVE_END, the last OTHER_MSG the
// 0.1.6 model deleted (EndpgmMessage; spec §2.2.4, "OTHER_MSG on real
// hardware", proved by the real trace gfx950_gemm_0; A.4 item 8.8): after
// the last entry when it issued (at T) later than that entry, as a
// MESSAGE from that entry's end p, untrimmed ({p, T + 4 - p}, negative
// when the entry ends after T), or from the last unconsumed ISSUE stall
// when that started before T but not before p ({s, T + 4 - s, stall
// T - s}). The last timeline segment loses T - start (grows when that is
// negative), and the timeline waits (stalls) through the message.
func (m *model) programEnd016(w *modelWave) {
	ins := w.rec.Instructions
	n := len(ins)
	if !w.msg016 || n == 0 || ins[n-1].Time >= w.msgTime {
		// No message, the message was the only entry, or it issued
		// with the entry before it: dropped like other OTHER_MSGs
		// (TestLibrary016 in internal/sqtt pins it on hand-built
		// streams).
		return
	}
	T, p := w.msgTime, iend(&ins[n-1])
	I := wire.Instruction{Time: p, Category: wire.CatMessage}
	state := wire.StateWait
	if k := len(w.stalls); k > 0 && w.stalls[k-1] >= p && w.stalls[k-1] < T {
		I.Time, I.Stall, state = w.stalls[k-1], uint32(T-w.stalls[k-1]), wire.StateStall
	}
	I.Duration = int32(T + 4 - I.Time)
	w.rec.Instructions = append(ins, I)
	if k := len(w.rec.Timeline); k > 0 {
		w.rec.Timeline[k-1].Duration -= int32(T - I.Time)
	}
	w.rec.Timeline = append(w.rec.Timeline, wire.WaveState{Type: state, Duration: I.Duration})
	w.cur, w.stateStart = wire.StateExec, iend(&I)
}

// immedSpan is where an IMMED issued at t lies (spec §2.2.6, ISSUE
// status 3): from the end of the instruction before it, when that ends
// earlier (it is trimmed to t first), to 4 cycles past t.
func immedSpan(before []wire.Instruction, t int64) (ti, c int64) {
	ti = t
	if n := len(before); n > 0 && before[n-1].Category != catPlaceholder {
		trim(&before[n-1], t)
		ti = min(iend(&before[n-1]), t)
	}
	return ti, 4 + max(0, t-ti)
}

// waitFrom brings the timeline to ti in the current state, then waits c
// cycles; the wave is in EXEC after them.
func (w *modelWave) waitFrom(ti, c int64) {
	if w.stateStart < ti {
		w.addState(w.cur, ti-w.stateStart)
	}
	w.cur = wire.StateExec
	w.rec.Timeline = append(w.rec.Timeline, wire.WaveState{Type: wire.StateWait, Duration: int32(c)})
	w.stateStart = ti + c
}

// complete ends a wave at token time t (newest: e = t + 4).
func (m *model) complete(w *modelWave, t int64) {
	e, last := t+4, w.cur
	if m.v016 {
		// Spec A.3 item 1: 0.1.6 ends at the token time, the last
		// segment typed IDLE.
		e, last = t, wire.StateIdle
	}
	// 0.1.6 closes the timeline of a wave without instructions too (spec
	// A.3 item 1).
	if (m.v016 || len(w.rec.Instructions) > 0 && len(w.rec.Timeline) > 0) && e > w.stateStart {
		w.rec.Timeline = append(w.rec.Timeline, wire.WaveState{Type: last, Duration: int32(e - w.stateStart)})
	}
	w.cur = wire.StateEmpty
	w.rec.EndTime = e
	w.ended = true
}

func iend(in *wire.Instruction) int64 { return in.Time + int64(in.Duration) }

func trim(prev *wire.Instruction, t int64) {
	if t < iend(prev) {
		prev.Duration = int32(max(t-prev.Time, 4))
		// The stall is a 24-bit field from the start (spec A.4 item
		// 8.10).
		if int64(prev.Stall&0xFFFFFF) > int64(prev.Duration) {
			prev.Stall = uint32(prev.Duration)
		}
	}
}

// addState adds d cycles of state s to the timeline: to the last entry when
// it has that state, else as a new entry.
func (w *modelWave) addState(s wire.WaveStateType, d int64) {
	tl := w.rec.Timeline
	if n := len(tl); n > 0 && tl[n-1].Type == s {
		tl[n-1].Duration += int32(d)
		return
	}
	w.rec.Timeline = append(tl, wire.WaveState{Type: s, Duration: int32(d)})
}

func (m *model) issue(t int64, simd uint8, st *[10]uint8, pcs *[10]wire.PC) {
	for i, s := range st {
		if s == issueNone {
			continue
		}
		w := m.top(simd, uint8(i))
		if w == nil || w.trap != trapRestored {
			continue
		}
		prev := w.cur
		ins := &w.rec.Instructions
		switch s {
		case issueImmed:
			ti, c := immedSpan(*ins, t)
			if w.msg016 && ti < w.msgTime {
				// 0.1.6: not before the last OTHER_MSG it deleted
				// (spec A.4 item 8.3).
				ti, c = w.msgTime, 4+t-w.msgTime
			}
			*ins = append(*ins, wire.Instruction{Time: ti, Category: wire.CatImmed, Duration: int32(c),
				Stall: uint32(c), PC: pcs[i]})
			w.waitFrom(ti, c)
		case issueStall:
			w.cur = wire.StateStall
			w.stalls = append(w.stalls, t)
		case issueInst:
			w.cur = wire.StateExec
			w.issued = append(w.issued, len(*ins))
			*ins = append(*ins, wire.Instruction{Time: t, Category: catPlaceholder, PC: pcs[i]})
		}
		if t-w.stateStart > 0 {
			w.addState(prev, t-w.stateStart)
		}
		w.stateStart = max(t, w.stateStart)
	}
}

// phaseAdd and instCat give the category and phase class of INST types.
func instCat(k int) (wire.InstCategory, int64, bool) {
	switch k {
	case instSMEMRd, instSMEMWr:
		return wire.CatSMEM, 5, true
	case instSALU32, instSALU64:
		return wire.CatSALU, 5, true
	case instVMEMRd, instVMEMWr:
		return wire.CatVMEM, 0, true
	case instFLATWr, instFLATRd:
		return wire.CatFLAT, 0, true
	case instVALU32, instVALU64, instVALUMAI:
		return wire.CatVALU, 2, true
	case instLDS:
		return wire.CatLDS, 1, true
	case instPC:
		return wire.CatSALU, 0, true
	case instJump:
		return wire.CatJump, 1, true
	case instNext:
		return wire.CatNext, 1, true
	case instOtherMsg:
		return wire.CatMessage, 1, true
	case instGoToTrap:
		return wire.CatContext, 0, true
	}
	return 0, 0, false
}

var replayOf = map[int]int{19: 0, 20: 16, 21: 2, 22: 3, 23: 4, 24: 14}

func (m *model) inst(t int64, simd, slot uint8, k int) {
	w := m.top(simd, slot)
	if w == nil || w.ended {
		w = &modelWave{cur: wire.StateIdle, stateStart: t, lost: true}
		w.rec = wire.Wave{CU: m.hdr.TargetCU, SIMD: simd, WaveID: slot, Size: 64, BeginTime: t}
		m.waves[simd][slot] = append(m.waves[simd][slot], w)
	}
	ins := &w.rec.Instructions
	if w.trap == trapWaitNewPC && k == instPC {
		w.pcInfos = append(w.pcInfos, pcInfo{idx: len(*ins)})
		w.trap = trapRestored
		if n := len(*ins); n > 0 && (*ins)[n-1].Category == wire.CatContext {
			(*ins)[n-1].Duration = int32(t + 4 - (*ins)[n-1].Time)
		}
		return
	}
	if w.trap != trapRestored || len(w.issued) == 0 {
		return
	}
	j := w.issued[0]
	w.issued = w.issued[1:]
	if n := len(*ins); n >= 2 && (*ins)[j].Time < iend(&(*ins)[n-2]) {
		m.phase++
	}
	if j > 0 {
		trim(&(*ins)[j-1], (*ins)[j].Time)
	}
	phase := (m.phase + int64(simd)) % 4
	if k < 17 {
		w.lastOfType[k] = j + 1
	}
	I := &(*ins)[j]
	cat, add, ok := instCat(k)
	if m.v016 && k == instOtherMsg {
		// Spec A.3 item 2: 0.1.6 drops OTHER_MSG; it deletes the entry
		// (the later issue indices go stale) but keeps its time for a
		// following IMMED and for the wave's end (A.4 items 8.3, 8.8).
		w.msg016, w.msgTime = true, I.Time
		*ins = append((*ins)[:j], (*ins)[j+1:]...)
		return
	}
	if o, replay := replayOf[k]; replay {
		x := w.lastOfType[o]
		w.lastOfType[o] = 0
		if 0 < x && x < len(*ins) && x < j {
			X := &(*ins)[x-1]
			old := X.Duration
			X.Duration = int32(max(int64(X.Duration), t+4-X.Time))
			X.Stall += uint32(X.Duration - old)
		}
		*ins = append((*ins)[:j], (*ins)[j+1:]...)
		return
	}
	if !ok {
		*ins = append((*ins)[:j], (*ins)[j+1:]...)
		return
	}
	I.Category = cat
	phase += add
	switch k {
	case instPC:
		w.pcInfos = append(w.pcInfos, pcInfo{idx: j + 1})
	case instGoToTrap:
		w.trap = trapWaitNewPC
		w.trapping = true
		for n := range w.pcInfos {
			if w.pcInfos[n].idx == len(*ins)-1 {
				w.pcInfos[n].idx++
			}
		}
	}
	I.Duration = int32(4 + max(t-I.Time-4*(phase/4), 0))
	if len(w.stalls) > 0 && I.Time > w.stalls[0] {
		var p int64
		if j > 0 {
			p = iend(&(*ins)[j-1])
		}
		s := I.Time
		for len(w.stalls) > 0 && I.Time > w.stalls[0] {
			s = max(w.stalls[0], p)
			w.stalls = w.stalls[1:]
		}
		I.Stall = uint32(max(I.Time-s, 0))
		I.Duration = int32(max(I.Time+int64(I.Duration)-s, 4))
		I.Time = s
	}
}

// instPC fills the pending PC placeholder of a wave (spec §2.2.6 INST_PC).
func (m *model) instPC(simd, slot uint8, addr uint64) {
	w := m.top(simd, slot)
	if w == nil || len(w.pcInfos) == 0 || w.trap != trapRestored {
		return
	}
	w.pcInfos = notePC(w.pcInfos, len(w.rec.Instructions), m.translate(addr))
}

func (m *model) shaderData(t int64, cu, simd, slot uint8, data uint32) {
	m.sdata = append(m.sdata, wire.ShaderData{Time: t, Value: uint64(data), CU: cu, SIMD: simd, WaveID: slot})
	limit := 65536 // spec §4.1: batches of up to 65536
	if m.v016 {
		limit = 65537 // observed: 0.1.6 flushes once more than 65536 are pending
	}
	if len(m.sdata) >= limit {
		m.emit(&wire.Batch{Type: wire.TypeShaderData, ShaderData: m.sdata})
		m.sdata = nil
	}
}

// Compute register indices (spec §2.1.1).
const (
	regDispatchInitiator = 0x00
	regNumThreadX        = 0x07
	regPgmLo             = 0x0C
	regPgmHi             = 0x0D
	regDispatchPktLo     = 0x0E
	regDispatchPktHi     = 0x0F
	regPgmRsrc1          = 0x12
	regPgmRsrc2          = 0x13
	regPgmRsrc3          = 0x2D
	regNowhere           = 0x7F
)

func setLo(v *uint64, x uint32) { *v = *v&^0xFFFFFFFF | uint64(x) }
func setHi(v *uint64, x uint32) { *v = *v&0xFFFFFFFF | uint64(x)<<32 }

func (m *model) regCS(t int64, me, pipe, reg uint8, data uint32) {
	switch reg {
	case regDispatchInitiator:
		if data&1 != 0 {
			m.emit(&wire.Batch{Type: wire.TypeDispatch, Dispatches: []wire.Dispatch{m.dispatch(t, me, pipe)}})
		}
	case regNowhere:
		if data == 7 {
			m.event(t, wire.EventCSPartialFlush, me, pipe, 0, 0)
		}
	default:
		m.computeReg(uint16(reg), me, pipe, data)
	}
}

// cpState is what both models keep from register writes: the compute
// registers of each (me, pipe) (spec §2.1.1), and the USERDATA2
// instrumentation protocol (§2.1.2) with the code objects it loads.
type cpState struct {
	pgm, pkt     [2][4]uint64
	nthr         [3]uint32
	rsrc1, rsrc2 uint32
	instrActive  bool
	udWait       int // -1: waiting for a header, else CODEOBJ type of the payload
	coTable
	rtFreq    uint64
	rtFreqSet bool
	perfN     int64 // perf-counter interval (for the gfx9 perf records, §2.2.9)
}

func (c *cpState) startPC(me, pipe uint8) uint64 {
	return (c.pgm[me&1][pipe&3] << 8) & (1<<48 - 1)
}

// computeReg applies a write of data to compute register reg of (me, pipe)
// (spec §2.1.1); registers no record depends on are ignored.
func (c *cpState) computeReg(reg uint16, me, pipe uint8, data uint32) {
	me, pipe = me&1, pipe&3
	switch reg {
	case regNumThreadX, regNumThreadX + 1, regNumThreadX + 2:
		c.nthr[reg-regNumThreadX] = data
	case regPgmLo:
		setLo(&c.pgm[me][pipe], data)
	case regPgmHi:
		setHi(&c.pgm[me][pipe], data)
	case regDispatchPktLo:
		setLo(&c.pkt[me][pipe], data)
	case regDispatchPktHi:
		setHi(&c.pkt[me][pipe], data)
	case regPgmRsrc1:
		c.rsrc1 = data
	case regPgmRsrc2:
		c.rsrc2 = data
	}
}

// dispatch derives a DISPATCH record (spec §2.1.5) with tt_version 0: the
// gfx9 model's (the LDS field of the generator's RSRC2 is 0, so the
// tt_version question of spec §8 item 1 does not arise); the RDNA model adjusts
// it to its header version.
func (c *cpState) dispatch(t int64, me, pipe uint8) wire.Dispatch {
	r1, r2 := c.rsrc1, c.rsrc2
	var flags int32
	if r1&(1<<10) != 0 {
		flags |= 1
	}
	if r1&(1<<11) != 0 {
		flags |= 2
	}
	if r1&(1<<14) != 0 {
		flags |= 4
	}
	if r2&1 != 0 {
		flags |= 8
	}
	return wire.Dispatch{
		Size: 80, Time: t, MEID: me, PipeID: pipe,
		UserSGPRs:       uint16((r2 >> 1) & 0x1F),
		Flags:           flags,
		VGPRs:           (r1&0x3F)*8 + 8,
		SGPRs:           ((r1>>7)&7)*16 + 16,
		LDSSize:         ((r2 >> 15) & 0x1FF) * 512,
		ThreadDim:       c.nthr,
		DispatchPktAddr: c.pkt[me&1][pipe&3],
		EntryPoint:      c.translate(c.startPC(me, pipe)),
	}
}

// User-data registers and instrumentation constants (spec §2.1.2).
const (
	regUserData2 = 0xC342
	regUserData3 = 0xC343
	rocMagic     = 0x434F5200

	opCodeObj    = 4
	opRTStamp    = 5
	opAgentInfo  = 6
	opRTStampLo  = 7
	coTail       = 0
	coSizeLo     = 1
	coAddrLo     = 2
	coAddrHi     = 3
	coSizeHi     = 4
	coIDLo       = 5
	coIDHi       = 6
	agentRTFreq  = 0
	agentPerfInt = 1
)

func (m *model) reg(t int64, me, pipe uint8, addr uint16, data uint32) {
	switch addr {
	case regUserData3:
		if m.instrActive {
			m.rtWrite(t, data)
		}
	case regUserData2:
		if ev, id, ok := m.userData2(me, pipe, data); ok {
			m.event(t, ev, me, pipe, 1, id&0xFFFFFFFF)
		}
	}
}

// userData2 applies a USERDATA2 write v of (me, pipe) (spec §2.1.2). A
// code-object load or unload reports the event to record and the code
// object id.
func (c *cpState) userData2(me, pipe uint8, v uint32) (ev wire.EventType, id uint64, ok bool) {
	if !c.instrActive {
		if v == rocMagic {
			c.instrActive = true
			c.udWait = -1
		}
		return 0, 0, false
	}
	if c.udWait < 0 {
		op, typ, d20 := v&0xFF, (v>>8)&0xF, v>>12
		switch {
		case op == opAgentInfo && typ == agentRTFreq:
			c.rtFreq, c.rtFreqSet = uint64(d20)*1000, true
		case op == opAgentInfo && typ == agentPerfInt:
			c.perfN = int64(d20)
		case op == opCodeObj && d20 == 0:
			c.udWait = int(typ)
		}
		return 0, 0, false
	}
	typ := c.udWait
	c.udWait = -1
	return c.packet(typ, me&1, pipe&3, v)
}

// coTable is the code-object half of the USERDATA2 instrumentation protocol
// (spec §2.1.2), shared by the gfx9 and RDNA models: the id, address and
// size latched per (me, pipe), and the active and "from start" ranges.
type coTable struct {
	coSize, coAddr, coID [2][4]uint64
	active, fromStart    []coRange
}

// translate maps a GPU address through the active code objects (§2.1.3).
func (c *coTable) translate(addr uint64) wire.PC { return translateIn(c.active, addr) }

// retranslate attributes an unattributed PC with the code objects loaded
// "from start" (§2.1.3 late attribution).
func (c *coTable) retranslate(pc wire.PC) wire.PC {
	if pc.CodeObjectID == 0 && pc.Address != 0 {
		return translateIn(c.fromStart, pc.Address)
	}
	return pc
}

// packet applies the payload v of a CODEOBJ packet of type typ for (me,
// pipe). A tail that loads a new code object or unloads a known one reports
// the event to record and the code object id.
func (c *coTable) packet(typ int, me, pipe uint8, v uint32) (ev wire.EventType, id uint64, ok bool) {
	switch typ {
	case coSizeLo:
		setLo(&c.coSize[me][pipe], v)
	case coSizeHi:
		setHi(&c.coSize[me][pipe], v)
	case coAddrLo:
		setLo(&c.coAddr[me][pipe], v)
	case coAddrHi:
		setHi(&c.coAddr[me][pipe], v)
	case coIDLo:
		setLo(&c.coID[me][pipe], v)
	case coIDHi:
		setHi(&c.coID[me][pipe], v)
	case coTail:
		unload, fromStart, legacy := v&1 != 0, v&2 != 0, uint64(v>>2)
		id = legacy
		if id == 0 {
			id = c.coID[me][pipe]
		}
		idx := -1
		for i, r := range c.active {
			if r.id == id {
				idx = i
			}
		}
		if !unload && idx < 0 {
			r := coRange{addr: c.coAddr[me][pipe], size: c.coSize[me][pipe], id: id}
			if r.size != 0 {
				c.active = insertRange(c.active, r)
				if fromStart {
					c.fromStart = insertRange(c.fromStart, r)
				}
			}
			return wire.EventCodeObjectLoad, id, true
		}
		if unload && idx >= 0 {
			c.active = append(c.active[:idx], c.active[idx+1:]...)
			return wire.EventCodeObjectUnload, id, true
		}
	}
	return 0, 0, false
}

// insertRange adds r, evicting the ranges it overlaps.
func insertRange(t []coRange, r coRange) []coRange {
	out := t[:0]
	for _, x := range t {
		if x.addr < r.addr+r.size && r.addr < x.addr+x.size {
			continue
		}
		out = append(out, x)
	}
	return append(out, r)
}

func (m *model) rtWrite(t int64, v uint32) {
	if m.rtLeft == 0 {
		op, d20 := v&0xFF, int(v>>12)
		m.rtOp, m.rtIdx = int(op), 0
		switch op {
		case opRTStamp:
			m.rtLeft = d20
			if d20 == 0 {
				m.rtLeft = 3
			}
		case opRTStampLo:
			m.rtLeft = d20
			if d20 == 0 {
				m.rtLeft = 1
			}
			m.rtLow = m.rtNow
		default:
			m.rtLeft, m.rtOp = d20, -1
		}
		return
	}
	m.rtLeft--
	switch m.rtOp {
	case opRTStamp:
		switch m.rtIdx {
		case 0:
			m.rtLow = v
		case 1:
			m.rtHi = v
		case 2:
			m.rtNow = v
		}
	case opRTStampLo:
		m.rtNow = v
	}
	m.rtIdx++
	if m.rtLeft == 0 && m.rtOp >= 0 {
		if m.rtNow < m.rtLow {
			m.rtHi++
		}
		m.rt = append(m.rt, wire.Realtime{ShaderClock: t, RealtimeClock: uint64(m.rtNow) | uint64(m.rtHi)<<32})
	}
}

func (m *model) perf(t int64, cu, bank uint8, c [4]uint16) {
	tt := t - 4*int64(cu)
	k := cuBank{cu, bank}
	last, seen := m.perfLast[k]
	if !seen {
		m.perfSeen = append(m.perfSeen, k)
	}
	if m.perfN > 0 && last > 0 && tt > last+m.perfN {
		m.perfRecs = append(m.perfRecs, wire.PerfEvent{Time: tt, CU: cu, Bank: bank})
	}
	for i := range c {
		c[i] &= 0x1FFF
	}
	m.perfRecs = append(m.perfRecs, wire.PerfEvent{Time: tt, Events: c, CU: cu, Bank: bank})
	m.perfLast[k] = tt
}

func (m *model) flushOcc() {
	if len(m.occ) == 0 {
		return
	}
	// Every unattributed record, ends too (spec §2.1.3 "every occupancy
	// record"; AMD's 0.1.6 does the same).
	for i := range m.occ {
		m.occ[i].PC = m.retranslate(m.occ[i].PC)
	}
	m.emit(&wire.Batch{Type: wire.TypeOccupancy, Occupancy: m.occ})
	m.occ = nil
}

// emitWave stitches and emits one wave (spec §3.5, "after the loop").
func (m *model) emitWave(w *modelWave) {
	ins := w.rec.Instructions
	noted := make([]wire.PC, len(ins))
	for i := range ins {
		noted[i] = ins[i].PC
		ins[i].PC = wire.PC{}
	}
	for n := range w.pcInfos {
		// Observed: 0.1.6 re-translates the waves still held at the end
		// of the buffer (and occupancy), not those ending at a WAVE_END.
		if !m.v016 || !w.ended {
			w.pcInfos[n].pc = m.retranslate(w.pcInfos[n].pc)
		}
	}
	n := m.stitch(w)
	if !w.ended {
		// end_time stays 0 while stitching (spec §2.2.6 "Incomplete
		// waves"); it is computed after it, from the final durations.
		var e int64
		for i := range ins {
			e = max(e, iend(&ins[i])+4)
		}
		w.rec.EndTime = e
	}
	m.waveInfo(!w.ended && !w.trapping, n, len(ins), w.pcInfos)
	if m.v016 {
		// Observed: 0.1.6 reports unresolved placeholders as NONE, or
		// as 16 when the stitcher gave them a PC (spec A.4 item 8.2).
		for i := range ins {
			if ins[i].Category == catPlaceholder {
				ins[i].Category = wire.CatNone
				if ins[i].PC != (wire.PC{}) {
					ins[i].Category = 16
				}
			}
		}
	}
	if m.checkWalk && !m.v016 {
		// The stitcher must follow the walk up to the first unresolved
		// placeholder (there only in waves cut off by the trace's end).
		stop := len(ins)
		for i := range ins {
			if ins[i].Category == catPlaceholder {
				stop = i
				break
			}
		}
		// (An anchored placeholder still gets its PC, spec §3.5 step 4.)
		if n < stop {
			m.failf("sqttgen: internal error: the stitcher consumed %d of %d instructions of wave simd %d slot %d",
				n, stop, w.rec.SIMD, w.rec.WaveID)
		}
		for i := range ins[:min(n, len(ins))] {
			// A CONTEXT instruction has no PC of its own; the stitcher
			// may give it an anchor's (spec §3.5 steps 1 and 3).
			if ins[i].PC != noted[i] && ins[i].Category != wire.CatContext {
				m.failf("sqttgen: internal error: the stitcher puts instruction %d (%v at %d) of wave simd %d slot %d at %+v, the walk executed %+v",
					i, ins[i].Category, ins[i].Time, w.rec.SIMD, w.rec.WaveID, ins[i].PC, noted[i])
				break
			}
		}
	}
	m.emit(&wire.Batch{Type: wire.TypeWave, Waves: []wire.Wave{w.rec}})
}

// end emits the end-of-buffer records (spec §2.2.6 "End of buffer", §4.3).
func (m *model) end() {
	m.flushOcc()
	if len(m.rt) > 0 {
		m.emit(&wire.Batch{Type: wire.TypeRealtime, Realtime: m.rt})
		m.rt = nil
	}
	if len(m.sdata) > 0 {
		m.emit(&wire.Batch{Type: wire.TypeShaderData, ShaderData: m.sdata})
		m.sdata = nil
	}
	if m.perfN > 0 {
		// The spec does not order the trailing records; take (cu, bank)
		// order, as an array indexed by CU and bank would give.
		sort.Slice(m.perfSeen, func(i, j int) bool {
			a, b := m.perfSeen[i], m.perfSeen[j]
			return a.cu < b.cu || a.cu == b.cu && a.bank < b.bank
		})
		for _, k := range m.perfSeen {
			m.perfRecs = append(m.perfRecs, wire.PerfEvent{Time: m.perfLast[k] + m.perfN, CU: k.cu, Bank: k.bank})
		}
	}
	for simd := range m.waves {
		for slot := range m.waves[simd] {
			for _, w := range m.waves[simd][slot] {
				m.emitWave(w)
			}
			m.waves[simd][slot] = nil
		}
	}
	if m.dataLost {
		m.emit(&wire.Batch{Type: wire.TypeInfo, Info: []wire.Info{wire.InfoDataLost}})
	}
	if m.rtFreqSet {
		m.emit(&wire.Batch{Type: wire.TypeRTFrequency, RTFrequency: m.rtFreq})
	}
	if len(m.perfRecs) > 0 {
		m.emit(&wire.Batch{Type: wire.TypePerfEvent, PerfEvents: m.perfRecs})
		m.perfRecs = nil
	}
}
