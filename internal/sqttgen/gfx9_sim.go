package sqttgen

import (
	"errors"
	"fmt"
	"io"

	"github.com/attkit/attkit/internal/wire"
)

// rng is splitmix64: fast, and the same sequence on every platform.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// intn returns a number in [0, n).
func (r *rng) intn(n int) int { return int((r.next() >> 32) * uint64(n) >> 32) }

// rangeIn returns a number in [lo, hi].
func (r *rng) rangeIn(lo, hi int) int { return lo + r.intn(hi-lo+1) }

// oneIn reports true once in n calls on average.
func (r *rng) oneIn(n int) bool { return r.intn(n) == 0 }

type kernelInfo struct {
	entry    int32 // line index
	pc       wire.PC
	gpu      uint64 // GPU address of the entry
	me, pipe uint8
}

// Event kinds of a slot actor's queue.
const (
	evStart = iota
	evStall
	evIssue
	evImmed
	evInst
	evInstPC
	evSData
	evEnd
)

// ev is one queued token of a slot: line is the program line an ISSUE or
// INST_PC refers to, data the value of a SHADERDATA.
type ev struct {
	t        int64
	kind     uint8
	typ      uint8
	deferred bool // an INST token that may come after later issues
	line     int32
	data     uint32
}

type walk struct {
	k      *kernelInfo
	cur    int32
	steps  int
	loops  []loopCount // trips left per back-edge in progress
	stack  []int32
	anchor bool
	done   bool // s_endpgm issued
	ready  int64
	// last memory INST type (for XNACK replays), instructions since
	lastMem  uint8
	sinceMem int
	lastInst int64 // time of the latest INST token: they come in issue order
	endAt    int64 // WAVE_END time fixed by an s_endpgm message, -1: none
}

// Actor kinds.
const (
	actSlot = iota
	actOther
	actPerf
	actRT
	actEvents
	actLateLoad
	actCWSR
)

type actor struct {
	t    int64
	id   int
	kind int
	done bool

	simd, slot, cu uint8
	waves          int // waves left to start in this slot
	w              *walk
	q              []ev // queued tokens, by time, from qh on
	qh             int
	prim           int // queued tokens that are not deferred INSTs
	running        bool
	parked         bool // waiting for a context switch (ContextSwitch)
	cw             []cwEv
	cwi            int
}

// push queues e in time order (after the queued tokens of the same time).
func (a *actor) push(e ev) {
	if !e.deferred {
		a.prim++
	}
	if n := len(a.q); n == a.qh || a.q[n-1].t <= e.t {
		a.q = append(a.q, e)
		return
	}
	i := len(a.q)
	for i > a.qh && a.q[i-1].t > e.t {
		i--
	}
	a.q = append(a.q, ev{})
	copy(a.q[i+1:], a.q[i:])
	a.q[i] = e
}

type gen struct {
	cfg     Config
	e       *enc
	m       *model
	r       rng
	prog    *program
	kernels []kernelInfo
	cos     coLayout
	actors  []*actor
	bySIMD  [4][]*actor // slot actors per SIMD (MergeIssues)
	cal     calendar
	slots   int // slot actors not done
	closing bool
	stats   Stats
	err     error
	rtV     uint64
	// holdEnds delays the ends of traced waves until after a late
	// code-object load, so that their PCs can be attributed; occupancy-only
	// waves may end before it (their records are attributed at the flush).
	holdEnds int64
	cut      bool // Truncate: stop now, waves in flight
	// ContextSwitch: slots park between instructions while freeze is
	// set; the CWSR actor then saves and restores their waves.
	freeze bool
	parked []*actor
	// seg is the segment number of a parallel generation (0: the first,
	// which writes the header and the set-up; last: pads the end).
	seg  int
	last bool
}

func newGen(w io.Writer, cfg Config) (*gen, error) {
	return newSegment(w, cfg, 0, true)
}

// newSegment prepares segment seg of a trace: segments after the first
// continue the stream (no header, registers already written) with waves of
// their own.
func newSegment(w io.Writer, cfg Config, seg int, last bool) (*gen, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if cfg.Compat016 {
		cfg.GFX9.BarrierMessages = false
	}
	g := &gen{cfg: cfg, r: rng{s: cfg.Seed ^ 0x5eed5eed5eed5eed}}
	ks0, err := kernelProgram(&g.cfg, &g.r)
	if err != nil {
		return nil, err
	}
	prog, ks, entries, p := ks0.prog, ks0.kernels, ks0.entries, ks0.isa
	g.prog = prog
	g.cos = layoutCodeObjects(&g.cfg, ks, prog)
	for i, k := range ks {
		e := prog.at[entries[i]]
		l := &prog.lines[e]
		if l.cls == clsDontKnow || l.cls == clsBVH || l.text == "" {
			return nil, fmt.Errorf("kernel entry %#x: %q produces no token the stitcher could anchor", k.Entry, l.text)
		}
		if l.dist < 0 {
			return nil, fmt.Errorf("kernel entry %#x: no s_endpgm is reachable", k.Entry)
		}
		g.kernels = append(g.kernels, kernelInfo{entry: e, pc: entries[i], gpu: g.cos.base(k.CodeObjectID) + k.Entry,
			me: uint8(1 - i/4), pipe: uint8(i % 4)})
	}
	if cfg.Emit != nil {
		g.m = newModel(func(b *wire.Batch) {
			if g.err == nil {
				g.err = cfg.Emit(b)
			}
		})
		g.m.isa = p.ISA
		g.m.v016 = cfg.Compat016
		g.m.checkWalk = true
		g.m.fail = func(err error) {
			if g.err == nil {
				g.err = err
			}
		}
	}
	g.e = newEnc(w, g.m)
	g.seg, g.last = seg, last
	if seg > 0 {
		g.r = rng{s: (cfg.Seed ^ 0x5eed5eed5eed5eed) + uint64(seg)*0x9e3779b97f4a7c15*7}
	}
	return g, nil
}

