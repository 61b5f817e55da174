package sqttgen

import "github.com/attkit/attkit/internal/wire"

// The RDNA model turns the delivered tokens into the records a decoder
// following the specification emits (§2.3.6 parser, §2.1 registers and
// instrumentation, §3.5 stitcher, §4.3 callback order). As for gfx9, the
// stitched PCs are compared with the PCs the simulated waves executed.

// rdnaWave is one traced wave of the target SIMD (spec §2.3.6 "RDNA wave
// model").
type rdnaWave struct {
	rec      wire.Wave
	last     int64 // time of the last state change
	cur      wire.WaveStateType
	pcInfos  []pcInfo
	bx       bool // barrier extension armed
	complete bool
	trap     trapState // trapRestored or trapStandby
	noted    []wire.PC // PCs the simulation executed, per instruction
}

type rdnaModel struct {
	recOut
	gen   int
	hdr   RDNAHeader
	ver   int
	codes *[256]rdnaCode

	target, targetSIMD uint8
	slots              [32][]*rdnaWave

	running  map[uint32]wire.PC
	saved    map[uint32]wire.PC // PCs of context-saved locations
	occ      []wire.Occupancy
	sdata    []wire.ShaderData
	rt       []wire.Realtime
	other    []wire.OtherSIMD
	dataLost bool
	q        []rdnaToken // gfx10/11 reorder queue
	moved    int         // tokens the queue moved to its front
	// readerLoss is the reader's packet-loss flag (gfx11+ TIMESTAMP),
	// consumed by the next token the parser takes (spec §2.3.6): on
	// gfx10/11 the next one out of the reorder queue, which may have been
	// read before the TIMESTAMP.
	readerLoss bool

	cpState

	// compat016 gives the 0.1.6 library's records: no barrier extension
	// (spec A.3 item 3); and, observed with the 0.1.6 binary beyond A.3:
	// each wave is stitched and emitted at its WAVE_END (so before the
	// occupancy batch, A.3 item 4, and before any late attribution; waves
	// still in flight at the end come after it, as newest), dprate is 0
	// for a DPRate field of 0, gfx11 codes 10 and 15 take 1 and 16
	// cycles, gfx12 other-SIMD codes 85..89 are LDS (not FLAT), and gfx12
	// ds_bvh stays LDS and v_mov_b64 plain VALU (no V_MOV_B64 rule).
	compat016 bool
	exclBW    bool      // gfx12 header exclude_barrier_wait
	gaps      []rdnaGap // excluded barrier waits of the wave being stitched
	lookahead [2]int    // step 9 look-aheads that kept / did not keep the gap

	isaLines
	checkWalk bool
}

func newRDNAModel(gen int, out func(*wire.Batch)) *rdnaModel {
	m := &rdnaModel{gen: gen, recOut: recOut{out: out}, running: map[uint32]wire.PC{}, saved: map[uint32]wire.PC{}, cpState: cpState{udWait: -1}}
	m.classify = func(text string) lineClass { return rdClassify(text, m.gen, m.compat016) }
	return m
}

// feed takes a delivered token. gfx10/11 pass it through the reorder queue
// of spec §2.3.1: a token earlier than the last queued one goes to the
// front; the front is released while it is earlier than the last queued.
func (m *rdnaModel) feed(tk rdnaToken) {
	if m.gen >= 12 {
		m.process(&tk)
		return
	}
	if n := len(m.q); n > 0 && tk.t < m.q[n-1].t {
		m.q = append([]rdnaToken{tk}, m.q...)
		m.moved++
	} else {
		m.q = append(m.q, tk)
	}
	for len(m.q) > 1 && m.q[0].t < m.q[len(m.q)-1].t {
		m.process(&m.q[0])
		m.q = m.q[1:]
	}
	if cap(m.q) > 64 && len(m.q) < 8 {
		m.q = append([]rdnaToken(nil), m.q...)
	}
}

