package sqttgen

import (
	"bytes"
	"container/heap"
	"fmt"
	"io"
	"strings"

	"github.com/attkit/attkit/internal/wire"
)

// RDNA selects an RDNA trace (gfx10, gfx11, gfx12; spec §1.2, §1.3, §2.3,
// §2.4) for GenerateRDNA and tunes what it contains. Zero values select
// the defaults noted on each field.
//
// An RDNA trace has no software header: it starts with a HEADER token, the
// stream is nibble-aligned with a time delta in every token, and only one
// SIMD of one WGP (the target) is traced in detail. The generator writes
// wave starts and ends of the target SIMD (up to 16 wave slots) and of
// other SIMDs and WGPs (occupancy only), INST / VALU_INST / IMM_ONE /
// IMMEDIATE / WAVE_READY / NEW_PC tokens for the simulated waves, and
// optionally other-SIMD instructions, dispatches, events, shader data,
// realtime samples and code-object instrumentation (Config fields).
type RDNA struct {
	GFXIP   int   // 10, 11 or 12
	Version uint8 // HEADER version: gfx10 1 or 2 (default 2); gfx11 3; gfx12 4

	TargetSA, TargetWGP, TargetSIMD uint8 // traced shader array (0, 1), WGP (0..7), SIMD (0..3)
	DPRate, DPDerate                uint8 // HEADER DPRate (4 bits) and dp_derate (3 bits)

	// ExtStarts writes some wave starts as WAVE_START_EXT (gfx12: with
	// workgroup ids and extension bytes).
	ExtStarts bool
	// OtherSIMD writes INST tokens of instructions run by the other SIMD
	// (gfx11, gfx12; INST_OTHER_SIMD records).
	OtherSIMD bool
	// ExecTokens writes the 8-bit ALU_EXEC and VMEM_EXEC tokens every few
	// cycles, with time deltas, as real RDNA hardware does (real traces
	// gfx1100_gemm_0, gfx1200_gemm_0: thousands of them; spec §2.3.2).
	// The parser ignores them apart from their time.
	ExecTokens bool
	// Noise writes tokens the parser ignores (WAVE_ALLOC, UTIL_COUNTER,
	// EVENT_SYNC, EXEC_POPCOUNT, MISC without flags, other registers) and
	// NOP nibbles.
	Noise bool
	// Reorder writes some WAVE_READY tokens right after an instruction
	// token of the same wave at the same time. gfx10/11 deliver them one
	// cycle early, so the reader's queue must move them before that
	// instruction (spec §2.3.1); on gfx12 they stall the next one.
	Reorder bool
	// ExcludeBarrierWait (gfx12) sets the HEADER's exclude_barrier_wait
	// bit: s_barrier_wait produces no token and the stitcher inserts an
	// IMMED for it (spec §3.5 step 9, §3.6).
	ExcludeBarrierWait bool
	// Lookahead (with ExcludeBarrierWait) lets IMMED tokens come next to
	// an excluded wait, where the stitcher decides by its look-ahead
	// whether the wait had a token (spec §3.5 step 9). The expected
	// records follow the stitcher, so the PCs may differ from the ones
	// the waves executed (the walk check is off).
	Lookahead bool
	// DropTokens leaves out the token of some executed instructions (not
	// branches, jumps or stitch anchors), as a lossy trace would: the
	// stitcher's mismatch rules decide the PCs (spec §3.5 steps 8-11,
	// STITCH_INCOMPLETE), so the walk check is off.
	DropTokens bool
	// ContextSwitch saves and restores some target waves (WAVE_START
	// count 66..89, then INST 117 and NEW_PC at the resume PC; spec
	// §2.3.6): a CONTEXT instruction, contexts 2, an occupancy end and
	// start.
	ContextSwitch bool
}

// GenerateRDNA returns an RDNA trace and the records a correct decoder
// emits for it, in callback order. Of cfg it uses Index, ISA, Kernels,
// Seed, WavesPerSIMD (target wave slots, 1..16, default 4), WavesPerSlot,
// OtherCUs (2 x OtherCUs occupancy-only wave locations on other SIMDs and
// WGPs; -1 for none), DoubleBuffer (gfx12 header bit), Instrument (code
// object loads, realtime frequency and TIMESTAMP realtime samples),
// LateLoad, LoadAddress, Dispatch (REG_INIT dispatches), ShaderData,
// Events (EVENT and MISC tokens), PacketLoss (gfx11/12: a TIMESTAMP
// packet-loss flag hides some wave ends of occupancy-only waves),
// Truncate (the trace ends soon after the first wave slot is done, with
// other waves in flight), MaxTrips, MaxWaveInsts, TargetBytes and Emit.
// Compat016 gives the 0.1.6 library's records (no gfx10/11 barrier
// extension, waves emitted at their WAVE_END and the other differences
// listed on rdnaModel.compat016). The gfx9-only fields (Version2, TargetCU,
// SIMDs, Perf, PerfInterval, BarrierMessages, Replays, Pipeline) are not
// used.
func GenerateRDNA(cfg Config, r RDNA) ([]byte, []wire.Batch, error) {
	var buf bytes.Buffer
	var want []wire.Batch
	user := cfg.Emit
	cfg.Emit = func(b *wire.Batch) error {
		want = append(want, b.Clone())
		if user != nil {
			return user(b)
		}
		return nil
	}
	if _, err := GenerateRDNATo(&buf, cfg, r); err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), want, nil
}

// GenerateRDNATo writes an RDNA trace to w as it is made; cfg.Emit, when
// set, receives the expected records.
func GenerateRDNATo(w io.Writer, cfg Config, r RDNA) (Stats, error) {
	g, err := newRDNAGen(w, cfg, r)
	if err != nil {
		return Stats{}, err
	}
	return g.run()
}

func (r *RDNA) defaults() error {
	switch r.GFXIP {
	case 10:
		if r.Version == 0 {
			r.Version = 2
		}
		if r.Version != 1 && r.Version != 2 {
			return fmt.Errorf("gfx10 header version %d: want 1 or 2", r.Version)
		}
	case 11:
		r.Version = 3
	case 12:
		r.Version = 4
	default:
		return fmt.Errorf("RDNA GFXIP %d: want 10, 11 or 12", r.GFXIP)
	}
	if r.TargetSA > 1 || r.TargetWGP > 7 || r.TargetSIMD > 3 {
		return fmt.Errorf("target SA %d, WGP %d, SIMD %d: want 0..1, 0..7, 0..3", r.TargetSA, r.TargetWGP, r.TargetSIMD)
	}
	if r.GFXIP < 11 {
		r.OtherSIMD = false
	}
	if r.GFXIP != 12 {
		r.ExcludeBarrierWait = false
	}
	if !r.ExcludeBarrierWait {
		r.Lookahead = false
	}
	return nil
}