func (g *gen) run() (Stats, error) {
	e := g.e
	if g.seg == 0 {
		g.setUp()
	}
	g.simulate()
	if g.err != nil {
		return g.stats, g.err
	}
	if e.resetPending {
		e.neutralResetEnd()
	}
	// Zero padding to a whole number of 32-byte blocks, as hardware
	// buffers are (MISC tokens with no delta).
	for g.last && e.offset()%32 != 0 {
		e.raw(0, 2)
	}
	if err := e.end(); err != nil {
		return g.stats, err
	}
	if g.err != nil {
		return g.stats, g.err
	}
	g.stats.Bytes = e.offset()
	return g.stats, nil
}

// setUp writes the header, the instrumentation and the kernels' registers.
func (g *gen) setUp() {
	cfg := &g.cfg
	e := g.e
	e.header(Header{Version2: cfg.GFX9.Version2, SIMDMask: 0xF, TargetCU: cfg.GFX9.TargetCU, SE: cfg.GFX9.SE,
		DoubleBuffer: cfg.DoubleBuffer})
	if cfg.Instrument {
		e.reg(0, 1, 0, regUserData2, rocMagic)
		e.reg(0, 1, 0, regUserData2, 0x80201)
		e.reg(0, 1, 0, regUserData2, opAgentInfo|agentRTFreq<<8|100000<<12)
		if cfg.GFX9.PerfInterval > 0 {
			e.reg(0, 1, 0, regUserData2, opAgentInfo|agentPerfInt<<8|(cfg.GFX9.PerfInterval&0xFFFFF)<<12)
		}
		if !cfg.LateLoad {
			g.loadCodeObjects(false)
		}
	}
	for i := range g.kernels {
		g.dispatch(&g.kernels[i])
	}
}

// simulate runs the waves and the other token sources.
func (g *gen) simulate() {
	cfg := &g.cfg
	e := g.e
	id := 0
	add := func(a *actor) {
		a.id = id
		id++
		g.actors = append(g.actors, a)
	}
	t0 := e.clock + 4*int64(g.r.rangeIn(1, 20))
	for simd := 0; simd < cfg.GFX9.SIMDs; simd++ {
		for slot := 0; slot < cfg.WavesPerSIMD; slot++ {
			a := &actor{kind: actSlot, simd: uint8(simd), slot: uint8(slot), waves: cfg.WavesPerSlot,
				t: t0 + 4*int64(g.r.intn(40))}
			a.push(ev{t: a.t, kind: evStart})
			add(a)
			g.bySIMD[simd] = append(g.bySIMD[simd], a)
			g.slots++
		}
	}
	for i := 0; i < cfg.OtherCUs; i++ {
		cu := uint8((int(cfg.GFX9.TargetCU) + 1 + i) % 16)
		for j := 0; j < 2; j++ {
			add(&actor{kind: actOther, cu: cu, simd: uint8(g.r.intn(4)), slot: uint8(g.r.intn(10)),
				t: t0 + 4*int64(g.r.intn(100))})
		}
	}
	if cfg.GFX9.Perf {
		add(&actor{kind: actPerf, t: t0 + 4*int64(g.r.rangeIn(10, 100))})
	}
	if cfg.Instrument {
		add(&actor{kind: actRT, t: t0 + 4*int64(g.r.rangeIn(10, 500))})
		if cfg.LateLoad && g.seg == 0 {
			a := &actor{kind: actLateLoad, t: t0 + 4*int64(g.r.rangeIn(50, 200))}
			g.holdEnds = a.t + 8
			add(a)
		}
		// One base per capture (Config.RealtimeBase). A later segment of a
		// parallel generation does not know where its clock starts, so its
		// samples move up by 16 high words a segment, which keeps the
		// realtime clock rising over the whole trace. The draws that made
		// a random base stay, so that a seed makes the trace it made before.
		_, _ = g.r.intn(16), g.r.intn(0x800)
		g.rtV = g.cfg.RealtimeBase + uint64(g.seg)<<36
	}
	if cfg.GFX9.ContextSwitch {
		add(&actor{kind: actCWSR, t: t0 + 4*int64(g.r.rangeIn(50, 1000))})
	}
	if cfg.Events {
		add(&actor{kind: actEvents, t: t0 + 4*int64(g.r.rangeIn(10, 200))})
	}
	g.cal.init(e.clock)
	for _, a := range g.actors {
		g.cal.push(a)
	}
	for g.err == nil && e.err == nil && !g.cut {
		a := g.cal.pop()
		if a == nil {
			break
		}
		g.step(a)
		// A slot whose next token is due before anything else runs on.
		for a.kind == actSlot && !a.done && !a.parked && g.err == nil && !g.cut && g.cal.skipTo(a.t) {
			g.step(a)
		}
		if !a.done && !a.parked {
			g.cal.push(a)
		}
	}
}

