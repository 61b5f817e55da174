package sqttgen

import (
	"fmt"
	"io"

	"github.com/attkit/attkit/internal/wire"
)

// RDNA token types (spec §2.3.2).
const (
	rtInst = iota
	rtValu
	rtImmOne
	rtImmediate
	rtReady
	rtNewPC
	rtWaveStart
	rtWaveStartExt
	rtWaveAlloc
	rtWaveEnd
	rtSData
	rtSDataShort
	rtUtil
	rtTime
	rtNop
	rtMisc
	rtEvent
	rtEventSync
	rtReg
	rtRegInit
	rtTimestamp
	rtHeader
	rtPop1
	rtPop3
	rtAluExec
	rtVmemExec
	rtCount
)

// rdnaSpec is one token encoding: prefix pattern (least significant bit
// first in the stream), length in bits and the time-delta field [tb, te).
type rdnaSpec struct {
	pat    uint64
	length uint
	tb, te uint
}

func rdSpecs(gen int) *[rtCount]rdnaSpec {
	var s [rtCount]rdnaSpec
	s[rtInst] = rdnaSpec{0b010, 20, 4, 7}
	s[rtValu] = rdnaSpec{0b011, 12, 3, 6}
	s[rtImmOne] = rdnaSpec{0b1101, 12, 4, 7}
	s[rtImmediate] = rdnaSpec{0b00100, 24, 5, 8}
	s[rtReady] = rdnaSpec{0b10100, 24, 5, 8}
	s[rtNewPC] = rdnaSpec{0b0100001, 64, 8, 11}
	s[rtWaveStart] = rdnaSpec{0b01100, 32, 5, 7}
	s[rtWaveStartExt] = rdnaSpec{0b11100, 48, 5, 7}
	s[rtWaveAlloc] = rdnaSpec{0b00101, 20, 5, 8}
	s[rtWaveEnd] = rdnaSpec{0b10101, 20, 5, 8}
	s[rtSData] = rdnaSpec{0b00110, 52, 5, 8}
	s[rtSDataShort] = rdnaSpec{0b10110, 28, 5, 8}
	s[rtUtil] = rdnaSpec{0b0110001, 64, 7, 9}
	s[rtTime] = rdnaSpec{0b1000, 8, 4, 8}
	s[rtNop] = rdnaSpec{0b0000, 4, 0, 0}
	s[rtMisc] = rdnaSpec{0b1010001, 24, 7, 16}
	s[rtEvent] = rdnaSpec{0b01100001, 24, 8, 11}
	s[rtEventSync] = rdnaSpec{0b11100001, 32, 8, 11}
	s[rtReg] = rdnaSpec{0b1001, 64, 4, 7}
	s[rtRegInit] = rdnaSpec{0b1110001, 64, 7, 10}
	s[rtTimestamp] = rdnaSpec{0b0000001, 64, 0, 0}
	s[rtHeader] = rdnaSpec{0b0010001, 64, 0, 0}
	s[rtAluExec] = rdnaSpec{0b1110, 8, 4, 6}
	s[rtVmemExec] = rdnaSpec{0b1111, 8, 4, 6}
	if gen >= 11 {
		s[rtUtil].length = 48
		s[rtTimestamp].length = 48
	}
	if gen >= 12 {
		s[rtInst] = rdnaSpec{0b010, 20, 3, 6}
		s[rtSData] = rdnaSpec{0b0000110, 56, 7, 10}
		s[rtSDataShort] = rdnaSpec{0b1000110, 32, 7, 10}
		s[rtPop1] = rdnaSpec{0b1100110, 24, 7, 10}
		s[rtPop3] = rdnaSpec{0b010110, 48, 6, 9}
		s[rtNewPC].length = 72
		s[rtWaveStartExt].length = 40
		s[rtWaveAlloc].length = 24
		s[rtTimestamp].length = 64
	}
	return &s
}