// Line kinds of the RDNA walk.
const (
	rkNoToken = iota
	rkPlain
	rkValu
	rkImmed
	rkBarrier
	rkBarrierSignal
	rkEndpgm
	rkBranch
	rkBranchCond
	rkSetPC
	rkSwapPC
)

type rdnaLine struct {
	cls  lineClass
	kind uint8
	// wait: an s_barrier_wait line (gfx12); beforeWait: the next line
	// with a token, or the branch target's, is one.
	wait, beforeWait bool
}

func rdLineKind(l *line, gen int, compat bool) rdnaLine {
	cls := rdClassify(l.text, gen, compat)
	r := rdnaLine{cls: cls}
	switch {
	case l.text == "":
	case l.kind == kindEndpgm:
		r.kind = rkEndpgm
	case l.kind == kindBranch:
		r.kind = rkBranch
	case l.kind == kindBranchCond:
		r.kind = rkBranchCond
	case l.kind == kindSetPC:
		r.kind = rkSetPC
	case l.kind == kindSwapPC:
		r.kind = rkSwapPC
	case cls == clsSkip || cls == clsDontKnow:
	case cls == clsImmed:
		switch {
		case strings.HasPrefix(l.text, "s_barrier_signal"):
			r.kind = rkBarrierSignal
		case strings.HasPrefix(l.text, "s_barrier"):
			r.kind = rkBarrier
			r.wait = gen >= 12 && strings.HasPrefix(l.text, "s_barrier_wait")
		default:
			r.kind = rkImmed
		}
	case cls == clsVALU || cls == clsVMovB64:
		r.kind = rkValu
	case cls == clsSMEM || cls == clsSALU || cls == clsVMEM || cls == clsFLAT || cls == clsLDS || cls == clsBVH:
		r.kind = rkPlain
	}
	return r
}

// Slot event kinds.
const (
	slotStart = iota
	slotReady
	slotInst
	slotVALU
	slotImmOne
	slotImmediate
	slotNewPC
	slotEnd
	slotShaderData
	slotContext // context save or restore: WAVE_START with count data
)

type rdnaSlotEvent struct {
	t    int64
	kind uint8
	code uint16
	line int32
	data uint32
	w64  int8 // wave64 bit of an INST or VALU_INST
}

// Actor kinds.
const (
	raSlot = iota
	raOcc
	raOther
	raRT
	raEvents
	raLateLoad
	raNoise
	raExec
	raSData
)

type rdnaActor struct {
	t    int64
	id   int
	kind int
	done bool

	sa, wgp, simd, wid uint8
	waves              int
	lost               bool // the wave end was hidden by a packet loss
	saved              bool // the occupancy-only wave is context-saved
	k                  *kernelInfo
	w                  *rdnaWalk
	q                  []rdnaSlotEvent
	qh                 int
	running            bool
}

type actorHeap []*rdnaActor

func (h actorHeap) Len() int { return len(h) }
func (h actorHeap) Less(i, j int) bool {
	return h[i].t < h[j].t || h[i].t == h[j].t && h[i].id < h[j].id
}
func (h actorHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *actorHeap) Push(x any)   { *h = append(*h, x.(*rdnaActor)) }
func (h *actorHeap) Pop() any {
	old := *h
	a := old[len(old)-1]
	*h = old[:len(old)-1]
	return a
}

type rdnaGen struct {
	cfg     Config
	o       RDNA
	gen     int
	prog    *program
	rs      rng
	r       *rng
	rl      []rdnaLine
	codes   rdnaCodes
	table   *[256]rdnaCode
	e       *rdnaEncoder
	m       *rdnaModel
	kernels []kernelInfo
	cos     coLayout
	h       actorHeap
	slots   int
	closing bool
	// holdEnds delays wave ends until after a late code-object load (see
	// the gfx9 generator).
	holdEnds int64
	stats    Stats
	err      error
	rtV      uint64
	even     bool // gfx10/11: delivered tokens at even times, WAVE_READY at odd ones
}

func newRDNAGen(w io.Writer, cfg Config, o RDNA) (*rdnaGen, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	if cfg.WavesPerSIMD == 0 {
		cfg.WavesPerSIMD = 4
	}
	if cfg.WavesPerSIMD < 1 || cfg.WavesPerSIMD > 16 {
		return nil, fmt.Errorf("waves per SIMD %d: want 1..16 (IMMEDIATE and WAVE_READY masks cover slots 0..15)", cfg.WavesPerSIMD)
	}
	if cfg.WavesPerSlot == 0 {
		cfg.WavesPerSlot = 2
	}
	if cfg.LateLoad {
		// Every wave that starts before the load is emitted at the end
		// of the buffer, where late attribution is certain (§2.1.3).
		cfg.WavesPerSlot = 1
		cfg.TargetBytes = 0
	}
	switch {
	case cfg.OtherCUs == 0:
		cfg.OtherCUs = 2
	case cfg.OtherCUs < 0:
		cfg.OtherCUs = 0
	case cfg.OtherCUs > 7:
		cfg.OtherCUs = 7
	}
	if err := cfg.programDefaults(); err != nil {
		return nil, err
	}
	g := &rdnaGen{cfg: cfg, o: o, gen: o.GFXIP, even: o.GFXIP <= 11}
	g.rs = rng{s: cfg.Seed ^ 0x5eed5eed5eed5eed ^ uint64(o.GFXIP)<<56}
	g.r = &g.rs
	ks0, err := kernelProgram(&g.cfg, g.r)
	if err != nil {
		return nil, err
	}
	prog, ks, entries, p := ks0.prog, ks0.kernels, ks0.entries, ks0.isa
	g.prog = prog
	g.rl = make([]rdnaLine, len(prog.lines))
	for i := range prog.lines {
		g.rl[i] = rdLineKind(&prog.lines[i], g.gen, cfg.Compat016)
	}
	for i := range prog.lines {
		for _, s := range [2]int32{prog.lines[i].next, prog.lines[i].target} {
			for n := 0; s >= 0 && g.rl[s].kind == rkNoToken && prog.lines[s].text != "" && n < 64; n++ {
				s = prog.lines[s].next
			}
			if s >= 0 && g.rl[s].wait {
				g.rl[i].beforeWait = true
			}
		}
	}
	g.cos = layoutCodeObjects(&g.cfg, ks, prog)
	for i, k := range ks {
		e := prog.at[entries[i]]
		a := e
		for a >= 0 && g.rl[a].cls == clsSkip {
			a = prog.lines[a].next
		}
		if a < 0 || g.rl[a].kind == rkNoToken {
			return nil, fmt.Errorf("kernel entry %#x: %q produces no token the stitcher could anchor", k.Entry, prog.lines[e].text)
		}
		if prog.lines[e].dist < 0 {
			return nil, fmt.Errorf("kernel entry %#x: no s_endpgm is reachable", k.Entry)
		}
		g.kernels = append(g.kernels, kernelInfo{entry: e, pc: entries[i], gpu: g.cos.base(k.CodeObjectID) + k.Entry,
			me: uint8(1 - i/4), pipe: uint8(i % 4)})
	}
	g.codes = rdCodeLists(g.gen)
	dp, de := rdRates(RDNAHeader{Version: o.Version, DPRate: o.DPRate, DPDerate: o.DPDerate})
	g.table = rdCodeTable(g.gen, dp, de)
	if cfg.Emit != nil {
		g.m = newRDNAModel(g.gen, func(b *wire.Batch) {
			if g.err == nil {
				g.err = cfg.Emit(b)
			}
		})
		g.m.isa = p.ISA
		g.m.compat016 = cfg.Compat016
		g.m.checkWalk = !o.Lookahead && !o.DropTokens
		g.m.fail = func(err error) {
			if g.err == nil {
				g.err = err
			}
		}
	}
	g.e = newRDNAEncoder(g.gen, w, g.m, g.r)
	return g, nil
}