// calendar orders the actors by their next event time: a ring of buckets
// of 4-cycle slots (all token times are multiples of 4), and a list for
// times beyond the ring. Actors due at the same time run in the order they
// were queued, which keeps every actor's own events in order.
type calendar struct {
	b    [calSlots][]*actor
	head int // next index to take in the current bucket
	now  int64
	far  []*actor
	n    int
}

const (
	calSlots = 8192
	calSpan  = 4 * calSlots
)

func (c *calendar) init(now int64) { c.now = now - now%4 }

// slotOf is the ring index of time t (t >= 0; calSlots is a power of 2).
func slotOf(t int64) uint64 { return uint64(t) >> 2 & (calSlots - 1) }

func (c *calendar) push(a *actor) {
	c.n++
	if a.t-c.now >= calSpan {
		c.far = append(c.far, a)
		return
	}
	i := slotOf(a.t)
	c.b[i] = append(c.b[i], a)
}

func (c *calendar) pop() *actor {
	for c.n > 0 {
		i := slotOf(c.now)
		if c.head < len(c.b[i]) {
			a := c.b[i][c.head]
			c.head++
			c.n--
			return a
		}
		c.advance()
	}
	return nil
}

// advance moves to the next slot; the current one must be exhausted.
func (c *calendar) advance() {
	i := slotOf(c.now)
	c.b[i] = c.b[i][:0]
	c.head = 0
	c.now += 4
	if i%(calSlots/2) == 0 && len(c.far) > 0 {
		keep := c.far[:0]
		for _, a := range c.far {
			if a.t-c.now < calSpan/2 {
				j := slotOf(a.t)
				c.b[j] = append(c.b[j], a)
			} else {
				keep = append(keep, a)
			}
		}
		c.far = keep
	}
}

// skipTo reports whether an actor (not queued) due at t, a little after
// now, is the next to run, and if so moves the calendar to t.
func (c *calendar) skipTo(t int64) bool {
	if t == c.now {
		return true
	}
	if t-c.now > 64 || c.head < len(c.b[slotOf(c.now)]) {
		return false
	}
	for u := c.now + 4; u < t; u += 4 {
		if len(c.b[slotOf(u)]) > 0 {
			return false
		}
	}
	for c.now < t {
		c.advance()
	}
	return true
}

// loadCodeObjects writes the CODEOBJ packets of every code object.
func (g *gen) loadCodeObjects(fromStart bool) {
	e := g.e
	d := uint64(0)
	put := func(typ uint32, v uint32) {
		e.reg(d, 1, 0, regUserData2, opCodeObj|typ<<8)
		e.reg(0, 1, 0, regUserData2, v)
	}
	for _, c := range g.cos {
		legacy := c.id != 0 && c.id < 1<<30 && g.r.oneIn(2)
		if !legacy {
			put(coIDLo, uint32(c.id))
			put(coIDHi, uint32(c.id>>32))
		}
		put(coAddrLo, uint32(c.base))
		put(coAddrHi, uint32(c.base>>32))
		put(coSizeLo, uint32(c.size))
		put(coSizeHi, uint32(c.size>>32))
		tail := uint32(0)
		if fromStart || g.r.oneIn(2) {
			tail |= 2
		}
		if legacy {
			tail |= uint32(c.id) << 2
		}
		put(coTail, tail)
	}
}

// dispatch writes a kernel's register state (and initiator).
func (g *gen) dispatch(k *kernelInfo) {
	e := g.e
	me, pipe := uint64(k.me), uint64(k.pipe)
	pgm := k.gpu >> 8
	e.regCS(0, me, pipe, regPgmLo, uint32(pgm))
	e.regCS(0, me, pipe, regPgmHi, uint32(pgm>>32))
	if !g.cfg.Dispatch {
		return
	}
	pkt := g.r.next() & (1<<48 - 1) &^ 63
	e.regCS(0, me, pipe, regDispatchPktLo, uint32(pkt))
	e.regCS(0, me, pipe, regDispatchPktHi, uint32(pkt>>32))
	e.regCS(0, me, pipe, regNumThreadX, uint32(64<<g.r.intn(5)))
	e.regCS(0, me, pipe, regNumThreadX+1, uint32(1+g.r.intn(8)))
	e.regCS(0, me, pipe, regNumThreadX+2, uint32(1+g.r.intn(4)))
	r1 := uint32(g.r.intn(64)) | uint32(g.r.intn(8))<<7 | uint32(g.r.intn(2))<<10 |
		uint32(g.r.intn(2))<<11 | uint32(g.r.intn(2))<<14
	r2 := uint32(g.r.intn(2)) | uint32(g.r.intn(32))<<1 // LDS field (bits 15..23) left 0
	e.regCS(0, me, pipe, regPgmRsrc1, r1)
	e.regCS(0, me, pipe, regPgmRsrc2, r2)
	e.regCS(0, me, pipe, regPgmRsrc3, uint32(g.r.next()))
	e.regCS(0, me, pipe, regDispatchInitiator, 1|uint32(g.r.intn(2))<<1)
}

