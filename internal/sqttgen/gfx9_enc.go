package sqttgen

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/attkit/attkit/internal/wire"
)

// gfx9 token type ids (spec §2.2.2).
const (
	tokMISC       = 0
	tokTIME       = 1
	tokREG        = 2
	tokWaveStart  = 3
	tokWaveAlloc  = 4
	tokRegCS      = 5
	tokWaveEnd    = 6
	tokEvent      = 7
	tokInst       = 10
	tokInstPC     = 11
	tokShaderData = 12
	tokIssue      = 13
	tokPerf       = 14
	tokRegCSPriv  = 15
)

// MISC types (spec §2.2.4).
const (
	miscTime        = 0
	miscTimeReset   = 1
	miscPacketLost  = 2
	miscTTStallBeg  = 4
	miscTTStallEnd  = 5
	miscSaveContext = 6
)

// ISSUE status values.
const (
	issueNone  = 0
	issueStall = 1
	issueInst  = 2
	issueImmed = 3
)

// INST types (spec §2.2.4).
const (
	instSMEMRd   = 0
	instSALU32   = 1
	instVMEMRd   = 2
	instVMEMWr   = 3
	instFLATWr   = 4
	instVALU32   = 5
	instLDS      = 6
	instPC       = 7
	instJump     = 12
	instNext     = 13
	instFLATRd   = 14
	instOtherMsg = 15
	instSMEMWr   = 16
	instSALU64   = 17
	instVALU64   = 18
	instVALUMAI  = 28
	instGoToTrap = 29
)

// Header describes the 8-byte gfx9 software header (spec §2.2.1).
type Header struct {
	Version2     uint8 // 4: MI200 and older, 5: MI300, 6: MI350
	SIMDMask     uint8 // 4 bits
	TargetCU     uint8 // 0..15 (tokens carry 4-bit CU numbers)
	SE           uint8 // 6 bits, informational
	DoubleBuffer bool
}

// Word returns the header as the little-endian word written first.
func (h Header) Word() uint64 {
	w := uint64(0x11) | uint64(h.Version2&7)<<13 | uint64(h.SIMDMask&0xF)<<16 |
		uint64(h.TargetCU&0x1F)<<20 | uint64(h.SE&0x3F)<<26
	if h.DoubleBuffer {
		w |= 1 << 32
	}
	return w
}

// enc writes gfx9 tokens and keeps the decoder's clock. Every token method
// takes the token's 1-bit time delta d (0 or 1, adding 4*d cycles) and
// reports the token, at its time, to the model when there is one.
type enc struct {
	byteOut
	clock int64
	m     *model

	// time reset handling (spec §2.2.3): between a TIME_RESET and the next
	// TIME token only MISC padding may be written; its delta is held back.
	resetPending bool
	resetQueued  int64
	timeBase     int64
	// neutral: the pending reset is one of neutralResetBegin/End, which
	// keep the clock; any token may come between them (the decoder holds
	// them in its look-ahead queue and delivers them after the TIME token).
	neutral bool
	resetAt int64
}

// byteOut is the byte output of the gfx9 and RDNA encoders: the encoders
// append to buf and flush it to w (a nil w only counts the bytes) once it
// holds flushAt bytes.
type byteOut struct {
	buf []byte
	w   io.Writer
	err error
	n   int64 // bytes handed to w
}

const flushAt = 1 << 20

func newByteOut(w io.Writer) byteOut { return byteOut{w: w, buf: make([]byte, 0, flushAt+64)} }

// offset returns the number of bytes written so far.
func (o *byteOut) offset() int64 { return o.n + int64(len(o.buf)) }

func (o *byteOut) flush() error {
	if o.err == nil && len(o.buf) > 0 {
		if o.w != nil {
			_, o.err = o.w.Write(o.buf)
		}
		o.n += int64(len(o.buf))
	}
	o.buf = o.buf[:0]
	return o.err
}

func newEnc(w io.Writer, m *model) *enc {
	return &enc{byteOut: newByteOut(w), m: m}
}

func (e *enc) put(v uint64, nbytes int) {
	e.buf = binary.LittleEndian.AppendUint64(e.buf, v)
	e.buf = e.buf[:len(e.buf)-8+nbytes]
	if len(e.buf) >= flushAt {
		e.flush()
	}
}

func (e *enc) header(h Header) {
	e.put(h.Word(), 8)
	if e.m != nil {
		e.m.header(h)
	}
}

func (e *enc) tick(d uint64) int64 {
	if e.resetPending && !e.neutral {
		panic("sqttgen: only MISC padding may follow a TIME_RESET before its TIME token")
	}
	e.clock += int64(d&1) * 4
	return e.clock
}