// evT is the time of a delivered token at or after t; wrT that of a
// WAVE_READY. On gfx10/11 a WAVE_READY is delivered one cycle early and a
// token earlier than the one before it is reordered (spec §2.3.1): the
// generator keeps WAVE_READY tokens on odd times and all other delivered
// tokens on even times, so that nothing is reordered.
func (g *rdnaGen) evT(t int64) int64 {
	if g.even && t&1 != 0 {
		return t + 1
	}
	return t
}

func (g *rdnaGen) wrT(t int64) int64 {
	if g.even {
		return t | 1
	}
	return t
}

func (g *rdnaGen) targetCU() uint8 { return g.o.TargetSA<<7 + g.o.TargetWGP }

func (g *rdnaGen) run() (Stats, error) {
	cfg, o, e, r := &g.cfg, &g.o, g.e, g.r
	e.header(RDNAHeader{Version: o.Version, DSIMD: o.TargetSIMD, DWGP: o.TargetWGP, DSA: o.TargetSA,
		NSA: 1, NWGP: 7, DPRate: o.DPRate, DPDerate: o.DPDerate, DoubleBuffer: cfg.DoubleBuffer && g.gen >= 12,
		ExcludeBarrierWait: o.ExcludeBarrierWait})
	if cfg.Instrument {
		e.reg(0, 1, 0, false, regUserData2, rocMagic)
		e.reg(0, 1, 0, false, regUserData2, 0x80201)
		e.reg(0, 1, 0, false, regUserData2, opAgentInfo|agentRTFreq<<8|100000<<12)
		if !cfg.LateLoad {
			g.loadCodeObjects(0, false)
		}
	}
	for i := range g.kernels {
		g.dispatch(&g.kernels[i])
	}
	id := 0
	add := func(a *rdnaActor) {
		a.id = id
		id++
		heap.Push(&g.h, a)
	}
	t0 := e.clock + int64(r.rangeIn(4, 80))
	for slot := 0; slot < cfg.WavesPerSIMD; slot++ {
		a := &rdnaActor{kind: raSlot, sa: o.TargetSA, wgp: o.TargetWGP, simd: o.TargetSIMD, wid: uint8(slot),
			waves: cfg.WavesPerSlot}
		a.t = g.evT(t0 + int64(r.intn(160)))
		a.q = append(a.q, rdnaSlotEvent{t: a.t, kind: slotStart})
		add(a)
		g.slots++
	}
	// Occupancy-only waves: another SIMD of the target WGP, and other WGPs.
	used := map[uint32]bool{}
	wgps := 8
	if g.gen >= 12 {
		wgps = 16
	}
	for i := 0; i < 2*cfg.OtherCUs; i++ {
		a := &rdnaActor{kind: raOcc}
		for {
			a.sa, a.wgp, a.simd, a.wid = uint8(r.intn(2)), uint8(r.intn(wgps)), uint8(r.intn(4)), uint8(r.intn(32))
			if i == 0 {
				a.sa, a.wgp = o.TargetSA, o.TargetWGP
			}
			k := occKey(a.sa<<7+a.wgp, a.simd, a.wid)
			if (a.sa<<7+a.wgp != g.targetCU() || a.simd != o.TargetSIMD) && !used[k] {
				used[k] = true
				break
			}
		}
		a.t = g.evT(t0 + int64(r.intn(400)))
		add(a)
	}
	if o.OtherSIMD {
		add(&rdnaActor{kind: raOther, t: g.evT(t0 + int64(r.rangeIn(10, 200)))})
	}
	if cfg.Instrument {
		add(&rdnaActor{kind: raRT, t: t0 + int64(r.rangeIn(10, 500))})
		if cfg.LateLoad {
			a := &rdnaActor{kind: raLateLoad, t: g.evT(t0 + int64(r.rangeIn(200, 800)))}
			g.holdEnds = a.t + 16
			add(a)
		}
		// One base per capture (Config.RealtimeBase). The draw that made
		// a random base stays, so that a seed makes the trace it made
		// before (the tests' seeds pin cases of the model).
		_ = r.intn(1 << 20)
		g.rtV = cfg.RealtimeBase
	}
	if cfg.Events {
		add(&rdnaActor{kind: raEvents, t: g.evT(t0 + int64(r.rangeIn(50, 2000)))})
	}
	if o.Noise {
		add(&rdnaActor{kind: raNoise, t: g.evT(t0 + int64(r.rangeIn(1, 100)))})
	}
	if o.ExecTokens {
		add(&rdnaActor{kind: raExec, t: g.evT(t0 + int64(r.rangeIn(1, 10)))})
	}
	if cfg.ShaderData {
		add(&rdnaActor{kind: raSData, t: g.evT(t0 + int64(r.rangeIn(1, 300)))})
	}
	for g.err == nil && e.err == nil && len(g.h) > 0 {
		a := heap.Pop(&g.h).(*rdnaActor)
		g.step(a)
		if !a.done {
			heap.Push(&g.h, a)
		}
		if cfg.Truncate && g.slots < cfg.WavesPerSIMD && g.truncateNow() {
			break
		}
	}
	if g.err != nil {
		return g.stats, g.err
	}
	if err := e.end(); err != nil {
		return g.stats, err
	}
	if g.err != nil {
		return g.stats, g.err
	}
	g.stats.Bytes = e.offset()
	g.stats.Tokens = e.toks
	return g.stats, nil
}