func (m *rdnaModel) process(tk *rdnaToken) {
	lost := m.readerLoss
	if lost {
		m.readerLoss = false
		m.dataLost = true
		m.event(tk.t, wire.EventPacketLoss, 0, 0, 0, 0)
	}
	switch tk.typ {
	case rtHeader:
		m.header(tk.hdr)
	case rtReg:
		m.reg(tk)
	case rtRegInit:
		if tk.flags == 2 && tk.data&1 != 0 {
			m.emit(&wire.Batch{Type: wire.TypeDispatch, Dispatches: []wire.Dispatch{m.dispatch(tk.t, tk.me, tk.pipe)}})
		}
	case rtEvent:
		m.eventTok(tk)
	case rtMisc:
		m.misc(tk)
	case rtWaveStart, rtWaveStartExt:
		m.waveStart(tk, lost)
	case rtWaveEnd:
		m.waveEnd(tk)
	case rtInst:
		m.inst(tk)
	case rtValu:
		if w := m.top(tk.wid); w != nil {
			d := int64(1)
			if tk.w64 && m.compat016 {
				d = 2 // wave64 under 0.1.6: twice the cycles (newest: ignored)
			}
			m.valu(w, tk.t, d, tk.pc)
		}
	case rtImmOne:
		if w := m.top(tk.wid); w != nil {
			m.immediate(w, tk.t, tk.pc)
		}
	case rtImmediate:
		for s := uint8(0); s < 16; s++ {
			if tk.mask&(1<<s) != 0 {
				if w := m.top(s); w != nil {
					m.immediate(w, tk.t, tk.pcs[s])
				}
			}
		}
	case rtReady:
		for s := uint8(0); s < 16; s++ {
			if tk.mask&(1<<s) != 0 {
				if w := m.top(s); w != nil {
					m.bxCheck(w, tk.t-1)
					w.setState(wire.StateStall, tk.t)
				}
			}
		}
	case rtNewPC:
		if w := m.top(tk.wid); w != nil {
			m.newPC(w, tk.t, tk.addr)
		}
	case rtSData, rtSDataShort:
		m.shaderData(tk)
	}
}

func (m *rdnaModel) header(h RDNAHeader) {
	m.hdr, m.ver = h, int(h.Version)
	m.exclBW = m.ver == 4 && h.ExcludeBarrierWait
	m.target = h.DSA<<7 + h.DWGP&7
	m.targetSIMD = h.DSIMD & 3
	dp, de := rdRates(h)
	if m.compat016 {
		mask := uint8(7)
		if m.ver < 3 {
			mask = 0xF
		}
		if h.DPRate&mask == 0 {
			dp = 0
		}
	}
	m.codes = rdCodeTable(m.gen, dp, de)
	if m.compat016 && m.gen == 11 {
		m.codes[10].cycles, m.codes[15].cycles = 1, 16
	}
	if m.compat016 && m.gen == 12 {
		for c := 85; c <= 89; c++ {
			m.codes[c].cat = wire.CatLDS
		}
	}
	gfxip := uint64(10)
	switch {
	case m.ver == 3:
		gfxip = 11
	case m.ver >= 4:
		gfxip = 12
	}
	m.emit(&wire.Batch{Type: wire.TypeGFXIP, GFXIP: gfxip})
}

// rdRates returns dprate and derate of a header (spec §2.3.5).
func rdRates(h RDNAHeader) (dp, de int) {
	mask := uint8(7)
	if h.Version < 3 {
		mask = 0xF
	}
	dp = 1
	if dpr := h.DPRate & mask; dpr != 0 {
		dp = 1 << (dpr - 1)
	}
	return dp, 1 << (h.DPDerate & 7)
}

func (m *rdnaModel) top(wid uint8) *rdnaWave {
	s := m.slots[wid&31]
	if len(s) == 0 {
		return nil
	}
	return s[len(s)-1]
}

func (m *rdnaModel) eventTok(tk *rdnaToken) {
	var typ wire.EventType
	switch tk.code {
	case 7:
		typ = wire.EventCSPartialFlush
	case 4, 6, 0x14, 0x16:
		typ = wire.EventCacheFlush
	case 0x28:
		typ = wire.EventBottomOfPipeTS
	case 0x36:
		typ = wire.EventTTFlush
	default:
		return
	}
	flags := uint16(1)
	if tk.short { // bop
		flags |= 2
	}
	m.event(tk.t, typ, tk.me&1, tk.pipe, flags, 0)
}