// RDNAHeader is the HEADER token of an RDNA trace (spec §2.3.4).
type RDNAHeader struct {
	Version            uint8 // 1, 2: gfx10; 3: gfx11; 4: gfx12
	DSIMD, DWGP, DSA   uint8 // traced SIMD, WGP (3 bits), shader array
	NSA, NWGP          uint8
	DPRate, DPDerate   uint8
	DoubleBuffer       bool // version 4: bit 43
	ExcludeBarrierWait bool // version 4: bit 59
}

// Word returns the 64-bit HEADER token.
func (h RDNAHeader) Word() uint64 {
	w := uint64(0b0010001) | uint64(h.Version&0x3F)<<7 | uint64(h.DSIMD&3)<<13 | uint64(h.DWGP&7)<<15 |
		uint64(h.DSA&1)<<19 | uint64(h.NSA&1)<<20 | uint64(h.NWGP&7)<<21 | uint64(h.DPRate&0xF)<<28 |
		uint64(h.DPDerate&7)<<33
	if h.DoubleBuffer {
		w |= 1 << 43
	}
	if h.ExcludeBarrierWait {
		w |= 1 << 59
	}
	return w
}

// rdnaToken is one token as the RDNA parser sees it after the reader (spec
// §2.3.6): delivered time and decoded fields. pc/pcs are the PCs the
// simulated wave executed (for the model's walk check only).
type rdnaToken struct {
	typ                int
	t                  int64
	wid, sa, wgp, simd uint8
	me, pipe           uint8
	code               uint16
	mask               uint16
	count              uint8
	isExt, extLDS      bool
	wgid               uint8
	data               uint64
	addr               uint64
	reg                uint16
	cs                 bool
	flags              uint32
	short, priv        bool
	w64                bool // INST / VALU_INST wave64 bit
	hdr                RDNAHeader
	pc                 wire.PC
	pcs                *[16]wire.PC
}

// rdnaEncoder writes an RDNA bit stream (spec §1.3: tokens start on nibble
// boundaries, bit i of the stream is bit i%8 of byte i/8) and keeps the
// reader's clock.
type rdnaEncoder struct {
	gen  int
	spec *[rtCount]rdnaSpec
	r    *rng
	byteOut
	acc   uint64
	nacc  uint
	clock int64
	m     *rdnaModel
	toks  int64

	// extPending: a gfx12 WAVE_START_EXT was written; the next token
	// must be decoded normally, so it must start with a 0 bit and not be
	// a NOP (spec §2.3.2).
	extPending bool
	// pend is an IMMEDIATE or WAVE_READY held back so that more wave
	// slots at the same time join its mask.
	pend *rdnaPending
	// lastDeliv is the time of the last delivered token.
	lastDeliv int64
	// lossNext writes a gfx11+ TIMESTAMP with the packet-loss flag right
	// before the next delivered token (spec §2.3.3).
	lossNext bool
	// merged counts wave slots that joined a held IMMEDIATE or
	// WAVE_READY token.
	merged int64
	// w64 is the wave64 bit of the next INST or VALU_INST: 0, 1, or -1
	// for a random one.
	w64 int8
}

type rdnaPending struct {
	typ   int
	t     int64
	delta uint64
	mask  uint16
	pcs   [16]wire.PC
}

func newRDNAEncoder(gen int, w io.Writer, m *rdnaModel, r *rng) *rdnaEncoder {
	return &rdnaEncoder{gen: gen, spec: rdSpecs(gen), r: r, byteOut: newByteOut(w), m: m, w64: -1}
}

// rnd returns a number in [0, n) for fields the parser ignores, or 0 when
// the encoder has no rng (hand-built vectors).
func (e *rdnaEncoder) rnd(n int) uint64 {
	if e.r == nil {
		return 0
	}
	return uint64(e.r.intn(n))
}

// wave64 returns the wave64 bit for the next INST or VALU_INST.
func (e *rdnaEncoder) wave64() uint64 {
	if e.w64 >= 0 {
		return uint64(e.w64)
	}
	return e.rnd(2)
}