func (g *gen) step(a *actor) {
	switch a.kind {
	case actSlot:
		g.stepSlot(a)
	case actOther:
		e := g.e
		d := e.at(a.t)
		if a.running {
			e.waveEnd(d, 0, uint64(a.cu), uint64(a.simd), uint64(a.slot))
			a.running = false
			if g.closing {
				a.done = true
				return
			}
			a.t += 4 * int64(g.r.rangeIn(1, 200))
			return
		}
		if g.closing {
			a.done = true
			return
		}
		k := &g.kernels[g.r.intn(len(g.kernels))]
		e.waveStart(d, 0, uint64(a.cu), uint64(a.simd), uint64(a.slot), uint64(k.me), uint64(k.pipe),
			uint64(g.r.intn(64)), uint64(g.r.intn(8)))
		a.running = true
		a.t += 4 * int64(g.r.rangeIn(20, 2000))
	case actPerf:
		if g.closing {
			a.done = true
			return
		}
		e := g.e
		d := e.at(a.t)
		cu := g.cfg.GFX9.TargetCU
		if g.cfg.OtherCUs > 0 && g.r.oneIn(2) {
			cu = uint8((int(g.cfg.GFX9.TargetCU) + 1 + g.r.intn(g.cfg.OtherCUs)) % 16)
		}
		var c [4]uint16
		for i := range c {
			c[i] = uint16(g.r.intn(1 << 13))
		}
		e.perf(d, uint64(cu), uint64(g.r.intn(2)), c)
		a.t += 4 * int64(g.r.rangeIn(50, 500))
	case actRT:
		if g.closing {
			a.done = true
			return
		}
		e := g.e
		d := e.at(a.t)
		v := g.rtV + uint64(a.t)/20
		now := uint32(v + uint64(g.r.intn(4)))
		e.reg(d, 1, 0, regUserData3, opRTStamp)
		e.reg(0, 1, 0, regUserData3, uint32(v))
		e.reg(0, 1, 0, regUserData3, uint32(v>>32))
		e.reg(0, 1, 0, regUserData3, now)
		step := int64(g.r.rangeIn(500, 5000))
		a.t += 4 * step
	case actEvents:
		if g.closing {
			if g.e.resetPending {
				g.e.neutralResetEnd()
			}
			a.done = true
			return
		}
		e := g.e
		d := e.at(a.t)
		switch g.r.intn(5) {
		case 0:
			e.regCS(d, 1, 0, regNowhere, 7)
		case 1:
			// MISC tokens carry their own 8-bit delta.
			e.misc(d, miscTTStallBeg)
			e.misc(0, miscTTStallEnd)
		case 2:
			k := &g.kernels[g.r.intn(len(g.kernels))]
			e.regCS(d, uint64(k.me), uint64(k.pipe), regNowhere, 7)
		case 3:
			if g.cfg.PacketLoss {
				e.misc(d, miscPacketLost)
			}
		case 4:
			switch {
			case g.seg > 0: // later segments do not know the time base
				e.misc(d, miscTime)
			case e.resetPending:
				e.misc(d, miscTime)
				e.neutralResetEnd()
			case g.r.oneIn(2):
				// The TIME token comes at a later step, after other
				// tokens (the decoder's look-ahead queue).
				e.neutralResetBegin(d)
			default:
				e.misc(d, miscTime)
				e.timeResetNeutral()
			}
		}
		a.t = e.clock + 4*int64(g.r.rangeIn(20, 400))
	case actCWSR:
		switch {
		case len(a.cw) > 0:
			g.stepContextSwitch(a)
		case g.closing:
			a.done = true
		case !g.freeze:
			g.freeze = true
			a.t += 4
		case len(g.parked) < g.slots:
			a.t += 32
		default:
			g.planContextSwitch(a)
			g.stepContextSwitch(a)
		}
	case actLateLoad:
		d := g.e.at(a.t)
		g.e.misc(d, miscTime)
		g.loadCodeObjects(true)
		a.done = true
	}
}

// cwEv is one token of a context switch: the SAVE_CONTEXT MISC (p nil),
// a save or restore WAVE_START, or the INST PC + INST_PC of a restore.
type cwEv struct {
	t    int64
	kind uint8 // 0 save MISC, 1 save, 2 restore, 3 new PC
	p    *actor
}

