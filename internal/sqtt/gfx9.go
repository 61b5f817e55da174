package sqtt

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"sort"

	"github.com/attkit/attkit/internal/wire"
)

// gfx9 token types (2.2.2).
const (
	tMisc       = 0
	tTime       = 1
	tReg        = 2
	tWaveStart  = 3
	tWaveAlloc  = 4
	tRegCS      = 5
	tWaveEnd    = 6
	tEvent      = 7
	tEventCS    = 8
	tEventGFX1  = 9
	tInst       = 10
	tInstPC     = 11
	tShaderData = 12
	tIssue      = 13
	tPerf       = 14
	tRegCSPriv  = 15
)

// gfx9 MISC types.
const (
	miscTime         = 0
	miscTimeReset    = 1
	miscPacketLost   = 2
	miscSurfaceSync  = 3
	miscTTStallBegin = 4
	miscTTStallEnd   = 5
	miscSaveContext  = 6
)

// gfx9 INST types (2.2.4).
const (
	instSMEMRd       = 0
	instSALU32       = 1
	instVMEMRd       = 2
	instVMEMWr       = 3
	instFlatWr       = 4
	instVALU32       = 5
	instLDS          = 6
	instPC           = 7
	instJump         = 12
	instNext         = 13
	instFlatRd       = 14
	instOtherMsg     = 15
	instSMEMWr       = 16
	instSALU64       = 17
	instVALU64       = 18
	instReplayFirst  = 19
	instReplayLast   = 24
	instVALUMAI      = 28
	instGoToTrap     = 29
	gfx9Slots        = 10
	gfx9SIMDs        = 4
	shaderDataFlush  = 65536
	occupancyDBFlush = 65536
	// lookAheadLimit bounds the tokens queued while looking for the TIME
	// token after a TIME_RESET; the library would read to the end.
	lookAheadLimit = 1 << 20
)

// gfx9TokenLen is the token length in bytes by type.
var gfx9TokenLen = [16]int{2, 8, 8, 4, 2, 6, 2, 2, 2, 2, 2, 8, 6, 4, 8, 6}

// gfx9TokenMask keeps a token's bytes of a 64-bit little-endian load.
var gfx9TokenMask = func() (m [16]uint64) {
	for i, n := range gfx9TokenLen {
		m[i] = ^uint64(0) >> (64 - 8*n)
	}
	return m
}()

// gfx9InstClass maps INST types with a category to (category, phase add).
// Types missing here are dropped.
// plain says that the type needs nothing but its category and timing (not
// INST_PC, GO_TO_TRAP or OTHER_MSG), the case buffered resolves inline.
var gfx9InstClass = func() (m [32]struct {
	cat       wire.InstCategory
	phase     uint8
	ok, plain bool
}) {
	set := func(cat wire.InstCategory, phase uint8, types ...int) {
		for _, t := range types {
			m[t].cat, m[t].phase, m[t].ok = cat, phase, true
			m[t].plain = t != instPC && t != instGoToTrap && t != instOtherMsg
		}
	}
	set(wire.CatSMEM, 5, instSMEMRd, instSMEMWr)
	set(wire.CatSALU, 5, instSALU32, instSALU64)
	set(wire.CatVMEM, 0, instVMEMRd, instVMEMWr)
	set(wire.CatFLAT, 0, instFlatWr, instFlatRd)
	set(wire.CatVALU, 2, instVALU32, instVALU64, instVALUMAI)
	set(wire.CatLDS, 1, instLDS)
	set(wire.CatSALU, 0, instPC)
	set(wire.CatJump, 1, instJump)
	set(wire.CatNext, 1, instNext)
	set(wire.CatMessage, 1, instOtherMsg)
	set(wire.CatContext, 0, instGoToTrap)
	return m
}()

// gfx9ReplayOf is the original type of each XNACK replay type.
var gfx9ReplayOf = [...]int{19: instSMEMRd, 20: instSMEMWr, 21: instVMEMRd, 22: instVMEMWr,
	23: instFlatWr, 24: instFlatRd}

type token struct {
	v   uint64
	off int64 // byte offset in the file
	typ uint8
}

func (t token) isTimeReset() bool { return t.typ == tMisc && (t.v>>13)&7 == miscTimeReset }

type occSlot struct {
	running bool
	pc      wire.PC
}

type perfKey struct {
	seen bool
	last int64
}

// gfx9 decodes one gfx9 buffer.
type gfx9 struct {
	ctx context.Context
	ps  *parseState
	em  *emitter

	// software header
	targetCU     uint8
	doubleBuffer bool

	// token reader
	br     *bufio.Reader
	buf    []byte
	pos    int
	off    int64 // file offset of buf[0]
	eof    bool
	err    error
	clock  int64
	base   int64
	queue  []token
	qh     int
	ntoken int

	regs regState
	rt   struct {
		op             uint32
		remaining, idx int
		low, hi, now   uint64
	}
	// waves holds the traced waves by slot | simd<<4 (waveIndex), the
	// layout of the INST token's slot and SIMD fields, so that a token's
	// bits index it directly.
	waves      [64]*wave
	free       []*wave
	phase      int64
	running    [2048]occSlot
	sd         []wire.ShaderData
	realtime   []wire.Realtime
	perf       []wire.PerfEvent
	perfKeys   [64]perfKey
	packetLost bool

	occPool // occupancy records pending until a flush
}