func (e *rdnaEncoder) rnd64() uint64 {
	if e.r == nil {
		return 0
	}
	return e.r.next()
}

// bits appends the n low bits of v to the stream.
func (e *rdnaEncoder) bits(v uint64, n uint) {
	for n > 32 {
		e.bits(v&0xFFFFFFFF, 32)
		v >>= 32
		n -= 32
	}
	e.acc |= (v & (1<<n - 1)) << e.nacc
	e.nacc += n
	for e.nacc >= 8 {
		e.buf = append(e.buf, byte(e.acc))
		e.acc >>= 8
		e.nacc -= 8
	}
	if len(e.buf) >= flushAt {
		e.flush()
	}
}

// raw writes a token's bits; v holds bits 0..63, hi bits 64.. (72-bit
// tokens).
func (e *rdnaEncoder) raw(typ int, v, hi uint64) {
	sp := &e.spec[typ]
	if e.extPending {
		if typ == rtNop || sp.pat&1 != 0 {
			// A token no decoder skips or ignores: INST code 20 (NONE)
			// for the empty wave slot 31.
			e.instBits(0, 31, 20)
		}
		if typ != rtNop {
			e.extPending = false
		}
	}
	e.toks++
	if sp.length > 64 {
		e.bits(v, 64)
		e.bits(hi, sp.length-64)
		return
	}
	e.bits(v, sp.length)
}

func (e *rdnaEncoder) instBits(delta uint64, wid, code uint64) {
	sp := &e.spec[rtInst]
	v := sp.pat | delta<<sp.tb
	if e.gen >= 12 {
		v |= (wid&31)<<7 | (code&0xFF)<<12 | uint64(e.rnd(2))<<6
	} else {
		v |= (wid&31)<<8 | (code&0x7F)<<13 | uint64(e.rnd(2))<<7
	}
	e.toks++
	e.bits(v, sp.length)
	e.deliver(rdnaToken{typ: rtInst, t: e.clock + int64(delta), wid: uint8(wid), code: uint16(code)})
	e.clock += int64(delta)
}

// maxDelta is the largest time delta a token type carries.
func (e *rdnaEncoder) maxDelta(typ int) int64 {
	sp := &e.spec[typ]
	return int64(1)<<(sp.te-sp.tb) - 1
}

// timeTok writes a TIME token adding d cycles (4..19).
func (e *rdnaEncoder) timeTok(d int64) {
	e.raw(rtTime, e.spec[rtTime].pat|uint64(d-4)<<4, 0)
	e.clock += d
}

// timestampDelta writes a TIMESTAMP token that adds d to the clock.
func (e *rdnaEncoder) timestampDelta(d int64) {
	var v uint64
	switch e.gen {
	case 10:
		v = 1<<14 | uint64(d)<<16
	default:
		v = uint64(d) << 12
	}
	e.raw(rtTimestamp, e.spec[rtTimestamp].pat|v, 0)
	e.clock += d
}

// realtime writes a TIMESTAMP token carrying a realtime-clock sample.
func (e *rdnaEncoder) realtime(t int64, value uint64) {
	e.flushPend()
	e.advance(t, 0)
	var v uint64
	switch e.gen {
	case 10:
		value &= 1<<48 - 1
		v = 2<<14 | value<<16
	case 11:
		value &= 1<<36 - 1
		v = 1<<9 | value<<12
	default:
		value &= 1<<52 - 1
		v = 1<<7 | value<<12
	}
	e.raw(rtTimestamp, e.spec[rtTimestamp].pat|v, 0)
	if e.m != nil {
		e.m.realtime(e.clock, value)
	}
}