// planContextSwitch lays out the tokens that save and restore every parked
// wave (spec §2.2.6: MISC SAVE_CONTEXT, a WAVE_START with count > 64 to
// save, another to restore, then an INST of type PC and an INST_PC with the
// PC the wave resumes at).
func (g *gen) planContextSwitch(a *actor) {
	r := &g.r
	t := a.t
	a.cw = append(a.cw[:0], cwEv{t: t})
	var live []*actor
	for _, p := range g.parked {
		if p.w != nil {
			live = append(live, p)
		}
	}
	for _, p := range live {
		t += 4 * int64(r.rangeIn(1, 3))
		a.cw = append(a.cw, cwEv{t: t, kind: 1, p: p})
	}
	t += 4 * int64(r.rangeIn(20, 300))
	for _, p := range live {
		t += 4 * int64(r.rangeIn(1, 3))
		a.cw = append(a.cw, cwEv{t: t, kind: 2, p: p})
	}
	for _, p := range live {
		t += 4 * int64(r.rangeIn(1, 3))
		a.cw = append(a.cw, cwEv{t: t, kind: 3, p: p})
	}
	a.cwi = 0
}

// stepContextSwitch writes the next token of the context switch and, after
// the last, lets the slots run again.
func (g *gen) stepContextSwitch(a *actor) {
	e, pr := g.e, g.prog
	c := a.cw[a.cwi]
	a.cwi++
	d := e.at(c.t)
	cu := uint64(g.cfg.GFX9.TargetCU)
	switch c.kind {
	case 0:
		e.misc(d, miscSaveContext)
	case 1, 2:
		p := c.p
		e.waveStart(d, 0, cu, uint64(p.simd), uint64(p.slot), uint64(p.w.k.me), uint64(p.w.k.pipe), 70, 0)
	case 3:
		p, w := c.p, c.p.w
		for w.cur >= 0 && pr.lines[w.cur].kind == kindNoToken {
			w.cur = pr.lines[w.cur].next
		}
		if w.cur < 0 {
			if g.err == nil {
				g.err = errors.New("the simulated wave left the indexed program")
			}
			return
		}
		e.inst(d, uint64(p.simd), uint64(p.slot), instPC)
		pc := pr.lines[w.cur].pc
		e.instPC(0, uint64(p.simd), uint64(p.slot), g.cos.base(pc.CodeObjectID)+pc.Address)
		w.anchor = true
		w.ready = max(w.ready, c.t+4*int64(g.r.rangeIn(1, 4)))
	}
	if a.cwi < len(a.cw) {
		a.t = a.cw[a.cwi].t
		return
	}
	a.cw = a.cw[:0]
	g.freeze = false
	for _, p := range g.parked {
		p.parked = false
		p.t = e.clock
		if p.w != nil {
			p.w.ready = max(p.w.ready, e.clock)
			p.t = p.w.ready
		}
		g.cal.push(p)
	}
	g.parked = g.parked[:0]
	a.t = e.clock + 4*int64(g.r.rangeIn(500, 4000))
}

var issueStatus = [...]uint8{evStall: issueStall, evIssue: issueInst, evImmed: issueImmed}

// issueToken writes the ISSUE token of ev for slot a, together with the
// ISSUE statuses other slots of the same SIMD have due at the same time
// (one token carries the statuses of all ten wave slots).
func (g *gen) issueToken(a *actor, first *ev, d uint64) {
	if !g.cfg.GFX9.MergeIssues {
		var pc wire.PC
		if first.kind != evStall {
			pc = g.prog.lines[first.line].pc
			g.stats.Instructions++
		}
		g.e.issue1(d, uint64(a.simd), uint64(a.slot), issueStatus[first.kind], pc)
		return
	}
	var st [10]uint8
	var pcs [10]wire.PC
	add := func(b *actor, x *ev) {
		st[b.slot] = issueStatus[x.kind]
		if x.kind != evStall {
			pcs[b.slot] = g.prog.lines[x.line].pc
			g.stats.Instructions++
		}
	}
	add(a, first)
	if g.cfg.GFX9.MergeIssues {
		for _, b := range g.bySIMD[a.simd] {
			if b == a || b.done || b.parked || b.qh >= len(b.q) {
				continue
			}
			h := &b.q[b.qh]
			if h.t != first.t || h.deferred || h.kind != evStall && h.kind != evIssue && h.kind != evImmed {
				continue
			}
			add(b, h)
			b.qh++
			b.prim--
			if b.qh == len(b.q) {
				b.q, b.qh = b.q[:0], 0
			}
		}
	}
	g.e.issue(d, uint64(a.simd), &st, &pcs)
}

// stepSlot writes the slot's next event and plans more when its queue is
// empty.
// refill plans the slot's next tokens when only deferred ones are left;
// during a freeze it parks the slot once nothing is queued.
func (g *gen) refill(a *actor) {
	for a.prim == 0 && !a.done && !a.parked {
		if g.freeze {
			if a.qh >= len(a.q) {
				a.parked = true
				g.parked = append(g.parked, a)
			}
			return
		}
		g.plan(a)
	}
}