func newGFX9(ctx context.Context, ps *parseState, br *bufio.Reader, h uint64) *gfx9 {
	return &gfx9{
		ctx:          ctx,
		ps:           ps,
		em:           &ps.em,
		targetCU:     uint8(h>>20) & 0x1F,
		doubleBuffer: h>>32&1 != 0,
		br:           br,
		off:          8,
		regs:         newRegState(),
		phase:        15,
	}
}

// run decodes the buffer and delivers its records.
func (g *gfx9) run() error {
	if err := g.refill(); err != nil {
		return err
	}
	if len(g.buf) == 0 {
		// No records at all, as the library reports it.
		return &DataError{Offset: 8, Msg: "gfx9 trace holds only its 8-byte header"}
	}
	if err := g.ps.gfxipOnce(9); err != nil {
		return err
	}
	for {
		var t token
		switch {
		case g.qh < len(g.queue):
			t = g.queue[g.qh]
			g.qh++
			if g.qh == len(g.queue) {
				g.queue, g.qh = g.queue[:0], 0
			}
		case len(g.buf)-g.pos >= 8 && !g.ps.noScan:
			if err := g.buffered(); err != nil {
				return err
			}
			continue
		default:
			var ok bool
			if t, ok = g.read(); !ok {
				goto done
			}
		}
		if err := g.deliver(t); err != nil {
			return err
		}
		if err := g.tick(); err != nil {
			return err
		}
	}
done:
	if g.err != nil {
		return g.err
	}
	return g.endOfBuffer()
}

// waveIndex is where g.waves holds the wave of a SIMD and slot.
func waveIndex(simd, slot uint64) int { return int(slot&0xF | simd&3<<4) }

// tick counts a token and checks the context every 65536 tokens.
func (g *gfx9) tick() error {
	if g.ntoken++; g.ntoken&0xFFFF == 0 {
		return g.ctx.Err()
	}
	return nil
}

// buffered decodes the tokens wholly buffered, as long as no token is
// queued (2.2.3): ISSUE and INST, nine tokens in ten, straight from the
// buffer with the clock in a register, the others through deliver. The
// context is checked once per call, that is once per buffer of the reader
// at most (256 KiB).
func (g *gfx9) buffered() error {
	if err := g.ctx.Err(); err != nil {
		return err
	}
	// The outer loop takes the buffer, position and clock from g again
	// after deliver, so that the inner one never changes buf: held from
	// outside it, buf is not spilled to the stack at every token.
tokens:
	for {
		buf, pos, clock := g.buf, g.pos, g.clock
		for pos <= len(buf)-8 {
			v := binary.LittleEndian.Uint64(buf[pos:])
			switch v & 0xF {
			case tIssue:
				// g.issue, inlined by hand (a call costs the hot loop a
				// fifth of its instructions): keep the two the same.
				clock += int64(v>>4&1) * 4
				pos += 4
				st := v >> 8 & 0xFFFFF
				simd := v >> 1 & 0x30
				for busy := (st | st>>1) & 0x55555; busy != 0; busy &= busy - 1 {
					b := bits.TrailingZeros64(busy)
					w := g.waves[(simd|uint64(b>>1))&0x3F]
					if w == nil || w.trap != trapRestored {
						continue
					}
					// STALL and INST each bring the timeline to the clock
					// in the state before them, each with its own test of
					// whether time passed, which predicts better than one
					// test shared by all statuses. An IMMED has nothing to
					// add: it leaves the wave in EXEC until 4 cycles on
					// (waitFrom).
					switch st >> b & 3 {
					case 3: // IMMED
						w.immed(clock)
					case 1: // STALL
						prev := w.curState
						w.curState = wire.StateStall
						w.stallStarts = append(w.stallStarts, clock)
						if d := clock - w.stateStart; d > 0 {
							w.addTimeline(prev, d)
							w.stateStart = clock
						}
					case 2: // INST
						prev := w.curState
						w.curState = wire.StateExec
						w.issued = append(w.issued, len(w.insts))
						w.pushInst(clock, wire.CatUnresolved, 0, 0)
						if d := clock - w.stateStart; d > 0 {
							w.addTimeline(prev, d)
							w.stateStart = clock
						}
					}
				}
			case tInst:
				clock += int64(v>>4&1) * 4
				if v>>5&0xF >= gfx9Slots {
					return slotError(token{v: v & 0xFFFF, off: g.off + int64(pos), typ: tInst})
				}
				// g.inst, inlined by hand for the usual case: a traced wave
				// resolves an issued entry as a type that keeps it and
				// needs nothing else (plain). Keep the two the same.
				k := v >> 11 & 0x1F
				w := g.waves[v>>5&0x3F]
				if cls := gfx9InstClass[k]; cls.plain && w != nil && w.trap == trapRestored &&
					w.issuedHead < len(w.issued) && w.issued[w.issuedHead] < len(w.insts) {
					j := w.issued[w.issuedHead]
					if w.issuedHead++; w.issuedHead == len(w.issued) {
						w.issued, w.issuedHead = w.issued[:0], 0
					}
					ins := w.insts
					n := len(ins)
					I := &ins[j]
					if n >= 2 && I.Time < end(&ins[n-2]) {
						g.phase++
					}
					var p int64
					if j > 0 {
						prev := &ins[j-1]
						trim(prev, I.Time)
						p = end(prev)
					}
					phase := (g.phase+int64(v>>9&3))&3 + int64(cls.phase)
					w.lastOfType[k] = j + 1
					I.Category = cls.cat
					I.Duration = int32(4 + max(clock-I.Time-phase&^3, 0))
					if s, ok := w.takeStall(I.Time, p); ok {
						I.Stall = uint32(max(I.Time-s, 0))
						I.Duration = int32(max(I.Time+int64(I.Duration)-s, 4))
						I.Time = s
					}
				} else if err := g.inst(v&0xFFFF, g.off+int64(pos), clock); err != nil {
					return err
				}
				pos += 2
			default:
				typ := uint8(v & 0xF)
				t := token{v: v & gfx9TokenMask[typ], off: g.off + int64(pos), typ: typ}
				g.pos, g.clock = pos+gfx9TokenLen[typ], clock
				if err := g.deliver(t); err != nil {
					return err
				}
				// deliver may have read on (2.2.3).
				if g.qh < len(g.queue) {
					return nil
				}
				continue tokens
			}
		}
		g.pos, g.clock = pos, clock
		return nil
	}
}