// advance writes TIME (and TIMESTAMP) tokens so that a token with a delta
// field of at most maxd reaches time t, and returns that delta.
func (e *rdnaEncoder) advance(t, maxd int64) uint64 {
	gap := t - e.clock
	if gap < 0 {
		panic(fmt.Sprintf("sqttgen: RDNA token time %d before the clock %d (last delivered %d)", t, e.clock, e.lastDeliv))
	}
	if gap <= maxd {
		return uint64(gap)
	}
	// Leave part of the gap to the token's own delta now and then.
	keep := int64(0)
	if maxd > 0 && e.rnd(2) == 0 && e.r != nil {
		keep = int64(e.rnd(int(maxd) + 1))
	}
	gap -= keep
	for gap > 0 {
		switch {
		case gap > 200 && e.rnd(3) == 1, gap < 4:
			e.timestampDelta(gap)
			gap = 0
		default:
			s := min(gap, 19)
			if r := gap - s; r > 0 && r < 4 {
				s -= 4 - r
			}
			e.timeTok(s)
			gap -= s
		}
	}
	return uint64(keep)
}

// deliver hands a delivered token to the model.
func (e *rdnaEncoder) deliver(tk rdnaToken) {
	if tk.t < e.lastDeliv && tk.typ != rtReady {
		panic("sqttgen: RDNA delivered times go backwards")
	}
	e.lastDeliv = max(e.lastDeliv, tk.t)
	if e.m != nil {
		e.m.feed(tk)
	}
}

// tok writes a delivered token at time t: the advance, then the bits,
// then the model.
func (e *rdnaEncoder) tok(typ int, t int64, fields, hi uint64, tk rdnaToken) {
	e.flushPend()
	d := e.advance(t, e.maxDelta(typ))
	if e.lossNext {
		e.lossNext = false
		e.raw(rtTimestamp, e.spec[rtTimestamp].pat|1<<8, 0) // pl, rt 0, value 0
		if e.m != nil {
			e.m.readerLoss = true
		}
	}
	sp := &e.spec[typ]
	e.raw(typ, sp.pat|d<<sp.tb|fields, hi)
	e.clock += int64(d)
	tk.typ, tk.t = typ, e.clock
	e.deliver(tk)
}

func (e *rdnaEncoder) flushPend() {
	p := e.pend
	if p == nil {
		return
	}
	e.pend = nil
	sp := &e.spec[p.typ]
	e.raw(p.typ, sp.pat|p.delta<<sp.tb|uint64(p.mask)<<8, 0)
	e.clock += int64(p.delta)
	t := e.clock
	if p.typ == rtReady && e.gen <= 11 {
		t-- // spec §2.3.1 step 5
	}
	pcs := p.pcs
	e.deliver(rdnaToken{typ: p.typ, t: t, mask: p.mask, pcs: &pcs})
}

// masked queues wave slot wid into an IMMEDIATE or WAVE_READY at time t,
// joining a held token of the same type and time.
func (e *rdnaEncoder) masked(typ int, t int64, wid uint8, pc wire.PC) {
	if p := e.pend; p != nil && p.typ == typ && p.t == t && p.mask&(1<<wid) == 0 {
		p.mask |= 1 << wid
		p.pcs[wid] = pc
		e.merged++
		return
	}
	e.flushPend()
	d := e.advance(t, e.maxDelta(typ))
	p := &rdnaPending{typ: typ, t: t, delta: d, mask: 1 << wid}
	p.pcs[wid] = pc
	e.pend = p
}

func (e *rdnaEncoder) header(h RDNAHeader) {
	e.raw(rtHeader, h.Word(), 0)
	e.deliver(rdnaToken{typ: rtHeader, t: e.clock, hdr: h})
}

// reg writes a REG token (CS=1: compute register index; CS=0: register
// address such as USERDATA2).
func (e *rdnaEncoder) reg(t int64, me, pipe uint8, cs bool, addr uint16, data uint32) {
	f := uint64(pipe&3)<<7 | uint64(me&3)<<9 | uint64(addr)<<16 | uint64(data)<<32
	if cs {
		f |= 1 << 15
	}
	e.tok(rtReg, t, f, 0, rdnaToken{me: me, pipe: pipe, cs: cs, reg: addr, data: uint64(data)})
}