// truncateNow says whether a truncated trace may end here: every wave
// still in flight has an instruction (an incomplete wave's end_time is
// taken from its instructions, spec §3.5) and is not switched out.
func (g *rdnaGen) truncateNow() bool {
	if g.m == nil {
		return true
	}
	for s := range g.m.slots {
		for _, w := range g.m.slots[s] {
			if !w.complete && (len(w.rec.Instructions) == 0 || w.trap != trapRestored) {
				return false
			}
		}
	}
	for _, tk := range g.m.q {
		if tk.typ == rtWaveStart || tk.typ == rtWaveStartExt || tk.typ == rtInst && tk.code == 6 {
			return false // a start or trap still in the gfx10/11 reorder queue
		}
	}
	return true
}

// loadCodeObjects writes the CODEOBJ packets of every code object.
func (g *rdnaGen) loadCodeObjects(t int64, fromStart bool) {
	e, r := g.e, g.r
	put := func(typ uint32, v uint32) {
		e.reg(t, 1, 0, false, regUserData2, opCodeObj|typ<<8)
		e.reg(t, 1, 0, false, regUserData2, v)
	}
	for _, c := range g.cos {
		legacy := c.id != 0 && c.id < 1<<30 && r.oneIn(2)
		if !legacy {
			put(coIDLo, uint32(c.id))
			put(coIDHi, uint32(c.id>>32))
		}
		put(coAddrLo, uint32(c.base))
		put(coAddrHi, uint32(c.base>>32))
		put(coSizeLo, uint32(c.size))
		put(coSizeHi, uint32(c.size>>32))
		tail := uint32(0)
		if fromStart || r.oneIn(2) {
			tail |= 2
		}
		if legacy {
			tail |= uint32(c.id) << 2
		}
		put(coTail, tail)
	}
}

// dispatch writes a kernel's register state and, with cfg.Dispatch, the
// dispatch registers and a REG_INIT dispatch token.
func (g *rdnaGen) dispatch(k *kernelInfo) {
	e, r := g.e, g.r
	t := e.clock
	me, pipe := k.me, k.pipe
	pgm := k.gpu >> 8
	e.reg(t, me, pipe, true, regPgmLo, uint32(pgm))
	e.reg(t, me, pipe, true, regPgmHi, uint32(pgm>>32))
	if !g.cfg.Dispatch {
		return
	}
	pkt := r.next() & (1<<48 - 1) &^ 63
	e.reg(t, me, pipe, true, regDispatchPktLo, uint32(pkt))
	e.reg(t, me, pipe, true, regDispatchPktHi, uint32(pkt>>32))
	e.reg(t, me, pipe, true, regNumThreadX, uint32(32<<r.intn(6)))
	e.reg(t, me, pipe, true, regNumThreadX+1, uint32(1+r.intn(8)))
	e.reg(t, me, pipe, true, regNumThreadX+2, uint32(1+r.intn(4)))
	r1 := uint32(r.intn(64)) | uint32(r.intn(8))<<7 | uint32(r.intn(2))<<10 |
		uint32(r.intn(2))<<11 | uint32(r.intn(2))<<14
	r2 := uint32(r.intn(2)) | uint32(r.intn(32))<<1 | uint32(r.intn(512))<<15
	e.reg(t, me, pipe, true, regPgmRsrc1, r1)
	e.reg(t, me, pipe, true, regPgmRsrc2, r2)
	e.reg(t, me, pipe, true, regPgmRsrc3, uint32(r.next()))
	if r.oneIn(3) {
		e.regInit(t, me, pipe, uint8(r.intn(2)), uint32(r.next())) // not a dispatch (type 0 or 1)
	}
	e.regInit(t, me, pipe, 2, uint32(r.next())|1)
}

// step advances actor a by one action, the named step of its kind. The
// actors of other SIMDs, realtime, events and noise are done once the
// trace closes.
func (g *rdnaGen) step(a *rdnaActor) {
	switch a.kind {
	case raOther, raRT, raEvents, raExec, raNoise, raSData:
		if g.closing {
			a.done = true
			return
		}
	}
	switch a.kind {
	case raSlot:
		g.stepSlot(a)
	case raOcc:
		g.stepOccupancy(a)
	case raOther:
		g.stepOtherSIMD(a)
	case raRT:
		g.stepRealtime(a)
	case raEvents:
		g.stepEvent(a)
	case raExec:
		g.stepExec(a)
	case raNoise:
		g.stepNoise(a)
	case raSData:
		g.stepShaderData(a)
	case raLateLoad:
		g.loadCodeObjects(a.t, true)
		a.done = true
	}
}

// stepOccupancy starts, ends, saves or restores an occupancy-only wave of
// another SIMD or WGP (with context switches and lost ends).
func (g *rdnaGen) stepOccupancy(a *rdnaActor) {
	e, r := g.e, g.r
	if a.running && a.saved {
		k := a.k
		e.waveStart(a.t, false, a.sa, a.wgp, a.simd, a.wid, k.me, k.pipe, uint8(66+rdRestores[r.intn(6)]), false, 0)
		a.saved = false
		a.t = g.evT(a.t + int64(r.rangeIn(20, 800)))
		return
	}
	if a.running && g.o.ContextSwitch && a.t > g.holdEnds && r.oneIn(3) {
		k := a.k
		e.waveStart(a.t, false, a.sa, a.wgp, a.simd, a.wid, k.me, k.pipe, uint8(66+rdSaves[r.intn(4)]), false, 0)
		a.saved = true
		a.t = g.evT(a.t + int64(r.rangeIn(20, 400)))
		return
	}
	if a.running {
		if g.cfg.PacketLoss && g.gen >= 11 && !g.o.Reorder && !g.closing && a.t > g.holdEnds && r.oneIn(3) {
			// The end is lost: a packet-loss flag precedes the
			// next start of this location (spec §2.3.6 WAVE_START
			// step 3).
			a.lost = true
		} else {
			e.waveEnd(a.t, a.sa, a.wgp, a.simd, a.wid, wire.PC{})
		}
		a.running = false
		if g.closing {
			a.done = true
			return
		}
		a.t = g.evT(a.t + int64(r.rangeIn(1, 300)))
		return
	}
	if g.closing && !a.lost {
		a.done = true
		return
	}
	k := &g.kernels[r.intn(len(g.kernels))]
	if a.lost {
		e.lossNext, a.lost = true, false
	}
	a.k = k
	g.startTok(a.t, a.sa, a.wgp, a.simd, a.wid, k)
	a.running = true
	a.t = g.evT(max(a.t+int64(r.rangeIn(20, 1500)), g.holdEnds))
}