// refill makes at least 8 unread bytes available, or all that remain.
func (g *gfx9) refill() error {
	if g.pos > 0 {
		g.br.Discard(g.pos)
		g.off += int64(g.pos)
		g.pos = 0
	}
	buf, eof, err := peekAll(g.br, 8)
	if err != nil {
		return err
	}
	g.buf, g.eof = buf, g.eof || eof
	return nil
}

// peekAll makes at least n bytes of br available, or all that remain, and
// returns the bytes br holds and whether they are the last.
func peekAll(br *bufio.Reader, n int) (buf []byte, eof bool, err error) {
	_, err = br.Peek(n)
	switch {
	case err == nil || errors.Is(err, bufio.ErrBufferFull):
	case errors.Is(err, io.EOF):
		eof = true
	default:
		return nil, false, err
	}
	buf, _ = br.Peek(br.Buffered())
	return buf, eof, nil
}

// read returns the next token of the stream. At the end, a token cut short
// is dropped silently (2.2.2).
func (g *gfx9) read() (token, bool) {
	if g.err != nil {
		return token{}, false
	}
	if len(g.buf)-g.pos < 8 && !g.eof {
		if err := g.refill(); err != nil {
			g.err = err
			return token{}, false
		}
	}
	rem := len(g.buf) - g.pos
	if rem == 0 {
		return token{}, false
	}
	typ := g.buf[g.pos] & 0xF
	n := gfx9TokenLen[typ]
	if rem < n {
		g.ps.cutBits = 8 * (n - rem) // the buffer ends inside a token (1.7)
		if !g.ps.rules.decodeCutGFX9Token {
			return token{}, false
		}
		// 0.1.6 decodes a token the end of the buffer cuts, reading
		// past the end (A.4 item 8.6): the missing bytes read as zero.
		n = rem
	}
	var v uint64
	if rem >= 8 {
		v = binary.LittleEndian.Uint64(g.buf[g.pos:])
		if n < 8 {
			v &= 1<<(8*n) - 1
		}
	} else {
		for i := n - 1; i >= 0; i-- {
			v = v<<8 | uint64(g.buf[g.pos+i])
		}
	}
	t := token{v: v, off: g.off + int64(g.pos), typ: typ}
	g.pos += n
	return t, true
}

// deliver applies a token's time delta and hands it to its handler.
func (g *gfx9) deliver(t token) error {
	if t.typ == tMisc {
		g.clock += int64(t.v>>4&0xFF) * 4
	} else {
		g.clock += int64(t.v>>4&1) * 4
	}
	now := g.clock
	if badSlot(t) {
		return slotError(t)
	}
	switch t.typ {
	case tInst:
		return g.inst(t.v, t.off, now)
	case tIssue:
		g.issue(t.v, now)
	case tMisc:
		return g.misc(t, now)
	case tWaveStart:
		return g.waveStart(t, now)
	case tWaveEnd:
		return g.waveEnd(t, now)
	case tInstPC:
		return g.instPC(t)
	case tReg:
		return g.reg(t.v, now)
	case tRegCS, tRegCSPriv:
		return g.regCS(t.v, now)
	case tShaderData:
		return g.shaderData(t, now)
	case tPerf:
		return g.perfToken(t.v, now)
	}
	return nil
}

// timeReset looks for the TIME token that follows a TIME_RESET (2.2.3).
// Tokens are only queued here, and a search stops at a TIME or at the next
// TIME_RESET, so the queue is empty when a TIME_RESET is parsed. A
// TIME_RESET that stops the search is consumed: neither its delta nor a
// search of its own takes effect (as AMD's 0.1.6 decodes it).
func (g *gfx9) timeReset() error {
	for len(g.queue)-g.qh < lookAheadLimit {
		t, ok := g.read()
		if !ok || t.isTimeReset() {
			return nil
		}
		if err := checkSlot(t); err != nil {
			// The search already fails a token with a bad wave slot,
			// before the tokens it queued take effect (A.4 item 8.9).
			return err
		}
		if t.typ == tTime {
			abs := int64(t.v >> 16)
			if g.ps.rules.time46 {
				g.time46(abs)
				return nil
			}
			if g.base == 0 {
				g.base = abs - g.clock + 4
			}
			if abs > g.base {
				g.clock = (abs - g.base) &^ 3
			}
			return nil
		}
		g.queue = append(g.queue, t)
	}
	return nil
}