// regInit writes a REG_INIT token.
func (e *rdnaEncoder) regInit(t int64, me, pipe, typ uint8, data uint32) {
	f := uint64(e.rnd(16))<<10 | uint64(pipe&3)<<14 | uint64(me&3)<<16 | uint64(typ&3)<<18 |
		uint64(data)<<20 | uint64(e.rnd(1024))<<52
	e.tok(rtRegInit, t, f, 0, rdnaToken{me: me, pipe: pipe, flags: uint32(typ), data: uint64(data)})
}

// event writes an EVENT token.
func (e *rdnaEncoder) event(t int64, me, pipe uint8, id uint8, bop bool) {
	f := uint64(pipe&3)<<14 | uint64(me&3)<<16 | uint64(id&0x3F)<<18 | uint64(e.rnd(4))<<12
	if bop {
		f |= 1 << 11
	}
	e.tok(rtEvent, t, f, 0, rdnaToken{me: me, pipe: pipe, code: uint16(id), short: bop})
}

// misc writes a MISC token with flag bits 16..23.
func (e *rdnaEncoder) misc(t int64, flags uint32) {
	e.tok(rtMisc, t, uint64(flags&0xFF0000), 0, rdnaToken{flags: flags & 0xFF0000})
}

// waveStart writes a WAVE_START or WAVE_START_EXT token; on gfx12 an EXT
// token may be followed by extension bytes.
func (e *rdnaEncoder) waveStart(t int64, ext bool, sa, wgp, simd, wid, me, pipe, count uint8, extLDS bool, wgid uint8) {
	typ := rtWaveStart
	if ext {
		typ = rtWaveStartExt
	}
	var f uint64
	tk := rdnaToken{sa: sa, wgp: wgp, simd: simd, wid: wid, me: me, pipe: pipe, count: count}
	if e.gen <= 11 {
		f = uint64(sa&1)<<7 | uint64(simd&3)<<8 | uint64(wgp&7)<<10 | uint64(wid&31)<<13 |
			uint64(e.rnd(8))<<18 | uint64(pipe&3)<<21 | uint64(me&1)<<23 | uint64(e.rnd(2))<<24 |
			uint64(count&0x7F)<<25
		if ext {
			f |= uint64(e.rnd(1<<16)) << 32 // ignored on gfx10/11
		}
	} else {
		f = uint64(sa&1)<<7 | uint64(simd&3)<<8 | uint64(wgp&15)<<10 | uint64(wid&31)<<15 |
			uint64(pipe&3)<<20 | uint64(me&1)<<22 | uint64(count&0x7F)<<25
		if ext {
			var x uint64
			if extLDS {
				x = 1
			}
			f |= (x | uint64(wgid&31)<<1 | uint64(e.rnd(4))<<6) << 32
			tk.isExt, tk.extLDS, tk.wgid = true, extLDS, wgid&31
		}
	}
	e.tok(typ, t, f, 0, tk)
	if ext && e.gen >= 12 {
		for n := e.rnd(3); n > 0; n-- {
			e.bits(uint64(e.rnd(256))|1, 8)
		}
		e.extPending = true
	}
}

func (e *rdnaEncoder) waveEnd(t int64, sa, wgp, simd, wid uint8, pc wire.PC) {
	f := uint64(sa&1)<<8 | uint64(simd&3)<<9 | uint64(wid&31)<<15
	if e.gen <= 11 {
		f |= uint64(wgp&7) << 11
	} else {
		f |= uint64(wgp&15) << 11
	}
	e.tok(rtWaveEnd, t, f, 0, rdnaToken{sa: sa, wgp: wgp, simd: simd, wid: wid, pc: pc})
}

// inst writes an INST token.
func (e *rdnaEncoder) inst(t int64, wid uint8, code uint16, pc wire.PC) {
	var f uint64
	w64 := e.wave64()
	if e.gen >= 12 {
		f = w64<<6 | uint64(wid&31)<<7 | uint64(code&0xFF)<<12
	} else {
		f = w64<<7 | uint64(wid&31)<<8 | uint64(code&0x7F)<<13
	}
	e.tok(rtInst, t, f, 0, rdnaToken{wid: wid, code: code, pc: pc, w64: w64 != 0})
}