// stepOtherSIMD writes an instruction of the other SIMD.
func (g *rdnaGen) stepOtherSIMD(a *rdnaActor) {
	e, r := g.e, g.r
	c := g.codes.other[r.intn(len(g.codes.other))]
	e.inst(a.t, uint8(r.intn(32)), c, wire.PC{})
	a.t = g.evT(a.t + int64(r.rangeIn(0, 60)))
}

// stepRealtime writes a realtime sample.
func (g *rdnaGen) stepRealtime(a *rdnaActor) {
	e, r := g.e, g.r
	e.realtime(a.t, g.rtV+uint64(a.t)/20)
	a.t += int64(r.rangeIn(200, 6000))
}

// stepEvent writes an EVENT or a MISC token with a flag.
func (g *rdnaGen) stepEvent(a *rdnaActor) {
	e, r := g.e, g.r
	if r.oneIn(2) {
		ids := []uint8{7, 4, 6, 0x14, 0x16, 0x28, 0x36, 1, 0x10}
		e.event(a.t, uint8(r.intn(2)), uint8(r.intn(4)), ids[r.intn(len(ids))], r.oneIn(2))
	} else {
		flags := []uint32{rmTTStallBeg, rmTTStallEnd, rmDIDTBeg, rmDIDTEnd, rmGCRinse, rmSPMOrPL}
		f := flags[r.intn(len(flags))]
		if f == rmSPMOrPL && g.o.Version <= 2 && r.oneIn(2) {
			f = rmGCRinse // packet loss only now and then
		}
		e.misc(a.t, f)
	}
	a.t = g.evT(a.t + int64(r.rangeIn(50, 2000)))
}

// stepExec writes an ALU_EXEC or VMEM_EXEC token.
func (g *rdnaGen) stepExec(a *rdnaActor) {
	e, r := g.e, g.r
	e.ignored(a.t, []int{rtAluExec, rtVmemExec}[r.intn(2)])
	a.t = g.evT(a.t + int64(r.rangeIn(1, 12)))
}

// stepNoise writes a token the parser ignores, or NOP nibbles.
func (g *rdnaGen) stepNoise(a *rdnaActor) {
	e, r := g.e, g.r
	switch r.intn(6) {
	case 0:
		e.nops(1 + r.intn(5))
	case 1:
		typs := []int{rtWaveAlloc, rtUtil, rtEventSync}
		if g.gen >= 12 {
			typs = append(typs, rtPop1, rtPop3)
		}
		e.ignored(a.t, typs[r.intn(len(typs))])
	case 2:
		e.misc(a.t, 0)
	case 3:
		e.reg(a.t, uint8(r.intn(2)), uint8(r.intn(4)), true, 0x20+uint16(r.intn(8)), uint32(r.next()))
	case 4:
		e.reg(a.t, uint8(r.intn(2)), uint8(r.intn(4)), false, 0xC340+uint16(r.intn(2)), uint32(r.next()))
	case 5:
		e.ignored(a.t, rtWaveAlloc)
	}
	a.t = g.evT(a.t + int64(r.rangeIn(1, 300)))
}

// stepShaderData writes a shader data token of a random location.
func (g *rdnaGen) stepShaderData(a *rdnaActor) {
	r := g.r
	wgp := uint8(r.intn(8))
	if g.gen >= 12 {
		wgp &^= 2 // see sdataTok
	}
	g.sdataTok(a.t, uint8(r.intn(2)), wgp, uint8(r.intn(4)), uint8(r.intn(32)))
	a.t = g.evT(a.t + int64(r.rangeIn(50, 3000)))
}

// sdataTok writes a shader-data token. On gfx12 the location's WGP must
// have bit 1 clear: the parser's "invalid" test reads bit 14 (the gfx11
// exec bit), which the gfx12 layout gives to the WGP field (spec §2.3.6 is
// unclear which bit gfx12 tests).
func (g *rdnaGen) sdataTok(t int64, sa, wgp, simd, wid uint8) {
	r := g.r
	exec := g.gen <= 11 && r.oneIn(4)
	g.e.sdata(t, r.oneIn(2), sa, wgp, simd, wid, uint32(r.next()), exec, g.gen >= 12 && r.oneIn(3))
}

// startTok writes a wave start for kernel k.
func (g *rdnaGen) startTok(t int64, sa, wgp, simd, wid uint8, k *kernelInfo) {
	r := g.r
	count := uint8(r.intn(66))
	if r.oneIn(8) {
		count = uint8(90 + r.intn(38))
	}
	ext := g.o.ExtStarts && r.oneIn(2)
	g.e.waveStart(t, ext, sa, wgp, simd, wid, k.me, k.pipe, count, r.oneIn(4), uint8(r.intn(32)))
}

// stepSlot writes the target slot's next event and plans more when its
// queue is empty.
func (g *rdnaGen) stepSlot(a *rdnaActor) {
	now := a.t
	for !a.done && g.err == nil {
		if a.qh >= len(a.q) {
			a.q, a.qh = a.q[:0], 0
			g.plan(a, now)
			if a.done {
				return
			}
		}
		ev := &a.q[a.qh]
		if ev.t > now {
			a.t = ev.t
			return
		}
		a.qh++
		g.slotEvent(a, ev)
	}
	a.done = true
}