// time46 applies a TIME token as 0.1.6 does (A.4 item 8.5): the value,
// the base and the new clock are 46-bit two's-complement numbers, so bits
// 46 and 47 of the token are ignored and a value with bit 45 set is
// negative.
func (g *gfx9) time46(abs int64) {
	abs = wrap46(abs)
	if g.base == 0 {
		g.base = wrap46(abs - g.clock + 4)
	}
	if abs > g.base {
		g.clock = wrap46(abs-g.base) &^ 3
	}
}

// wrap46 is v as a 46-bit two's-complement number.
func wrap46(v int64) int64 { return v << 18 >> 18 }

func (g *gfx9) misc(t token, now int64) error {
	switch (t.v >> 13) & 7 {
	case miscTimeReset:
		return g.timeReset()
	case miscPacketLost:
		g.packetLost = true
		return g.em.eventRec(wire.EventPacketLoss, now, 0, 0, 0, 0)
	case miscTTStallBegin:
		return g.em.eventRec(wire.EventTTStallBegin, now, 0, 0, 0, 0)
	case miscTTStallEnd:
		return g.em.eventRec(wire.EventTTStallEnd, now, 0, 0, 0, 0)
	case miscSaveContext:
		for _, w := range g.waves {
			if w != nil {
				w.trap = trapRequest
			}
		}
		return g.em.eventRec(wire.EventSaveContext, now, 0, 0, 0, 0)
	}
	return nil
}

// checkSlot fails a token whose wave slot field is above 9, as the
// library does for every token type with that field, WAVE_ALLOC (which
// makes no record) and tokens of other CUs included (A.4 item 8.9).
func checkSlot(t token) error {
	if badSlot(t) {
		return slotError(t)
	}
	return nil
}

// badSlot reports whether t has a wave slot field above 9.
func badSlot(t token) bool {
	sh := slotShift[t.typ&0xF]
	return sh != 0 && t.v>>sh&0xF >= gfx9Slots
}

// slotShift is where a token type's wave slot field starts, 0 for the
// types without one (checkSlot stays small enough to inline).
var slotShift = func() (s [16]uint8) {
	for _, typ := range []int{tWaveStart, tWaveAlloc, tWaveEnd, tShaderData} {
		s[typ] = 10
	}
	s[tInst], s[tInstPC] = 5, 5
	return s
}()

func slotError(t token) error {
	slot := t.v >> slotShift[t.typ&0xF] & 0xF
	return &DataError{Offset: t.off, Msg: fmt.Sprintf("wave slot %d > 9 in a token of type %d", slot, t.typ)}
}

func (g *gfx9) newWave(now int64, simd, slot uint8) *wave {
	var w *wave
	if len(g.free) == 0 && g.ps.back != nil {
		g.free = g.ps.back.takeWaves(g.free)
	}
	if n := len(g.free); n > 0 {
		w = g.free[n-1]
		g.free = g.free[:n-1]
		if g.ps.back == nil {
			w.reset() // the back reset the waves it gave back
		}
	} else {
		w = &wave{}
	}
	w.begin, w.stateStart, w.curState = now, now, wire.StateIdle
	w.cu, w.simd, w.id = g.targetCU, simd, slot
	g.waves[waveIndex(uint64(simd), uint64(slot))] = w
	return w
}

func (g *gfx9) waveStart(t token, now int64) error {
	v := t.v
	sh, cu, slot, simd := v>>5&1, uint8(v>>6&0xF), v>>10&0xF, uint8(v>>14&3)
	pipe, me, count, tg := uint8(v>>16&3), uint8(v>>18&3), int(v>>22&0x7F), uint8(v>>29&7)
	pc := g.regs.startPC(me, pipe)
	if cu == g.targetCU && sh == 0 {
		w := g.waves[waveIndex(uint64(simd), slot)]
		if count > 64 {
			if w == nil {
				return nil
			}
			switch w.trap {
			case trapRequest:
				if w.contexts < 255 {
					w.contexts++
				}
				w.trap = trapStandby
				w.insts = append(w.insts, wire.Instruction{Time: now, Category: wire.CatContext, Duration: 4})
				w.trapping = true
			case trapStandby:
				w.trap = trapWaitNewPC
			}
			return nil
		}
		if w == nil {
			w = g.newWave(now, simd, uint8(slot))
			w.me, w.pipe, w.wg = me, pipe, uint8(count)
			if pc != (wire.PC{}) {
				w.pcInfos = append(w.pcInfos, pcInfo{0, pc})
			}
		}
	}
	key := int(slot) | int(simd)<<5 | int(cu)<<7
	o := &g.running[key]
	if o.running {
		o.pc = pc
		return nil
	}
	o.running, o.pc = true, pc
	g.add(wire.Occupancy{PC: pc, Time: uint64(now), CU: cu, SIMD: simd,
		WaveID: uint8(slot), Start: true, MEID: me, PipeID: pipe, IsExt: true, WorkgroupID: tg})
	return g.occFull(false)
}