// at pads with MISC tokens so that a token with the returned delta bit has
// time t. t must not be before the clock and must be a multiple of 4 away.
func (e *enc) at(t int64) uint64 {
	g := (t - e.clock) / 4
	if g < 0 || (t-e.clock)%4 != 0 {
		panic(fmt.Sprintf("sqttgen: token time %d not reachable from clock %d", t, e.clock))
	}
	if g <= 1 {
		return uint64(g)
	}
	for g > 256 {
		e.misc(255, miscTime)
		g -= 255
	}
	e.misc(uint64(g-1), miscTime)
	return 1
}

// misc writes a MISC token with an 8-bit delta (units of 4 cycles).
func (e *enc) misc(delta8 uint64, typ uint64) {
	e.put(tokMISC|(delta8&0xFF)<<4|(typ&7)<<13, 2)
	if e.resetPending && e.neutral && typ == miscTimeReset {
		panic("sqttgen: TIME_RESET while one is pending")
	}
	if e.resetPending && !e.neutral {
		if typ != miscTime {
			panic("sqttgen: only MISC padding may follow a TIME_RESET before its TIME token")
		}
		e.resetQueued += int64(delta8&0xFF) * 4
		return
	}
	e.clock += int64(delta8&0xFF) * 4
	if typ == miscTimeReset {
		e.resetPending = true
		e.resetQueued = 0
		return
	}
	if e.m != nil && typ != miscTime {
		e.m.misc(e.clock, int(typ))
	}
}

// timeToken writes a TIME token with absolute value t48. Right after a
// TIME_RESET it sets the clock as spec §2.2.3 says; otherwise only its delta
// counts.
func (e *enc) timeToken(d uint64, t48 uint64) {
	e.put(tokTIME|(d&1)<<4|(t48&(1<<48-1))<<16, 8)
	if !e.resetPending {
		e.clock += int64(d&1) * 4
		return
	}
	e.resetPending = false
	T := int64(t48 & (1<<48 - 1))
	if e.timeBase == 0 {
		e.timeBase = T - e.clock + 4
	}
	if T > e.timeBase {
		e.clock = (T - e.timeBase) &^ 3
	}
	e.clock += e.resetQueued
	e.resetQueued = 0
}

// timeResetNeutral writes a TIME_RESET and a TIME token that leave the
// clock where it is (spec §2.2.3): the first reset sets the base so that
// the clock goes back 4 cycles, which a queued MISC delta makes up; later
// ones name the absolute time base + clock.
func (e *enc) timeResetNeutral() {
	e.misc(0, miscTimeReset)
	if e.timeBase == 0 {
		e.misc(1, miscTime)
		e.timeToken(0, uint64(e.clock)+0x10000)
		return
	}
	e.timeToken(0, uint64(e.timeBase+e.clock))
}

// neutralResetBegin writes a TIME_RESET whose TIME token, written by
// neutralResetEnd after any other tokens, leaves the clock as it is: the
// first reset of a buffer sets the time base so that the decoder's clock
// goes back 4 cycles, which a MISC delta right after the reset (not counted
// here) makes up.
func (e *enc) neutralResetBegin(d uint64) {
	e.misc(d, miscTimeReset) // sets resetPending
	e.neutral, e.resetAt = true, e.clock
	if e.timeBase == 0 {
		e.put(tokMISC|1<<4, 2) // the +4 the first reset costs
	}
}

// neutralResetEnd writes the TIME token of a pending neutral reset.
func (e *enc) neutralResetEnd() {
	T := e.timeBase + e.resetAt
	if e.timeBase == 0 {
		T = e.resetAt + 0x10000
		e.timeBase = T - e.resetAt + 4
	}
	e.put(tokTIME|uint64(T)<<16, 8)
	e.resetPending, e.neutral = false, false
}

func group(sh, cu, wave, simd uint64) uint64 {
	return (sh&1)<<5 | (cu&0xF)<<6 | (wave&0xF)<<10 | (simd&3)<<14
}

// waveStart writes a WAVE_START token.
func (e *enc) waveStart(d uint64, sh, cu, simd, wave, me, pipe, count, tg uint64) {
	e.put(tokWaveStart|(d&1)<<4|group(sh, cu, wave, simd)|(pipe&3)<<16|(me&3)<<18|
		(count&0x7F)<<22|(tg&7)<<29, 4)
	t := e.tick(d)
	if e.m != nil {
		e.m.waveStart(t, uint8(sh), uint8(cu), uint8(simd), uint8(wave), uint8(me), uint8(pipe), uint8(count), uint8(tg))
	}
}