func (g *gen) stepSlot(a *actor) {
	g.refill(a)
	if a.parked || a.qh >= len(a.q) {
		return
	}
	if t := a.q[a.qh].t; t > a.t {
		a.t = t // planned just now (after a context switch): not due yet
		return
	}
	ev := a.q[a.qh]
	a.qh++
	if !ev.deferred {
		a.prim--
	}
	if a.qh == len(a.q) {
		a.q, a.qh = a.q[:0], 0
	}
	e := g.e
	d := e.at(ev.t)
	simd, slot := uint64(a.simd), uint64(a.slot)
	g.stats.Tokens++
	switch ev.kind {
	case evStart:
		k := &g.kernels[g.r.intn(len(g.kernels))]
		e.waveStart(d, 0, uint64(g.cfg.GFX9.TargetCU), simd, slot, uint64(k.me), uint64(k.pipe),
			uint64(g.r.intn(64)), uint64(g.r.intn(8)))
		a.w = &walk{k: k, cur: k.entry, anchor: true, ready: ev.t + 4*int64(g.r.rangeIn(1, 12)), lastMem: 0xFF, endAt: -1}
		g.stats.Waves++
	case evStall, evIssue, evImmed:
		g.issueToken(a, &ev, d)
	case evInst:
		e.inst(d, simd, slot, uint64(ev.typ))
	case evInstPC:
		pc := g.prog.lines[ev.line].pc
		e.instPC(d, simd, slot, g.cos.base(pc.CodeObjectID)+pc.Address)
	case evSData:
		e.shaderData(d, 0, uint64(g.cfg.GFX9.TargetCU), simd, slot, ev.data)
	case evEnd:
		e.waveEnd(d, 0, uint64(g.cfg.GFX9.TargetCU), simd, slot)
		a.w = nil
	}
	g.refill(a)
	if a.parked || a.done {
		return
	}
	if a.qh >= len(a.q) {
		a.done = true
		return
	}
	a.t = a.q[a.qh].t
}

// plan fills the slot's queue with the tokens of its next step.
func (g *gen) plan(a *actor) {
	w := a.w
	if w == nil {
		more := a.waves > 1
		if g.cfg.TargetBytes > 0 {
			more = g.e.offset() < g.cfg.TargetBytes
		}
		a.waves--
		if !more {
			if g.cfg.Truncate {
				g.cut = true
			}
			a.done = true
			g.slots--
			if g.slots == 0 {
				g.closing = true
			}
			return
		}
		a.push(ev{t: g.e.clock + 4*int64(g.r.rangeIn(1, 50)), kind: evStart})
		return
	}
	if w.done {
		if w.endAt >= 0 {
			// The wave ends with its s_endpgm message (EndpgmMessage).
			end := max(w.endAt, g.holdEnds, g.e.clock)
			if n := len(a.q); n > a.qh {
				end = max(end, a.q[n-1].t) // after what is still queued
			}
			a.push(ev{t: end, kind: evEnd})
			return
		}
		a.push(ev{t: max(w.ready+4*int64(g.r.rangeIn(0, 5)), g.holdEnds, w.lastInst+4), kind: evEnd})
		return
	}
	if err := g.planInst(a, w); err != nil && g.err == nil {
		g.err = err
		a.done = true
	}
}

// planInst queues the tokens of the wave's next instruction that produces
// one and moves the wave past it: the instruction itself, or now and then
// a trap detour or an XNACK replay before it.
func (g *gen) planInst(a *actor, w *walk) error {
	if err := g.skipNoToken(w); err != nil {
		return err
	}
	pr := g.prog
	l := &pr.lines[w.cur]
	w.steps++
	if g.cfg.GFX9.Traps && g.r.oneIn(150) {
		g.planTrap(a, w)
		return nil
	}
	if g.cfg.GFX9.Replays && w.lastMem != 0xFF && w.sinceMem >= 1 && g.r.oneIn(12) {
		g.planReplay(a, w)
	}
	if w.steps > g.cfg.MaxWaveInsts+4*len(pr.lines)+1000 {
		return fmt.Errorf("wave does not reach s_endpgm (at %#x)", l.pc.Address)
	}
	next := l.next
	w.sinceMem++
	switch l.kind {
	case kindPlain:
		g.planPlain(a, w, l)
	case kindImmed:
		w.ready = g.immed(a, w.ready, w.cur, true) + g.gap()
	case kindTTrace:
		g.planTTrace(a, w)
	case kindBarrier:
		g.planBarrier(a, w)
	case kindEndpgm:
		g.planEndpgm(a, w)
	case kindBranch, kindBranchCond:
		next = g.planBranch(a, w, l)
	case kindSetPC, kindSwapPC:
		return g.planJump(a, w, l)
	}
	w.anchor = false
	if !w.done {
		w.cur = next
	}
	return nil
}