// occFull flushes the pending occupancy records: in a double-buffered
// capture, as the library does, at a WAVE_END with 65536 or more pending
// (2.2.6), which already bounds them; otherwise when PoolLimit is reached.
func (g *gfx9) occFull(waveEnd bool) error {
	if g.due(g.doubleBuffer, waveEnd, g.ps.limit) {
		return g.flushOcc()
	}
	return nil
}

// finishWave stitches and emits w, the wave a token at byte off ends (or
// the end of the buffer); a stitch 0.1.6 fails is invalid shader data
// there.
// In a split decode the back does that, and recycles w.
func (g *gfx9) finishWave(w *wave, off int64) error {
	if g.ps.back != nil {
		return g.ps.back.wave(w, off)
	}
	err := g.ps.emitGFX9Wave(w, off)
	g.free = append(g.free, w)
	return err
}

// emitGFX9Wave stitches and emits w (gfx9.finishWave).
func (ps *parseState) emitGFX9Wave(w *wave, off int64) error {
	consumed, err := ps.stitchGFX9(w)
	if err == nil {
		err = ps.finishWave(w, consumed)
	}
	if errors.Is(err, errNoLineAfter016) {
		return &DataError{Offset: off, Msg: err.Error()}
	}
	return err
}

func (g *gfx9) flushOcc() error { return g.occPool.flush(g.em, &g.regs.code) }

func (g *gfx9) waveEnd(t token, now int64) error {
	v := t.v
	sh, cu, slot, simd := v>>5&1, uint8(v>>6&0xF), v>>10&0xF, uint8(v>>14&3)
	if cu == g.targetCU && sh == 0 {
		w := g.waves[waveIndex(uint64(simd), slot)]
		if w == nil || w.trap != trapRestored {
			return nil
		}
		if g.ps.rules.dropOtherMsg {
			w.programEnd016()
		}
		w.complete(now, g.ps.rules.endAtWaveEndIdle)
		if !g.ps.rules.noLateWaveAttrib {
			w.retranslate(&g.regs.code)
		}
		g.waves[waveIndex(uint64(simd), slot)] = nil
		if err := g.finishWave(w, t.off); err != nil {
			return err
		}
	}
	key := int(slot) | int(simd)<<5 | int(cu)<<7
	o := &g.running[key]
	if o.running {
		o.running = false
		g.add(wire.Occupancy{PC: g.regs.code.late(o.pc), Time: uint64(now), CU: cu,
			SIMD: simd, WaveID: uint8(slot), IsExt: true})
	} else if !g.packetLost {
		// A wave end without a start: a START and an END at time 0 with
		// no PC, the START at the front of the pending batch.
		syn := wire.Occupancy{CU: cu, SIMD: simd, WaveID: uint8(slot), IsExt: true, Start: true}
		g.occFront = append(g.occFront, syn)
		syn.Start = false
		g.add(syn)
	}
	return g.occFull(true)
}

// programEnd016 is what AMD's 0.1.6 library makes, at the WAVE_END, of
// the last OTHER_MSG a wave resolved (which 0.1.6 deleted from the list at
// its INST token): the message a gfx950 wave ends with (s_endpgm issues as
// an INST of type OTHER_MSG at the WAVE_END time; real trace gfx950_gemm_0,
// every shader engine). It comes back as a MESSAGE after the wave's last
// entry when it issued (at T) later than that entry, placed like an IMMED
// from the end p of that entry, untrimmed: {p, MESSAGE, T + 4 - p, 0},
// which lasts less than 4 cycles, or a negative time, when the entry ends
// after T (an instruction after the message that took a stall from before
// it). When the last ISSUE stall not consumed by an instruction started
// before T but not before p, the message takes it instead: {s, MESSAGE,
// T + 4 - s, stall T - s}. Either way the last timeline segment loses
// T - start (and grows when that is negative) and the timeline then
// waits (or stalls) through the message (sqtt-format.md 2.2.4, "OTHER_MSG
// on real hardware"; A.4 item 8.8). A wave whose only entry was the
// message, or whose last entry issued no earlier, drops it.
func (w *wave) programEnd016() {
	n := len(w.insts)
	if !w.msg016 || n == 0 || w.insts[n-1].Time >= w.msgTime {
		return
	}
	T, p := w.msgTime, end(&w.insts[n-1])
	I := wire.Instruction{Time: p, Category: wire.CatMessage}
	state := wire.StateWait
	if k := len(w.stallStarts); w.stallHead < k && w.stallStarts[k-1] >= p && w.stallStarts[k-1] < T {
		I.Time, I.Stall, state = w.stallStarts[k-1], uint32(T-w.stallStarts[k-1]), wire.StateStall
	}
	I.Duration = int32(T + 4 - I.Time)
	w.insts = append(w.insts, I)
	if k := len(w.timeline); k > 0 {
		w.timeline[k-1].Duration -= int32(T - I.Time)
	}
	w.timeline = append(w.timeline, wire.WaveState{Type: state, Duration: I.Duration})
	w.curState, w.stateStart = wire.StateExec, end(&I)
}

// waitFrom brings the timeline to ti in the current state, then waits c
// cycles; the wave is in EXEC after them.
func (w *wave) waitFrom(ti, c int64) {
	if w.stateStart < ti {
		w.addTimeline(w.curState, ti-w.stateStart)
	}
	w.curState = wire.StateExec
	w.timeline = append(w.timeline, wire.WaveState{Type: wire.StateWait, Duration: int32(c)})
	w.stateStart = ti + c
}