// waveEnd writes a WAVE_END token.
func (e *enc) waveEnd(d uint64, sh, cu, simd, wave uint64) {
	e.put(tokWaveEnd|(d&1)<<4|group(sh, cu, wave, simd), 2)
	t := e.tick(d)
	if e.m != nil {
		e.m.waveEnd(t, uint8(sh), uint8(cu), uint8(simd), uint8(wave))
	}
}

// issue writes an ISSUE token for one SIMD; st holds the status of wave
// slots 0..9 and pcs the PC of the instruction each INST or IMMED status
// issues (for the model only).
func (e *enc) issue(d uint64, simd uint64, st *[10]uint8, pcs *[10]wire.PC) {
	v := uint64(tokIssue) | (d&1)<<4 | (simd&3)<<5
	for i, s := range st {
		v |= uint64(s&3) << (8 + 2*i)
	}
	e.put(v, 4)
	t := e.tick(d)
	if e.m != nil {
		e.m.issue(t, uint8(simd), st, pcs)
	}
}

// issue1 writes an ISSUE token with one wave slot's status.
func (e *enc) issue1(d uint64, simd, wave uint64, status uint8, pc wire.PC) {
	v := uint64(tokIssue) | (d&1)<<4 | (simd&3)<<5 | uint64(status&3)<<(8+2*wave)
	e.put(v, 4)
	t := e.tick(d)
	if e.m != nil {
		var st [10]uint8
		var pcs [10]wire.PC
		st[wave], pcs[wave] = status, pc
		e.m.issue(t, uint8(simd), &st, &pcs)
	}
}

// inst writes an INST token.
func (e *enc) inst(d uint64, simd, wave, typ uint64) {
	e.put(tokInst|(d&1)<<4|(wave&0xF)<<5|(simd&3)<<9|(typ&0x1F)<<11, 2)
	t := e.tick(d)
	if e.m != nil {
		e.m.inst(t, uint8(simd), uint8(wave), int(typ))
	}
}

// instPC writes an INST_PC token; addr is the byte address (a multiple of 4).
func (e *enc) instPC(d uint64, simd, wave uint64, addr uint64) {
	e.put(tokInstPC|(d&1)<<4|(wave&0xF)<<5|(simd&3)<<9|((addr/4)&(1<<48-1))<<16, 8)
	e.tick(d)
	if e.m != nil {
		e.m.instPC(uint8(simd), uint8(wave), addr&^3)
	}
}

// shaderData writes a SHADERDATA token.
func (e *enc) shaderData(d uint64, sh, cu, simd, wave uint64, data uint32) {
	e.put(tokShaderData|(d&1)<<4|group(sh, cu, wave, simd)|uint64(data)<<16, 6)
	t := e.tick(d)
	if e.m != nil {
		e.m.shaderData(t, uint8(cu), uint8(simd), uint8(wave), data)
	}
}

// regCS writes a REG_CS token for compute register index reg (0..0x7F) of
// ME me (the encoder writes me_raw = 1 - me).
func (e *enc) regCS(d uint64, me, pipe uint64, reg uint64, data uint32) {
	meRaw := (1 - me) & 1
	e.put(tokRegCS|(d&1)<<4|(pipe&3)<<5|meRaw<<7|(reg&0x7F)<<9|uint64(data)<<16, 6)
	t := e.tick(d)
	if e.m != nil {
		e.m.regCS(t, uint8(me&1), uint8(pipe&3), uint8(reg&0x7F), data)
	}
}

// reg writes a REG token with the enable bit set.
func (e *enc) reg(d uint64, me, pipe uint64, addr uint16, data uint32) {
	meRaw := (1 - me) & 1
	e.put(tokREG|(d&1)<<4|(pipe&3)<<5|meRaw<<7|1<<15|uint64(addr)<<16|uint64(data)<<32, 8)
	t := e.tick(d)
	if e.m != nil {
		e.m.reg(t, uint8(me&1), uint8(pipe&3), addr, data)
	}
}

// perf writes a PERF token (sh 0).
func (e *enc) perf(d uint64, cu, bank uint64, c [4]uint16) {
	e.put(tokPerf|(d&1)<<4|(cu&0xF)<<6|(bank&3)<<10|uint64(c[0]&0x1FFF)<<12|
		uint64(c[1]&0x1FFF)<<25|uint64(c[2]&0x1FFF)<<38|uint64(c[3]&0x1FFF)<<51, 8)
	t := e.tick(d)
	if e.m != nil {
		e.m.perf(t, uint8(cu&0xF), uint8(bank&3), c)
	}
}

// raw writes n bytes of v as they are (padding, hand-made vectors).
func (e *enc) raw(v uint64, n int) { e.put(v, n) }

// end finishes the buffer: flushes the bytes and lets the model emit its
// end-of-buffer records.
func (e *enc) end() error {
	if e.m != nil {
		e.m.end()
	}
	return e.flush()
}