// skipNoToken moves the wave past the instructions that produce no token
// to the next one that does (program.skipNoToken).
func (g *gen) skipNoToken(w *walk) (err error) {
	w.cur, err = g.prog.skipNoToken(w.cur, w.anchor, func(i int32) (bool, bool) {
		l := &g.prog.lines[i]
		return l.kind == kindNoToken, l.cls == clsSkip
	})
	return err
}

// planTrap sends the wave to its trap handler (INST GO_TO_TRAP, category
// CONTEXT) and it comes back to the next instruction: INST of type PC and
// INST_PC (spec §2.2.6), a stitch anchor.
func (g *gen) planTrap(a *actor, w *walk) {
	r := &g.r
	t := w.ready
	a.push(ev{t: t, kind: evIssue, line: w.cur})
	tn := max(t+4*int64(r.rangeIn(0, 2)), w.lastInst)
	a.push(ev{t: tn, kind: evInst, typ: instGoToTrap})
	tb := tn + 4*int64(r.rangeIn(5, 200))
	a.push(ev{t: tb, kind: evInst, typ: instPC})
	a.push(ev{t: tb, kind: evInstPC, line: w.cur})
	w.lastInst = tb
	w.ready = tb + 4*int64(r.rangeIn(1, 4))
	w.anchor = true
}

// planReplay queues an XNACK replay of the last memory instruction: its
// own ISSUE and INST; the decoder extends the original and drops it.
func (g *gen) planReplay(a *actor, w *walk) {
	r := &g.r
	a.push(ev{t: w.ready, kind: evIssue, line: w.cur})
	tn := max(w.ready+4*int64(r.rangeIn(0, 20)), w.lastInst)
	w.lastInst = tn
	a.push(ev{t: tn, kind: evInst, typ: replayType[w.lastMem]})
	w.ready = tn + 4*int64(r.rangeIn(0, 2))
	w.lastMem = 0xFF
}

// planPlain issues an ordinary instruction (of its type or, at random, of
// its alternative type), memory ones with a longer delay, some of them
// pipelined, and now and then shader data after it.
func (g *gen) planPlain(a *actor, w *walk, l *line) {
	r := &g.r
	typ := l.typ
	if l.alt != 0xFF && r.oneIn(2) {
		typ = l.alt
	}
	if replayType[typ&31] != 0 {
		w.lastMem, w.sinceMem = typ, 0
	}
	delay := 2
	switch l.cls {
	case clsVMEM, clsFLAT, clsLDS:
		delay = 8
	}
	pipe := false
	if g.cfg.GFX9.Pipeline && delay == 8 && r.oneIn(2) {
		pipe, delay = true, 40
	}
	w.ready = g.issueInstr(a, w, w.ready, w.cur, typ, delay, pipe) + g.gap()
	if g.cfg.ShaderData && r.oneIn(g.cfg.GFX9.ShaderDataEvery) {
		a.push(ev{t: w.ready, kind: evSData, data: uint32(r.next())})
	}
}

// planTTrace issues s_ttracedata: an IMMED and its shader data.
func (g *gen) planTTrace(a *actor, w *walk) {
	t := w.ready
	end := g.immed(a, t, w.cur, false)
	a.push(ev{t: t, kind: evSData, data: uint32(g.r.next())})
	w.ready = end + g.gap()
}

// planBarrier issues s_barrier as an IMMED, after an OTHER_MSG at a stitch
// anchor or (with BarrierMessages) at random.
func (g *gen) planBarrier(a *actor, w *walk) {
	r := &g.r
	t, li := w.ready, w.cur
	// At a stitch anchor the newest stitcher wants MESSAGE + IMMED
	// (spec §3.5 step 4), which 0.1.6 does not have (A.3 item 2).
	if w.anchor && !g.cfg.Compat016 || g.cfg.GFX9.BarrierMessages && r.oneIn(2) {
		a.push(ev{t: t, kind: evIssue, line: li})
		tn := max(t+4*int64(r.intn(3)), w.lastInst)
		w.lastInst = tn
		a.push(ev{t: tn, kind: evInst, typ: instOtherMsg})
		t = tn + 4*int64(r.rangeIn(1, 30))
	}
	w.ready = g.immed(a, t, li, false) + g.gap()
}

// planEndpgm issues s_endpgm, an IMMED or (EndpgmMessage) an OTHER_MSG at
// the wave's end, and ends the walk.
func (g *gen) planEndpgm(a *actor, w *walk) {
	t, li := w.ready, w.cur
	w.done = true
	if g.cfg.GFX9.EndpgmMessage {
		tn := max(t, w.lastInst)
		a.push(ev{t: tn, kind: evIssue, line: li})
		a.push(ev{t: tn, kind: evInst, typ: instOtherMsg})
		w.lastInst, w.ready, w.endAt = tn, tn, tn
		return
	}
	w.ready = g.immed(a, t, li, false)
}