// complete ends a wave at token time t: at t+4 in the current state, or
// under endAtWaveEndIdle (A.3 item 1) at t in an IDLE segment.
func (w *wave) complete(t int64, endAtWaveEndIdle bool) {
	e, last := t+4, w.curState
	if endAtWaveEndIdle {
		e, last = t, wire.StateIdle
	}
	// 0.1.6 also closes the timeline of a wave without instructions (one
	// IDLE segment; real trace gfx950_gemm_0, shader engine 2).
	if (endAtWaveEndIdle || len(w.insts) > 0 && len(w.timeline) > 0) && e > w.stateStart {
		w.timeline = append(w.timeline, wire.WaveState{Type: last, Duration: int32(e - w.stateStart)})
	}
	w.curState = wire.StateEmpty
	w.end, w.ended = e, true
}

// trim ends prev no later than t (2.2.5). The library keeps an entry's
// stall in the 24 bits inst_t has for it (4.5) from the start, so a stall
// of 2^24 cycles or more is compared by its low 24 bits (A.4 item 8.10).
func trim(prev *wire.Instruction, t int64) {
	if t < end(prev) {
		prev.Duration = int32(max(t-prev.Time, 4))
		if int64(prev.Stall&0xFFFFFF) > int64(prev.Duration) {
			prev.Stall = uint32(prev.Duration)
		}
	}
}

// pushInst appends an instruction of the given fields, its PC unknown, for
// the usual entries of both families (gfx9's ISSUE INST and IMMED, RDNA's
// INST, VALU_INST and IMMED). It writes the entry in place rather than
// appending a composite literal, which would copy it through the stack
// (the CPU cannot forward a load from the narrower stores that built it);
// inlined, it takes fewer instructions than pushing a zero entry and
// storing its fields through a pointer.
func (w *wave) pushInst(t int64, cat wire.InstCategory, stall uint32, d int32) {
	n := len(w.insts)
	if n == cap(w.insts) {
		w.insts = slices.Grow(w.insts, 1)
	}
	w.insts = w.insts[:n+1]
	w.insts[n] = wire.Instruction{Category: cat, Stall: stall, Duration: d, Time: t}
}

// immed adds the IMMED a gfx9 wave issued at t (ISSUE status 3). It lies
// (2.2.6) from the end of the instruction before it, when that ends
// earlier (it is trimmed to t first), to 4 cycles past t. The span is
// worked out here, not in a function of its own: that one was too large
// to inline, a call at each IMMED.
func (w *wave) immed(t int64) {
	ti := t
	if n := len(w.insts); n > 0 && uint8(w.insts[n-1].Category) != catUnfinished {
		last := &w.insts[n-1]
		trim(last, t)
		ti = min(end(last), t)
	}
	c := 4 + max(0, t-ti)
	if w.msg016 && ti < w.msgTime {
		// 0.1.6: not before the last OTHER_MSG it deleted
		// (A.4 item 8.3).
		ti, c = w.msgTime, 4+t-w.msgTime
	}
	w.pushInst(ti, wire.CatImmed, uint32(c), int32(c))
	w.waitFrom(ti, c)
}

// issue applies an ISSUE token v at time t (buffered has a copy inlined).
func (g *gfx9) issue(v uint64, t int64) {
	st := v >> 8 & 0xFFFFF
	// One bit per slot with a nonzero status, at the status's low bit.
	busy := (st | st>>1) & 0x55555
	if busy == 0 {
		return
	}
	simd := v >> 1 & 0x30 // as waveIndex places it
	for ; busy != 0; busy &= busy - 1 {
		b := bits.TrailingZeros64(busy)
		status := st >> b & 3
		w := g.waves[(simd|uint64(b>>1))&0x3F]
		if w == nil || w.trap != trapRestored {
			continue
		}
		switch status {
		case 3: // IMMED: in EXEC until t+4 (waitFrom), nothing to add
			w.immed(t)
		case 1: // STALL
			prev := w.curState
			w.curState = wire.StateStall
			w.stallStarts = append(w.stallStarts, t)
			if d := t - w.stateStart; d > 0 {
				w.addTimeline(prev, d)
				w.stateStart = t
			}
		case 2: // INST
			prev := w.curState
			w.curState = wire.StateExec
			w.issued = append(w.issued, len(w.insts))
			w.pushInst(t, wire.CatUnresolved, 0, 0)
			if d := t - w.stateStart; d > 0 {
				w.addTimeline(prev, d)
				w.stateStart = t
			}
		}
	}
}