func (e *rdnaEncoder) valu(t int64, wid uint8, pc wire.PC) {
	w64 := e.wave64()
	e.tok(rtValu, t, w64<<6|uint64(wid&31)<<7, 0, rdnaToken{wid: wid, pc: pc, w64: w64 != 0})
}

func (e *rdnaEncoder) immOne(t int64, wid uint8, pc wire.PC) {
	e.tok(rtImmOne, t, uint64(wid&31)<<7, 0, rdnaToken{wid: wid, pc: pc})
}

// newPC writes a NEW_PC token for byte address addr.
func (e *rdnaEncoder) newPC(t int64, wid uint8, addr uint64) {
	if e.gen >= 12 {
		v := uint64(wid&31)<<11 | (addr/4)<<16
		hi := (addr / 4) >> 48 & 0x7F
		e.tok(rtNewPC, t, v, hi, rdnaToken{wid: wid, addr: addr &^ 3})
		return
	}
	e.tok(rtNewPC, t, uint64(wid&31)<<11|((addr/4)&(1<<46-1))<<16, 0, rdnaToken{wid: wid, addr: addr &^ 3})
}

// sdata writes a SHADER_DATA(_SHORT) token. exec (gfx10/11 bit 14) marks
// the gfx11 record invalid; priv sets gfx12 sdt.
func (e *rdnaEncoder) sdata(t int64, short bool, sa, wgp, simd, wid uint8, data uint32, exec, priv bool) {
	typ := rtSData
	if short {
		typ = rtSDataShort
		data &= 0xFF
	}
	var f uint64
	tk := rdnaToken{sa: sa, wgp: wgp, simd: simd, wid: wid, data: uint64(data), short: short}
	if e.gen <= 11 {
		f = uint64(sa&1)<<8 | uint64(simd&3)<<9 | uint64(wgp&7)<<11 | uint64(wid&31)<<15 | uint64(data)<<20
		if exec {
			f |= 1 << 14
			tk.flags = 1
		}
	} else {
		f = uint64(sa&1)<<10 | uint64(simd&3)<<11 | uint64(wgp&15)<<13 | uint64(wid&31)<<17 | uint64(data)<<22
		if priv {
			sdt := uint64(1 + e.rnd(3))
			if short {
				f |= sdt << 30
			} else {
				f |= sdt << 54
			}
			tk.priv = true
		}
	}
	e.tok(typ, t, f, 0, tk)
}

// ignored writes a token the parser consumes and ignores (apart from its
// time delta): WAVE_ALLOC, UTIL_COUNTER, EVENT_SYNC, EXEC_POPCOUNT*,
// ALU_EXEC, VMEM_EXEC.
func (e *rdnaEncoder) ignored(t int64, typ int) {
	sp := &e.spec[typ]
	f := e.rnd64() &^ (1<<sp.te - 1)
	var hi uint64
	if sp.length < 64 {
		f &= 1<<sp.length - 1
	} else if sp.length > 64 {
		hi = uint64(e.rnd(256))
	}
	e.tok(typ, t, f, hi, rdnaToken{})
}

// nops writes n NOP nibbles.
func (e *rdnaEncoder) nops(n int) {
	e.flushPend()
	for ; n > 0; n-- {
		e.raw(rtNop, 0, 0)
	}
}

// end pads the buffer with zero bytes (at least 16, then to a whole number
// of 32-byte blocks), flushes it and lets the model finish the buffer.
func (e *rdnaEncoder) end() error {
	e.flushPend()
	if e.extPending {
		e.instBits(0, 31, 20)
		e.extPending = false
	}
	if e.nacc > 0 {
		e.bits(0, 8-e.nacc)
	}
	for i := 0; i < 16 || e.offset()%32 != 0; i++ {
		e.bits(0, 8)
	}
	if e.m != nil {
		e.m.end()
	}
	return e.flush()
}