// MISC flag bits (spec §2.3.4).
const (
	rmSPMOrPL     = 1 << 16
	rmGCRinse     = 1 << 17
	rmTTStallBeg  = 1 << 20
	rmTTStallEnd  = 1 << 21
	rmDIDTBeg     = 1 << 22
	rmDIDTEnd     = 1 << 23
	rmSaveContext = 1 << 19
)

func (m *rdnaModel) misc(tk *rdnaToken) {
	f := tk.flags
	ev := func(typ wire.EventType) { m.event(tk.t, typ, 0, 0, 0, 0) }
	if f&rmSPMOrPL != 0 {
		if m.ver <= 2 {
			m.dataLost = true
			ev(wire.EventPacketLoss)
		} else {
			ev(wire.EventSPMSample)
		}
	}
	if f&rmSaveContext != 0 {
		ev(wire.EventSaveContext)
		for s := range m.slots {
			if w := m.top(uint8(s)); w != nil && w.trap == trapRestored {
				w.trap = trapStandby
			}
		}
	}
	if f&rmTTStallBeg != 0 {
		ev(wire.EventTTStallBegin)
	}
	if f&rmTTStallEnd != 0 {
		ev(wire.EventTTStallEnd)
	}
	if f&rmDIDTBeg != 0 {
		ev(wire.EventDIDTStallBegin)
	}
	if f&rmDIDTEnd != 0 {
		ev(wire.EventDIDTStallEnd)
	}
	if f&rmGCRinse != 0 {
		ev(wire.EventGCRinse)
	}
}

func (m *rdnaModel) waveStart(tk *rdnaToken, lost bool) {
	pc := m.translate(m.startPC(tk.me, tk.pipe))
	cu := tk.sa<<7 + tk.wgp
	target := cu == m.target && tk.simd == m.targetSIMD
	isExt := tk.isExt && !tk.extLDS
	var wgid uint8
	if isExt {
		wgid = tk.wgid
	}
	k := occKey(cu, tk.simd, tk.wid)
	if tk.count >= 66 && tk.count <= 89 {
		m.contextSwitch(tk, target, cu, k, isExt, wgid)
		return
	}
	if _, ok := m.running[k]; ok && lost {
		m.occ = append(m.occ, wire.Occupancy{Time: uint64(tk.t - 1), CU: cu, SIMD: tk.simd, WaveID: tk.wid})
	}
	m.running[k] = pc
	m.occ = append(m.occ, wire.Occupancy{PC: pc, Time: uint64(tk.t), CU: cu, SIMD: tk.simd, WaveID: tk.wid,
		Start: true, MEID: tk.me, PipeID: tk.pipe, IsExt: isExt, WorkgroupID: wgid})
	if m.hdr.DoubleBuffer && m.ver >= 4 && len(m.occ) >= 65536 {
		m.flushOcc(false)
	}
	if !target {
		return
	}
	s := m.slots[tk.wid]
	for len(s) > 0 && s[len(s)-1].complete {
		m.emitWave(s[len(s)-1], false)
		s = s[:len(s)-1]
	}
	w := &rdnaWave{last: tk.t, cur: wire.StateIdle}
	if pc != (wire.PC{}) {
		w.pcInfos = []pcInfo{{0, pc}}
	}
	w.rec = wire.Wave{CU: cu, SIMD: tk.simd, WaveID: tk.wid, Dispatcher: tk.pipe&0xF | (tk.me&7)<<4,
		WorkgroupID: wgid, Size: 64, BeginTime: tk.t}
	m.slots[tk.wid] = append(s, w)
}