// inst resolves an INST token v at byte off.
func (g *gfx9) inst(v uint64, off, now int64) error {
	slot, simd, k := v>>5&0xF, uint8(v>>9&3), int(v>>11&0x1F)
	w := g.waves[v>>5&0x3F]
	if w == nil {
		w = g.newWave(now, simd, uint8(slot))
	}
	if w.trap != trapRestored {
		if w.trap == trapWaitNewPC && k == instPC {
			w.pcInfos = append(w.pcInfos, pcInfo{len(w.insts), wire.PC{}})
			w.trap = trapRestored
			if n := len(w.insts); n > 0 && w.insts[n-1].Category == wire.CatContext {
				w.insts[n-1].Duration = int32(now + 4 - w.insts[n-1].Time)
			}
		}
		return nil
	}
	if w.issuedHead == len(w.issued) {
		return nil
	}
	j := w.issued[w.issuedHead]
	if w.issuedHead++; w.issuedHead == len(w.issued) {
		w.issued, w.issuedHead = w.issued[:0], 0
	}
	n := len(w.insts)
	if j >= n {
		// An index left stale by an earlier deletion (open question 4)
		// that now points past the end: AMD's 0.1.6 fails with invalid
		// shader data (A.4 item 8.9), and so does the native decoder.
		return &DataError{Offset: off, Msg: "an INST token resolves an issued instruction that an earlier token deleted"}
	}
	ins := w.insts
	I := &ins[j]
	if n >= 2 && I.Time < end(&ins[n-2]) {
		g.phase++
	}
	var p int64 // where the entry before ends
	if j > 0 {
		prev := &ins[j-1]
		trim(prev, I.Time)
		p = end(prev)
	}
	phase := (g.phase + int64(simd)) & 3 // g.phase and simd are not negative
	// Every type is kept, without a test: only the replayed ones are read.
	w.lastOfType[k&31] = j + 1
	if k == instOtherMsg && g.ps.rules.dropOtherMsg {
		// 0.1.6 deletes an OTHER_MSG like a dropped type (so the
		// issue indices after it go stale) but remembers its time, for
		// a following IMMED and for the wave's end (programEnd016).
		w.msg016, w.msgTime = true, I.Time
		w.insts = append(w.insts[:j], w.insts[j+1:]...)
		return nil
	}
	cls := gfx9InstClass[k]
	switch {
	case cls.ok:
		I.Category = cls.cat
		phase += int64(cls.phase)
		switch k {
		case instPC:
			w.pcInfos = append(w.pcInfos, pcInfo{j + 1, wire.PC{}})
		case instGoToTrap:
			w.trap = trapWaitNewPC
			w.trapping = true
			for p := range w.pcInfos {
				if w.pcInfos[p].idx == n-1 {
					w.pcInfos[p].idx++
				}
			}
		}
	case k >= instReplayFirst && k <= instReplayLast:
		o := gfx9ReplayOf[k]
		x := w.lastOfType[o]
		w.lastOfType[o] = 0
		if x > 0 && x < n && x < j {
			X := &w.insts[x-1]
			was := X.Duration
			X.Duration = int32(max(int64(X.Duration), now+4-X.Time))
			X.Stall += uint32(X.Duration - was)
		}
		w.insts = append(w.insts[:j], w.insts[j+1:]...)
		return nil
	default:
		w.insts = append(w.insts[:j], w.insts[j+1:]...)
		return nil
	}
	I.Duration = int32(4 + max(now-I.Time-phase&^3, 0))
	if s, ok := w.takeStall(I.Time, p); ok {
		I.Stall = uint32(max(I.Time-s, 0))
		I.Duration = int32(max(I.Time+int64(I.Duration)-s, 4))
		I.Time = s
	}
	return nil
}

// takeStall consumes the ISSUE stalls that began before an instruction
// issued at t and reports where its stall starts: at the start of the last
// of them, but not before p, the end of the instruction before it. ok is
// false when no stall began before t.
// The queue is emptied (both 0) whenever it is used up, so an empty one
// returns at once, without a store.
func (w *wave) takeStall(t, p int64) (s int64, ok bool) {
	h, q := w.stallHead, w.stallStarts
	if h == len(q) || t <= q[h] {
		return 0, false
	}
	for h < len(q) && t > q[h] {
		s, ok = max(q[h], p), true
		h++
	}
	if h == len(q) {
		w.stallStarts, h = q[:0], 0
	}
	w.stallHead = h
	return s, ok
}

func (g *gfx9) instPC(t token) error {
	w := g.waves[t.v>>5&0x3F]
	if w == nil || len(w.pcInfos) == 0 || w.trap != trapRestored {
		return nil
	}
	w.setPC(g.regs.code.translate((t.v >> 16) * 4))
	return nil
}

func (g *gfx9) regCS(v uint64, now int64) error {
	pipe, me := uint8(v>>5&3), uint8(((v>>7&3)+1)&1)
	reg, data := uint32(v>>9&0x7F), uint32(v>>16)
	d, flush := g.regs.csWrite(reg, data, me, pipe, 0)
	switch {
	case d != nil:
		d.Time = now
		return g.em.dispatchRec(*d)
	case flush:
		return g.em.eventRec(wire.EventCSPartialFlush, now, me, pipe, 0, 0)
	}
	return nil
}

func (g *gfx9) reg(v uint64, now int64) error {
	if v>>15&1 == 0 {
		return nil
	}
	pipe, me := uint8(v>>5&3), uint8(((v>>7&3)+1)&1)
	addr, data := v>>16&0xFFFF, uint32(v>>32)
	switch addr {
	case regUserData3:
		if g.regs.ud2 != stateInactive {
			return g.userData3(data, now)
		}
	case regUserData2:
		ev, changed := g.regs.userData2(data, me, pipe)
		if ev != nil {
			return g.em.eventRec(ev.typ, now, me, pipe, 0x1, uint64(uint32(ev.id)))
		}
		if changed {
			g.reprocessPerf()
		}
	}
	return nil
}