func (g *rdnaGen) slotEvent(a *rdnaActor, ev *rdnaSlotEvent) {
	e := g.e
	pc := func() wire.PC {
		if ev.line < 0 {
			return wire.PC{}
		}
		return g.prog.lines[ev.line].pc
	}
	switch ev.kind {
	case slotStart:
		k := &g.kernels[g.r.intn(len(g.kernels))]
		g.startTok(ev.t, a.sa, a.wgp, a.simd, a.wid, k)
		a.w = &rdnaWalk{k: k, cur: k.entry, anchor: true, ready: ev.t + int64(g.r.rangeIn(1, 12))}
		g.stats.Waves++
	case slotReady:
		e.masked(rtReady, ev.t, a.wid, wire.PC{})
	case slotInst:
		e.w64 = ev.w64
		e.inst(ev.t, a.wid, ev.code, pc())
		e.w64 = -1
		g.stats.Instructions++
	case slotVALU:
		e.w64 = ev.w64
		e.valu(ev.t, a.wid, pc())
		e.w64 = -1
		g.stats.Instructions++
	case slotImmOne:
		e.immOne(ev.t, a.wid, pc())
		g.stats.Instructions++
	case slotImmediate:
		e.masked(rtImmediate, ev.t, a.wid, pc())
		g.stats.Instructions++
	case slotNewPC:
		l := g.prog.lines[ev.line].pc
		e.newPC(ev.t, a.wid, g.cos.base(l.CodeObjectID)+l.Address)
	case slotShaderData:
		g.sdataTok(ev.t, a.sa, a.wgp, a.simd, a.wid)
	case slotContext:
		k := a.w.k
		e.waveStart(ev.t, false, a.sa, a.wgp, a.simd, a.wid, k.me, k.pipe, uint8(ev.data), false, 0)
	case slotEnd:
		e.waveEnd(ev.t, a.sa, a.wgp, a.simd, a.wid, pc())
		a.w = nil
	}
}

// plan fills the slot's queue with the tokens of its next step.
func (g *rdnaGen) plan(a *rdnaActor, now int64) {
	w := a.w
	if w == nil {
		more := a.waves > 1
		if g.cfg.TargetBytes > 0 {
			more = g.e.offset() < g.cfg.TargetBytes
		}
		a.waves--
		if !more {
			a.done = true
			g.slots--
			if g.slots == 0 {
				g.closing = true
			}
			return
		}
		a.q = append(a.q, rdnaSlotEvent{t: g.evT(now + int64(g.r.rangeIn(1, 200))), kind: slotStart})
		return
	}
	if err := g.planInst(a, w); err != nil && g.err == nil {
		g.err = err
		a.done = true
	}
}

func (g *rdnaGen) pick(s []uint16) uint16 { return s[g.r.intn(len(s))] }

// WAVE_START count - 66 values of a context save and of a restore (spec
// §2.3.6).
var rdSaves, rdRestores = []uint32{0, 1, 4, 5}, []uint32{2, 3, 6, 7, 8, 9}

// rdnaWalk is a simulated wave's walk through the program.
type rdnaWalk struct {
	k      *kernelInfo
	cur    int32
	steps  int
	loops  map[int32]int32 // trips left per back-edge in progress
	stack  []int32         // return lines of s_swappc calls
	anchor bool            // the next token's line is a stitch anchor
	done   bool            // s_endpgm reached
	ready  int64           // earliest time of the next token
	// prevEnd is the end of the last instruction token (time + cycles);
	// excl says an excluded s_barrier_wait was passed since, exclT its
	// synthetic IMMED's time (spec §3.6).
	prevEnd int64
	excl    bool
	exclT   int64

	// switches counts context switches: at most 4 per wave, so that
	// contexts (u8, +2 each) stays far from 255, where wrapping or
	// saturating is not specified.
	switches int
	// lateWR: the last token was a WAVE_READY after an instruction (on
	// gfx12 the wave stays in STALL): no context switch then, as its
	// CONTEXT instruction would precede the next instruction's stall.
	lateWR bool
}

// decide says whether a branch is taken: loops (backward branches) run a
// seeded number of trips, forward branches go either way; after
// MaxWaveInsts the wave heads for the nearest s_endpgm.
func (g *rdnaGen) decide(w *rdnaWalk, l *line) bool {
	if l.target < 0 {
		return false
	}
	if l.kind == kindBranch || l.next < 0 {
		return true
	}
	pr, r := g.prog, g.r
	if w.steps > g.cfg.MaxWaveInsts {
		dt, dn := pr.lines[l.target].dist, pr.lines[l.next].dist
		return dt >= 0 && (dn < 0 || dt < dn)
	}
	if pr.lines[l.target].pc.Address > l.pc.Address {
		return r.oneIn(2)
	}
	if w.loops == nil {
		w.loops = map[int32]int32{}
	}
	rem, ok := w.loops[w.cur]
	if !ok {
		n := g.cfg.MaxTrips
		switch {
		case r.oneIn(20):
			rem = int32(r.rangeIn(1, n))
		case r.oneIn(4):
			rem = int32(r.rangeIn(1, min(64, n)))
		default:
			rem = int32(r.rangeIn(1, min(8, n)))
		}
		rem--
	}
	if rem > 0 {
		w.loops[w.cur] = rem - 1
		return true
	}
	delete(w.loops, w.cur)
	return false
}

// planInst queues the tokens of the wave's next instruction that produces
// one and moves the wave past it. An excluded s_barrier_wait or a dropped
// token moves on to the instruction after it; now and then a context
// switch comes first.
func (g *rdnaGen) planInst(a *rdnaActor, w *rdnaWalk) error {
	if err := g.skipNoToken(w); err != nil {
		return err
	}
	pr := g.prog
	l := &pr.lines[w.cur]
	rl := g.rl[w.cur]
	if rl.wait && g.o.ExcludeBarrierWait {
		if err := g.excludeWait(w, l); err != nil {
			return err
		}
		return g.planInst(a, w)
	}
	if g.switchesContext(w, rl) {
		g.planContextSwitch(a, w)
		return nil
	}
	w.steps++
	if w.steps > g.cfg.MaxWaveInsts+4*len(pr.lines)+1000 {
		return fmt.Errorf("wave does not reach s_endpgm (at %#x)", l.pc.Address)
	}
	if g.dropsToken(w, rl) {
		w.cur = l.next // executed, but no token
		return g.planInst(a, w)
	}
	is := g.startInst(a, w, rl)
	next := l.next
	switch rl.kind {
	case rkPlain:
		g.planPlain(&is)
	case rkValu:
		g.planValu(&is)
	case rkImmed, rkBarrier, rkBarrierSignal:
		g.planImmed(&is)
	case rkEndpgm:
		g.planEndpgm(&is)
		return nil
	case rkBranch, rkBranchCond:
		next = g.planBranch(&is, l)
	case rkSetPC, rkSwapPC:
		return g.planJump(&is, l)
	}
	is.leaveExcludedWait()
	w.anchor = false
	w.cur = next
	return nil
}