// contextSwitch is WAVE_START step 2 (count 66..89): a context save or
// restore of the location.
func (m *rdnaModel) contextSwitch(tk *rdnaToken, target bool, cu uint8, k uint32, isExt bool, wgid uint8) {
	x := tk.count - 66
	save := x == 0 || x == 1 || x == 4 || x == 5
	restore := x == 2 || x == 3 || x >= 6 && x <= 9
	if target {
		w := m.top(tk.wid)
		switch {
		case save && w != nil:
			w.trap = trapStandby
			w.rec.Contexts++
			w.add(wire.Instruction{Time: tk.t, Category: wire.CatContext, Duration: 1}, wire.PC{})
		case restore:
			if w == nil || w.complete {
				m.failf("sqttgen: internal error: context restore of wave slot %d without a wave", tk.wid)
				return
			}
			if l := w.lastIns(); l != nil && l.Category == wire.CatContext {
				l.Duration = int32(max(int64(l.Duration), tk.t+1-l.Time))
			}
			w.trap = trapStandby
			w.rec.Contexts++
		}
	}
	o := wire.Occupancy{Time: uint64(tk.t), CU: cu, SIMD: tk.simd, WaveID: tk.wid, MEID: tk.me, PipeID: tk.pipe,
		IsExt: isExt, WorkgroupID: wgid}
	switch {
	case save:
		if pc, ok := m.running[k]; ok {
			o.PC = pc
			m.occ = append(m.occ, o)
			m.saved[k] = pc
		}
	case restore:
		o.PC = m.saved[k]
		delete(m.saved, k)
		m.running[k] = o.PC
		o.Start = true
		m.occ = append(m.occ, o)
	}
}

func (m *rdnaModel) waveEnd(tk *rdnaToken) {
	cu := tk.sa<<7 + tk.wgp
	if cu == m.target && tk.simd == m.targetSIMD {
		if w := m.top(tk.wid); w != nil && !w.complete {
			m.completeWave(w, tk.t, tk.pc)
			if m.compat016 {
				m.emitWave(w, false)
				m.slots[tk.wid] = m.slots[tk.wid][:len(m.slots[tk.wid])-1]
			}
		}
	}
	k := occKey(cu, tk.simd, tk.wid)
	pc, ok := m.running[k]
	if ok {
		delete(m.running, k)
	} else {
		m.occ = append([]wire.Occupancy{{CU: cu, SIMD: tk.simd, WaveID: tk.wid, Start: true}}, m.occ...)
	}
	pc = m.retranslate(pc)
	m.occ = append(m.occ, wire.Occupancy{PC: pc, Time: uint64(tk.t), CU: cu, SIMD: tk.simd, WaveID: tk.wid})
}

func (w *rdnaWave) setState(s wire.WaveStateType, t int64) {
	if t > w.last {
		tl := w.rec.Timeline
		if len(tl) == 0 || tl[len(tl)-1].Type != w.cur {
			tl = append(tl, wire.WaveState{Type: w.cur})
		}
		tl[len(tl)-1].Duration += int32(t - w.last)
		w.rec.Timeline = tl
		w.last = t
	}
	w.cur = s
}

func (w *rdnaWave) add(in wire.Instruction, pc wire.PC) {
	w.rec.Instructions = append(w.rec.Instructions, in)
	w.noted = append(w.noted, pc)
}

func (w *rdnaWave) lastIns() *wire.Instruction {
	if n := len(w.rec.Instructions); n > 0 {
		return &w.rec.Instructions[n-1]
	}
	return nil
}

// bxCheck is the gfx10/11 barrier extension (spec §2.3.6 bx).
func (m *rdnaModel) bxCheck(w *rdnaWave, t int64) {
	if !w.bx {
		return
	}
	w.bx = false
	if l := w.lastIns(); l != nil && l.Category == wire.CatImmed {
		w.setState(wire.StateWait, iend(l))
		w.setState(wire.StateExec, t+1)
		l.Duration = int32(max(0, t-l.Time))
		l.Category = wire.CatMessage
	}
}

func (m *rdnaModel) valu(w *rdnaWave, t, cycles int64, pc wire.PC) {
	m.bxCheck(w, t)
	if w.trap != trapRestored {
		return
	}
	time, dur, stall := t, cycles, int64(0)
	if w.cur == wire.StateStall && w.last < t {
		stall = t - w.last
		dur += stall
		time = w.last
	}
	w.add(wire.Instruction{Time: time, Category: wire.CatVALU, Duration: int32(dur), Stall: uint32(stall)}, pc)
	w.setState(wire.StateExec, t)
}

func (m *rdnaModel) immediate(w *rdnaWave, t int64, pc wire.PC) {
	m.bxCheck(w, t)
	if w.trap != trapRestored {
		return
	}
	time := t
	if l := w.lastIns(); l != nil {
		time = min(t, iend(l))
	}
	stall := t - time
	w.add(wire.Instruction{Time: time, Category: wire.CatImmed, Duration: int32(stall + 1), Stall: uint32(stall)}, pc)
	w.setState(wire.StateWait, time)
	w.setState(wire.StateExec, t+1)
}