// userData3 runs the gfx9 realtime protocol (2.2.8).
func (g *gfx9) userData3(data uint32, now int64) error {
	rt := &g.rt
	if rt.remaining == 0 {
		op, d20 := data&0xFF, int(data>>12)
		rt.op, rt.idx, rt.remaining = op, 0, d20
		switch op {
		case opRTTimestamp:
			if d20 == 0 {
				rt.remaining = 3
			}
		case opRTTimestampLo:
			if g.ps.rules.noRTTimestampLo {
				rt.op = 0 // added after 0.1.6: an unknown packet there
				break
			}
			if d20 == 0 {
				rt.remaining = 1
			}
			rt.low = rt.now
		}
		return nil
	}
	switch {
	case rt.op == opRTTimestamp && rt.idx == 0:
		rt.low = uint64(data)
	case rt.op == opRTTimestamp && rt.idx == 1:
		rt.hi = uint64(data)
	case rt.op == opRTTimestamp && rt.idx == 2, rt.op == opRTTimestampLo && rt.idx == 0:
		rt.now = uint64(data)
	}
	rt.idx++
	rt.remaining--
	if rt.remaining == 0 && (rt.op == opRTTimestamp || rt.op == opRTTimestampLo) {
		if rt.now < rt.low {
			rt.hi++
		}
		g.realtime = append(g.realtime, wire.Realtime{ShaderClock: now, RealtimeClock: rt.now | rt.hi<<32})
		if len(g.realtime) >= g.ps.limit {
			err := g.em.realtime(g.realtime)
			g.realtime = g.realtime[:0]
			return err
		}
	}
	return nil
}

func (g *gfx9) shaderData(t token, now int64) error {
	v := t.v
	cu, slot, simd := uint8(v>>6&0xF), v>>10&0xF, uint8(v>>14&3)
	g.sd = append(g.sd, wire.ShaderData{Time: now, Value: v >> 16 & 0xFFFFFFFF, CU: cu, SIMD: simd, WaveID: uint8(slot)})
	if n := len(g.sd); n > shaderDataFlush || n == shaderDataFlush && !g.ps.rules.shaderData65537 {
		err := g.em.shaderData(g.sd)
		g.sd = g.sd[:0]
		return err
	}
	return nil
}

func (g *gfx9) perfToken(v uint64, now int64) error {
	if v>>5&1 != 0 {
		return nil
	}
	cu, bank := uint8(v>>6&0xF), uint8(v>>10&3)
	p := wire.PerfEvent{Time: now - 4*int64(cu), CU: cu, Bank: bank}
	for i := range p.Events {
		p.Events[i] = uint16(v >> (12 + 13*i) & 0x1FFF)
	}
	k := &g.perfKeys[int(cu)<<2|int(bank)]
	if n := g.regs.perfInterval; n > 0 && k.seen && k.last > 0 && p.Time > k.last+n {
		g.perf = append(g.perf, wire.PerfEvent{Time: p.Time, CU: cu, Bank: bank})
	}
	g.perf = append(g.perf, p)
	k.seen, k.last = true, p.Time
	if len(g.perf) >= g.ps.limit {
		err := g.em.perf(g.perf)
		g.perf = g.perf[:0]
		return err
	}
	return nil
}

// reprocessPerf inserts the zero records a newly announced counter interval
// calls for into the records already pooled, then re-sorts them (2.2.9).
func (g *gfx9) reprocessPerf() {
	n := g.regs.perfInterval
	if n <= 0 || len(g.perf) == 0 {
		return
	}
	var last [64]int64
	var seen [64]bool
	orig := len(g.perf)
	for i := 0; i < orig; i++ {
		p := g.perf[i]
		key := int(p.CU)<<2 | int(p.Bank)
		if seen[key] && last[key] > 0 && p.Time > last[key]+n {
			g.perf = append(g.perf, wire.PerfEvent{Time: last[key] + n, CU: p.CU, Bank: p.Bank})
		}
		seen[key], last[key] = true, p.Time
	}
	sort.SliceStable(g.perf, func(a, b int) bool { return g.perf[a].Time < g.perf[b].Time })
}

// endOfBuffer delivers what the library delivers at and after the end of
// a buffer (2.2.6, 4.3).
func (g *gfx9) endOfBuffer() error {
	for _, w := range g.waves {
		if w != nil {
			w.retranslate(&g.regs.code)
		}
	}
	if err := g.flushOcc(); err != nil {
		return err
	}
	if err := g.em.realtime(g.realtime); err != nil {
		return err
	}
	if err := g.em.shaderData(g.sd); err != nil {
		return err
	}
	if n := g.regs.perfInterval; n > 0 {
		for key := range g.perfKeys {
			if k := &g.perfKeys[key]; k.seen {
				g.perf = append(g.perf, wire.PerfEvent{Time: k.last + n, CU: uint8(key >> 2), Bank: uint8(key & 3)})
			}
		}
	}
	for i, w := range g.waves {
		if w == nil {
			continue
		}
		g.waves[i] = nil
		if err := g.finishWave(w, g.off+int64(g.pos)); err != nil {
			return err
		}
	}
	if err := g.ps.lostAndFreq(g.packetLost, g.regs.rtFreq); err != nil {
		return err
	}
	return g.em.perf(g.perf)
}