// skipNoToken moves the wave past the instructions that produce no token
// to the next one that does (program.skipNoToken).
func (g *rdnaGen) skipNoToken(w *rdnaWalk) (err error) {
	w.cur, err = g.prog.skipNoToken(w.cur, w.anchor, func(i int32) (bool, bool) {
		return g.rl[i].kind == rkNoToken, g.rl[i].cls == clsSkip
	})
	return err
}

// excludeWait passes an excluded s_barrier_wait. It has no token (spec
// §3.5 step 9): the stitcher records a gap here and §3.6 inserts an IMMED
// from the previous instruction's end to the next one's start.
func (g *rdnaGen) excludeWait(w *rdnaWalk, l *line) error {
	if w.anchor || w.excl {
		return fmt.Errorf("%#x: excluded s_barrier_wait at a stitch anchor or right after another", l.pc.Address)
	}
	w.excl, w.exclT = true, w.prevEnd
	w.cur = l.next
	return nil
}

// switchesContext says whether the wave is switched out before its next
// instruction (ContextSwitch, at most 4 times per wave, never next to a
// stitch anchor, an excluded wait or a late WAVE_READY).
func (g *rdnaGen) switchesContext(w *rdnaWalk, rl rdnaLine) bool {
	return g.o.ContextSwitch && !w.anchor && !w.excl && !rl.beforeWait && rl.kind != rkEndpgm &&
		w.ready > g.holdEnds && w.switches < 4 && !w.lateWR && g.r.oneIn(40)
}

// planContextSwitch queues a context save and restore (or a trap), the
// return from exception and the NEW_PC of the line the wave resumes at (a
// stitch anchor).
func (g *rdnaGen) planContextSwitch(a *rdnaActor, w *rdnaWalk) {
	r := g.r
	w.switches++
	t1 := g.evT(w.ready)
	t2 := g.evT(t1 + int64(r.rangeIn(20, 400)))
	t3 := g.evT(t2 + int64(r.rangeIn(1, 30)))
	t4 := g.evT(t3 + int64(r.intn(6)))
	if r.oneIn(3) {
		// A trap (INST 6) instead: CONTEXT until the return.
		a.q = append(a.q, rdnaSlotEvent{t: t1, kind: slotInst, code: 6, line: -1})
	} else {
		a.q = append(a.q, rdnaSlotEvent{t: t1, kind: slotContext, data: 66 + rdSaves[r.intn(4)], line: -1},
			rdnaSlotEvent{t: t2, kind: slotContext, data: 66 + rdRestores[r.intn(6)], line: -1})
	}
	a.q = append(a.q, rdnaSlotEvent{t: t3, kind: slotInst, code: 117, line: -1},
		rdnaSlotEvent{t: t4, kind: slotNewPC, line: w.cur})
	w.ready = t4 + int64(r.rangeIn(1, 20))
	w.anchor = true
}

// dropsToken says whether the instruction runs without a token
// (DropTokens; not branches, jumps or stitch anchors).
func (g *rdnaGen) dropsToken(w *rdnaWalk, rl rdnaLine) bool {
	if !g.o.DropTokens || w.anchor || w.excl || rl.beforeWait || !g.r.oneIn(6) {
		return false
	}
	switch rl.kind {
	case rkPlain, rkValu, rkImmed, rkBarrier, rkBarrierSignal:
		return true
	}
	return false
}

// rdnaIssue is the instruction planInst queues tokens for: the wave, its
// line and the time of its token.
type rdnaIssue struct {
	a     *rdnaActor
	w     *rdnaWalk
	rl    rdnaLine
	li    int32
	t     int64
	exact bool // the token after an excluded wait starts at its IMMED's time
}

// startInst picks the time of the instruction's token: right after an
// excluded wait, or now and then after a WAVE_READY.
func (g *rdnaGen) startInst(a *rdnaActor, w *rdnaWalk, rl rdnaLine) rdnaIssue {
	r := g.r
	is := rdnaIssue{a: a, w: w, rl: rl, li: w.cur, t: w.ready}
	switch {
	case w.excl:
		// No WAVE_READY: the instruction's time (not backdated by a
		// stall) ends the synthetic IMMED, and the timeline segment it
		// splits runs on past it.
		is.exact = rl.cls == clsVMEM && w.ready <= w.exclT && r.oneIn(2)
		if is.exact {
			is.t = w.exclT
		} else {
			is.t = max(is.t, w.exclT+1+int64(r.intn(8)))
		}
	case rl.kind != rkEndpgm && r.oneIn(5):
		tr := g.wrT(is.t)
		a.q = append(a.q, rdnaSlotEvent{t: tr, kind: slotReady, line: -1})
		is.t = tr + 1 + int64(r.intn(16))
	}
	is.t = g.evT(is.t)
	w.lateWR = false
	return is
}

// gap is the seeded time from an instruction of the given cycles to the
// wave's next token.
func (g *rdnaGen) gap(cycles int) int64 {
	v := g.r.next()
	switch {
	case v&15 == 0:
		return int64(4 + (v>>8)%60)
	case v&0x30 == 0:
		return 0
	}
	return int64(1 + (v>>8)%uint64(cycles+3))
}

// lateReady (Reorder) queues a WAVE_READY at the instruction's time, after
// its token.
func (g *rdnaGen) lateReady(is *rdnaIssue) {
	w := is.w
	if g.o.Reorder && !w.anchor && !w.excl && !is.rl.beforeWait && g.r.oneIn(5) {
		is.a.q = append(is.a.q, rdnaSlotEvent{t: is.t, kind: slotReady, line: -1})
		w.lateWR = true
	}
}

// emitInst queues the INST token with the given code and schedules the
// wave's next token after the code's cycles.
func (g *rdnaGen) emitInst(is *rdnaIssue, code uint16) {
	w := is.w
	// The wave64 bit: under 0.1.6 it doubles the cycles, the newest
	// source ignores it (sqtt-format.md A.4 R6/W1); the schedule
	// leaves room for the doubled cycles either way.
	w64 := int8(g.r.intn(2))
	is.a.q = append(is.a.q, rdnaSlotEvent{t: is.t, kind: slotInst, code: code, line: is.li, w64: w64})
	g.lateReady(is)
	c := g.table[code&0xFF].cycles << w64
	w.ready = is.t + g.gap(c)
	w.prevEnd = is.t + int64(c)
}