func (m *rdnaModel) inst(tk *rdnaToken) {
	c := m.codes[tk.code&0xFF]
	if m.gen <= 11 {
		c = m.codes[tk.code&0x7F]
	}
	if c.ok && c.other {
		m.other = append(m.other, wire.OtherSIMD{Size: 24, Time: tk.t, Cycles: uint16(c.cycles), WGP: m.target,
			Category: c.cat})
		if len(m.other) >= 65536 {
			m.emit(&wire.Batch{Type: wire.TypeInstOtherSIMD, OtherSIMD: m.other})
			m.other = nil
		}
		return
	}
	w := m.top(tk.wid)
	if w == nil {
		return
	}
	t := tk.t
	m.bxCheck(w, t)
	switch tk.code {
	case 117: // return from exception
		w.pcInfos = append(w.pcInfos, pcInfo{idx: len(w.rec.Instructions)})
		w.trap = trapRestored
		if l := w.lastIns(); l != nil && l.Category == wire.CatContext {
			l.Duration = int32(max(int64(l.Duration), t+1-l.Time))
		}
		return
	case 6: // trap
		w.add(wire.Instruction{Time: t, Category: wire.CatContext, Duration: 1}, wire.PC{})
		w.trap = trapStandby
		return
	}
	if w.trap != trapRestored || !c.ok || c.cat == wire.CatNone {
		return
	}
	if c.cat == wire.CatImmed {
		m.immediate(w, t, tk.pc)
		if m.ver <= 3 && !m.compat016 {
			w.bx = true
		}
		return
	}
	time, dur, stall := t, int64(c.cycles), int64(0)
	if tk.w64 && m.compat016 {
		dur *= 2 // wave64 under 0.1.6: twice the cycles (newest: ignored)
	}
	if w.cur == wire.StateStall && w.last < t {
		stall = t - w.last
		dur += stall
		time = w.last
	}
	w.add(wire.Instruction{Time: time, Category: c.cat, Duration: int32(dur), Stall: uint32(stall)}, tk.pc)
	if tk.code == 5 {
		w.pcInfos = append(w.pcInfos, pcInfo{idx: len(w.rec.Instructions)})
	}
	w.setState(wire.StateExec, t)
}

func (m *rdnaModel) newPC(w *rdnaWave, t int64, addr uint64) {
	m.bxCheck(w, t)
	if len(w.pcInfos) == 0 || w.trap != trapRestored {
		return
	}
	w.pcInfos = notePC(w.pcInfos, len(w.rec.Instructions), m.translate(addr))
}

// completeWave ends a wave at t; the program end (s_endpgm, no token)
// becomes a MESSAGE when the last instruction ended before t.
func (m *rdnaModel) completeWave(w *rdnaWave, t int64, endPC wire.PC) {
	w.setState(wire.StateEmpty, t)
	w.rec.EndTime = t
	w.complete = true
	if l := w.lastIns(); l != nil && w.trap == trapRestored {
		if e := iend(l); e < t {
			w.add(wire.Instruction{Time: e, Category: wire.CatMessage, Duration: int32(t - e)}, endPC)
		}
	}
}

func (m *rdnaModel) shaderData(tk *rdnaToken) {
	if m.ver > 2 && tk.flags&1 != 0 {
		return
	}
	var flags uint8
	if tk.short {
		flags |= 1 << wire.ShaderDataIMM
	}
	if tk.priv {
		flags |= 1 << wire.ShaderDataPRIV
	}
	m.sdata = append(m.sdata, wire.ShaderData{Time: tk.t, Value: tk.data, CU: tk.sa<<7 + tk.wgp, SIMD: tk.simd,
		WaveID: tk.wid, Flags: flags})
	if len(m.sdata) >= 65536 {
		m.emit(&wire.Batch{Type: wire.TypeShaderData, ShaderData: m.sdata})
		m.sdata = nil
	}
}

func (m *rdnaModel) realtime(clock int64, v uint64) {
	m.rt = append(m.rt, wire.Realtime{ShaderClock: clock, RealtimeClock: v})
}