// planBranch issues a branch, taken or not (decide), and returns the line
// the wave goes on at.
func (g *gen) planBranch(a *actor, w *walk, l *line) int32 {
	next := l.next
	typ := uint8(instNext)
	if g.decide(w, l) {
		typ, next = instJump, l.target
	}
	w.ready = g.issueInstr(a, w, w.ready, w.cur, typ, 2, false) + g.gap()
	return next
}

// planJump issues s_setpc or s_swappc: a call to a function entry (pushing
// the return line) or a return (popping it), as INST PC + INST_PC at the
// destination, a stitch anchor.
func (g *gen) planJump(a *actor, w *walk, l *line) error {
	pr := g.prog
	r := &g.r
	dest := l.next
	if l.kind == kindSwapPC {
		if len(pr.funcs) > 0 && r.oneIn(2) && len(w.stack) < 64 {
			dest = pr.funcs[r.intn(len(pr.funcs))]
			w.stack = append(w.stack, l.next)
		}
	} else if n := len(w.stack); n > 0 {
		dest, w.stack = w.stack[n-1], w.stack[:n-1]
	}
	if dest < 0 || pr.lines[dest].kind == kindNoToken && pr.lines[dest].cls != clsSkip {
		dest = l.next
	}
	if dest < 0 {
		return fmt.Errorf("%#x: %q: no destination in the program", l.pc.Address, l.text)
	}
	tn := g.issueInstr(a, w, w.ready, w.cur, instPC, 2, false)
	a.push(ev{t: tn, kind: evInstPC, line: dest})
	w.ready = tn + g.gap()
	w.cur = dest
	w.anchor = true
	return nil
}

// replayType maps memory INST types to their XNACK replay types (0: none).
var replayType = [32]uint8{instSMEMRd: 19, instSMEMWr: 20, instVMEMRd: 21, instVMEMWr: 22, instFLATWr: 23, instFLATRd: 24}

func (g *gen) gap() int64 {
	r := &g.r
	switch v := r.next(); {
	case v&15 == 0:
		return 4 * int64(4+int((v>>8)%37))
	case v&0x30 == 0:
		return 0
	default:
		return 4 * int64(1+int((v>>8)%3))
	}
}

// issueInstr queues an optional STALL, the ISSUE and the INST token of one
// instruction at t and returns when the wave may issue again: after the
// INST token, or 4 cycles after the ISSUE when pipe defers the INST token
// past later issues (INST tokens still come in issue order).
func (g *gen) issueInstr(a *actor, w *walk, t int64, li int32, typ uint8, delay int, pipe bool) int64 {
	r := &g.r
	v := r.next()
	if v%6 == 0 {
		a.push(ev{t: t, kind: evStall})
		t += 4 * int64(1+(v>>8)%6)
	}
	a.push(ev{t: t, kind: evIssue, line: li})
	tn := max(t+4*int64((v>>16)%uint64(delay+1)), w.lastInst)
	w.lastInst = tn
	a.push(ev{t: tn, kind: evInst, typ: typ, deferred: pipe})
	if pipe {
		return t + 4
	}
	return tn
}

// immed queues an ISSUE IMMED at t and returns when the wave may issue
// again; wait makes some of them long (s_waitcnt, s_nop).
func (g *gen) immed(a *actor, t int64, li int32, wait bool) int64 {
	a.push(ev{t: t, kind: evImmed, line: li})
	if wait {
		if v := g.r.next(); v%3 == 0 {
			return t + 4*int64(1+(v>>8)%100)
		}
	}
	return t + 4
}

// decide says whether a branch is taken: loops (backward branches) run a
// seeded number of trips, forward branches go either way; after
// MaxWaveInsts the wave heads for the nearest s_endpgm.
func (g *gen) decide(w *walk, l *line) bool {
	if l.target < 0 {
		return false
	}
	if l.kind == kindBranch || l.next < 0 {
		return true
	}
	pr := g.prog
	if w.steps > g.cfg.MaxWaveInsts {
		dt, dn := pr.lines[l.target].dist, pr.lines[l.next].dist
		return dt >= 0 && (dn < 0 || dt < dn)
	}
	idx := w.cur
	if pr.lines[l.target].pc.Address <= l.pc.Address {
		k := -1
		for i := range w.loops {
			if w.loops[i].line == idx {
				k = i
				break
			}
		}
		if k < 0 {
			k = len(w.loops)
			w.loops = append(w.loops, loopCount{line: idx, left: int32(g.trips()) - 1})
		}
		if w.loops[k].left > 0 {
			w.loops[k].left--
			return true
		}
		w.loops[k] = w.loops[len(w.loops)-1]
		w.loops = w.loops[:len(w.loops)-1]
		return false
	}
	return g.r.oneIn(2)
}

type loopCount struct{ line, left int32 }

func (g *gen) trips() int {
	r := &g.r
	max := g.cfg.MaxTrips
	switch {
	case r.oneIn(20):
		return r.rangeIn(1, max)
	case r.oneIn(4):
		return r.rangeIn(1, min(64, max))
	}
	return r.rangeIn(1, min(8, max))
}