// planPlain issues a memory or scalar instruction with a code of its
// class, and now and then shader data after it.
func (g *rdnaGen) planPlain(is *rdnaIssue) {
	r := g.r
	var codes []uint16
	switch is.rl.cls {
	case clsSMEM:
		codes = g.codes.smem
	case clsSALU:
		codes = g.codes.salu
	case clsVMEM:
		codes = g.codes.vmem
		if r.oneIn(3) {
			codes = g.codes.flat
		}
		if is.exact {
			// more than one cycle: §3.6 delays it by one
			codes = []uint16{48, 50, 51, 56, 60}
		}
	case clsFLAT:
		codes = g.codes.flat
	case clsLDS:
		codes = g.codes.lds
	case clsBVH:
		codes = g.codes.bvh
	}
	g.emitInst(is, g.pick(codes))
	if g.cfg.ShaderData && r.oneIn(32) && !(g.gen >= 12 && is.a.wgp&2 != 0) {
		w := is.w
		w.ready = g.evT(w.ready)
		is.a.q = append(is.a.q, rdnaSlotEvent{t: w.ready, kind: slotShaderData, line: -1})
	}
}

// planValu issues a VALU instruction as a VALU_INST token or an INST.
func (g *rdnaGen) planValu(is *rdnaIssue) {
	r := g.r
	w := is.w
	if r.oneIn(2) {
		w64 := int8(r.intn(2))
		is.a.q = append(is.a.q, rdnaSlotEvent{t: is.t, kind: slotVALU, line: is.li, w64: w64})
		g.lateReady(is)
		w.ready = is.t + g.gap(1)
		w.prevEnd = is.t + 1 + int64(w64)
	} else {
		g.emitInst(is, g.pick(g.codes.valu))
	}
}

// planImmed issues an immediate or barrier instruction: IMM_ONE,
// IMMEDIATE or one of the MESSAGE / barrier INST codes, some waits long.
func (g *rdnaGen) planImmed(is *rdnaIssue) {
	r := g.r
	w, rl, t := is.w, is.rl, is.t
	// Next to an excluded wait the tokens must not be IMMED (the
	// stitcher's look-ahead for an IMMED is not modelled): a MESSAGE
	// code matches an IMMED line as well (spec §3.4).
	noImmed := g.o.ExcludeBarrierWait && !g.o.Lookahead && (w.excl || rl.beforeWait)
	v := r.intn(10)
	switch {
	case noImmed:
		code := uint16(9)
		if rl.kind == rkBarrierSignal || r.oneIn(2) {
			code = 122
		}
		is.a.q = append(is.a.q, rdnaSlotEvent{t: t, kind: slotInst, code: code, line: is.li})
	case rl.kind == rkBarrier && v < 6, rl.kind == rkImmed && v == 9:
		is.a.q = append(is.a.q, rdnaSlotEvent{t: t, kind: slotInst, code: 19, line: is.li})
	case rl.kind == rkBarrierSignal && v < 5:
		is.a.q = append(is.a.q, rdnaSlotEvent{t: t, kind: slotInst, code: 122, line: is.li})
	case v == 8 || g.gen >= 12 && rl.kind == rkBarrier && v == 7:
		code := uint16(9)
		if g.gen >= 12 && r.oneIn(2) {
			code = 138
		}
		is.a.q = append(is.a.q, rdnaSlotEvent{t: t, kind: slotInst, code: code, line: is.li})
	case v&1 == 0:
		is.a.q = append(is.a.q, rdnaSlotEvent{t: t, kind: slotImmOne, line: is.li})
	default:
		is.a.q = append(is.a.q, rdnaSlotEvent{t: t, kind: slotImmediate, line: is.li})
	}
	w.prevEnd = t + 1
	w.ready = t + 1
	if u := r.next(); u%3 == 0 {
		w.ready += int64(u>>8) % 300
	} else {
		w.ready += int64(u>>8) % 4
	}
}

// planEndpgm queues the wave's end and ends the walk.
func (g *rdnaGen) planEndpgm(is *rdnaIssue) {
	w := is.w
	// At least one cycle after the wave's last token: a barrier
	// extension fired by that token moves the timeline to its time + 1
	// (spec §2.3.6 bx), past an end at the same time.
	te := max(is.t+1+int64(g.r.intn(10)), g.holdEnds)
	if w.excl {
		te = max(te, w.exclT+3) // the end's MESSAGE lasts more than a cycle
		w.excl = false
	}
	is.a.q = append(is.a.q, rdnaSlotEvent{t: g.evT(te), kind: slotEnd, line: is.li})
	w.done = true
	is.a.w = w
}

// planBranch issues a branch, taken or not (decide), and returns the line
// the wave goes on at.
func (g *rdnaGen) planBranch(is *rdnaIssue, l *line) int32 {
	code, next := uint16(4), l.next
	if g.decide(is.w, l) {
		code, next = 3, l.target
	}
	g.emitInst(is, code)
	return next
}

// planJump issues s_setpc or s_swappc: a call to a function entry (pushing
// the return line) or a return (popping it), as INST + NEW_PC at the
// destination, a stitch anchor.
func (g *rdnaGen) planJump(is *rdnaIssue, l *line) error {
	pr := g.prog
	r := g.r
	w, t := is.w, is.t
	dest := l.next
	if is.rl.kind == rkSwapPC {
		if len(pr.funcs) > 0 && r.oneIn(2) && len(w.stack) < 64 {
			dest = pr.funcs[r.intn(len(pr.funcs))]
			w.stack = append(w.stack, l.next)
		}
	} else if n := len(w.stack); n > 0 {
		dest, w.stack = w.stack[n-1], w.stack[:n-1]
	}
	if dest >= 0 {
		d := dest
		for d >= 0 && g.rl[d].cls == clsSkip {
			d = pr.lines[d].next
		}
		if d < 0 || g.rl[d].kind == rkNoToken {
			dest = l.next
		}
	}
	if dest < 0 {
		return fmt.Errorf("%#x: %q: no destination in the program", l.pc.Address, l.text)
	}
	is.a.q = append(is.a.q, rdnaSlotEvent{t: t, kind: slotInst, code: 5, line: is.li})
	tn := g.evT(t + int64(r.intn(6)))
	is.a.q = append(is.a.q, rdnaSlotEvent{t: tn, kind: slotNewPC, line: dest})
	w.ready = tn + g.gap(1)
	w.prevEnd = t + 1
	w.cur = dest
	w.anchor = true
	w.excl = false
	return nil
}

// leaveExcludedWait ends the wait excluded before the instruction: the
// wave's next token comes at least a cycle (two after an exact start)
// after the instruction's.
func (is *rdnaIssue) leaveExcludedWait() {
	w := is.w
	if w.excl {
		w.excl = false
		w.ready = max(w.ready, is.t+1)
		if is.exact {
			w.ready = max(w.ready, is.t+2)
		}
	}
}