// reg handles REG tokens: CS=1 compute registers (§2.1.1), CS=0 (and any
// REG on version <= 2) the USERDATA2 protocol (§2.1.2).
func (m *rdnaModel) reg(tk *rdnaToken) {
	pipe := tk.pipe & 3
	data := uint32(tk.data)
	if tk.cs {
		m.computeReg(tk.reg, tk.me, pipe, data)
	}
	if (!tk.cs || m.ver <= 2) && tk.reg == regUserData2 {
		if ev, id, ok := m.userData2(tk.me, pipe, data); ok {
			m.event(tk.t, ev, tk.me, pipe, 0, id&0xFFFFFFFF)
		}
	}
}

// dispatch derives a DISPATCH record (spec §2.1.5) with tt_version = the
// header version.
func (m *rdnaModel) dispatch(t int64, me, pipe uint8) wire.Dispatch {
	d := m.cpState.dispatch(t, me, pipe)
	if m.ver == 1 {
		d.LDSSize = d.LDSSize * 10 / 4
	}
	if m.ver > 1 {
		d.SGPRs = 128
	}
	return d
}

func (m *rdnaModel) flushOcc(final bool) {
	if len(m.occ) == 0 {
		return
	}
	if final {
		for i := range m.occ {
			m.occ[i].PC = m.retranslate(m.occ[i].PC)
		}
	}
	m.emit(&wire.Batch{Type: wire.TypeOccupancy, Occupancy: m.occ})
	m.occ = nil
}

// emitWave stitches and emits one wave (spec §3.5 "after the loop").
func (m *rdnaModel) emitWave(w *rdnaWave, final bool) {
	if final {
		for n := range w.pcInfos {
			w.pcInfos[n].pc = m.retranslate(w.pcInfos[n].pc)
		}
	}
	ins := w.rec.Instructions
	n := m.rstitch(w)
	m.waveInfo(!w.complete, n, len(ins), w.pcInfos)
	if len(m.gaps) > 0 {
		w.insertGaps(m.gaps)
		ins = w.rec.Instructions
	}
	if !w.complete {
		// after stitching, which may lengthen V_MOV_B64 (spec §3.5)
		var e int64
		for i := range ins {
			e = max(e, iend(&ins[i])+4)
		}
		w.rec.EndTime = e
	}
	if m.checkWalk {
		for i := range ins {
			if ins[i].PC != m.retranslate(w.noted[i]) {
				m.failf("sqttgen: internal error: the stitcher puts instruction %d (%v at %d) of wave slot %d at %+v, the walk executed %+v",
					i, ins[i].Category, ins[i].Time, w.rec.WaveID, ins[i].PC, w.noted[i])
				break
			}
		}
	}
	m.emit(&wire.Batch{Type: wire.TypeWave, Waves: []wire.Wave{w.rec}})
}

// emitHeld stitches and emits the waves still held, in slot order.
func (m *rdnaModel) emitHeld() {
	for s := range m.slots {
		for _, w := range m.slots[s] {
			m.emitWave(w, true)
		}
		m.slots[s] = nil
	}
}

// end emits the end-of-buffer records (spec §2.3.6 "End of buffer", §4.3).
func (m *rdnaModel) end() {
	for len(m.q) > 0 {
		m.process(&m.q[0])
		m.q = m.q[1:]
	}
	m.flushOcc(true)
	if len(m.rt) > 0 {
		m.emit(&wire.Batch{Type: wire.TypeRealtime, Realtime: m.rt})
		m.rt = nil
	}
	if len(m.sdata) > 0 {
		m.emit(&wire.Batch{Type: wire.TypeShaderData, ShaderData: m.sdata})
		m.sdata = nil
	}
	if len(m.other) > 0 {
		m.emit(&wire.Batch{Type: wire.TypeInstOtherSIMD, OtherSIMD: m.other})
		m.other = nil
	}
	m.emitHeld()
	if m.dataLost {
		m.emit(&wire.Batch{Type: wire.TypeInfo, Info: []wire.Info{wire.InfoDataLost}})
	}
	if m.rtFreqSet {
		m.emit(&wire.Batch{Type: wire.TypeRTFrequency, RTFrequency: m.rtFreq})
	}
}
