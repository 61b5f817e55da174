package sqtt

// rb writes RDNA token streams by hand, field by field as sqtt-format.md
// 2.3 lays them out (written from the spec's tables, independently of the
// decoder's). Tokens are nibble-aligned and form one little-endian bit
// stream. Every token carries the pending time delta set by at(); at()
// uses TIME tokens for the bulk of a gap.
type rb struct {
	gen     int // 10, 11, 12
	b       []byte
	nbits   int
	clock   int64
	pending int64 // delta for the next token's time field
}

func newRB(gen int) *rb { return &rb{gen: gen} }

// bits appends the n low bits of v to the stream.
func (r *rb) bits(v uint64, n int) *rb {
	for i := 0; i < n; i++ {
		if r.nbits%8 == 0 {
			r.b = append(r.b, 0)
		}
		if v>>i&1 != 0 {
			r.b[len(r.b)-1] |= 1 << (r.nbits % 8)
		}
		r.nbits++
	}
	return r
}

// tok writes a token: pattern (value of the prefix bits), total length,
// time field bits lo..hi (hi < lo: none) and the other fields already
// shifted into place. The pending delta goes into the time field as far
// as it fits, TIME tokens (delta nibble + 4) carry the rest before it.
func (r *rb) tok(pattern uint64, n int, lo, hi int, fields uint64) *rb {
	v := pattern | fields
	max := int64(0)
	if hi >= lo {
		max = 1<<(hi-lo+1) - 1
	}
	for r.pending > max {
		k := min(r.pending-4, 15)
		if rem := r.pending - k - 4; rem > max && rem < 4 {
			k -= 4 - rem // leave a remainder another TIME token can carry
		}
		if k < 0 {
			panic("rb: delta does not fit")
		}
		r.bits(0b1000|uint64(k)<<4, 8)
		r.clock += k + 4
		r.pending -= k + 4
	}
	if hi >= lo {
		v |= uint64(r.pending) << lo
		r.clock += r.pending
		r.pending = 0
	}
	if n > 64 {
		return r.bits(v, 64).bits(0, n-64)
	}
	return r.bits(v, n)
}

// at makes t the time of the next token.
func (r *rb) at(t int64) *rb {
	if t < r.clock+r.pending {
		panic("rb.at: time goes back")
	}
	r.pending = t - r.clock
	return r
}

func (r *rb) nop() *rb { return r.bits(0, 4) }

// pad ends the stream with zero bytes (gfx12 readers stop 64 bits before
// the end).
func (r *rb) pad() []byte {
	if r.nbits%8 != 0 {
		r.bits(0, 4)
	}
	return append(r.b, make([]byte, 16)...)
}

// header writes a HEADER token: version, target SIMD / WGP / SA, the
// DPRate and dp_derate fields and extra bits (e.g. 1<<59).
func (r *rb) header(version, simd, wgp, sa int, dprate, derate uint64, extra uint64) *rb {
	return r.tok(0b0010001, 64, 0, -1, uint64(version)<<7|uint64(simd)<<13|uint64(wgp)<<15|
		uint64(sa)<<19|dprate<<28|derate<<33|extra)
}

func (r *rb) reg(cs bool, me, pipe int, addr, data uint32) *rb {
	f := uint64(pipe)<<7 | uint64(me)<<9 | uint64(addr)<<16 | uint64(data)<<32
	if cs {
		f |= 1 << 15
	}
	return r.tok(0b1001, 64, 4, 6, f)
}

// pgm latches the wave start address for (me, pipe).
func (r *rb) pgm(me, pipe int, addr uint64) *rb {
	return r.reg(true, me, pipe, regPgmLo, uint32(addr>>8)).reg(true, me, pipe, regPgmHi, uint32(addr>>40))
}

func (r *rb) ud2(data uint32) *rb { return r.reg(false, 0, 0, regUserData2, data) }

// codeObject announces a code-object load through USERDATA2 (2.1.2).
func (r *rb) codeObject(addr, size uint64, legacyID uint32, fromStart bool) *rb {
	r.ud2(opCodeObj | coAddrLo<<8).ud2(uint32(addr)).ud2(opCodeObj | coAddrHi<<8).ud2(uint32(addr >> 32))
	r.ud2(opCodeObj | coSizeLo<<8).ud2(uint32(size))
	tail := legacyID << 2
	if fromStart {
		tail |= 2
	}
	return r.ud2(opCodeObj | coTail<<8).ud2(tail)
}

func (r *rb) regInit(me, pipe, typ int, data uint32) *rb {
	return r.tok(0b1110001, 64, 7, 9, uint64(pipe)<<14|uint64(me)<<16|uint64(typ)<<18|uint64(data)<<20)
}

// waveStart writes WAVE_START with the gfx10/11 or gfx12 layout.
func (r *rb) waveStart(sa, simd, wgp, wid, me, pipe, count int) *rb {
	var f uint64
	if r.gen <= 11 {
		f = uint64(sa)<<7 | uint64(simd)<<8 | uint64(wgp)<<10 | uint64(wid)<<13 | uint64(pipe)<<21 |
			uint64(me)<<23 | uint64(count)<<25
	} else {
		f = uint64(sa)<<7 | uint64(simd)<<8 | uint64(wgp)<<10 | uint64(wid)<<15 | uint64(pipe)<<20 |
			uint64(me)<<22 | uint64(count)<<25
	}
	return r.tok(0b01100, 32, 5, 6, f)
}

// waveStartExt writes a gfx12 WAVE_START_EXT with a workgroup id and one
// extension byte whose first bit is clear.
func (r *rb) waveStartExt(sa, simd, wgp, wid, me, pipe, count, wg int) *rb {
	f := uint64(sa)<<7 | uint64(simd)<<8 | uint64(wgp)<<10 | uint64(wid)<<15 | uint64(pipe)<<20 |
		uint64(me)<<22 | uint64(count)<<25 | uint64(wg)<<33
	return r.tok(0b11100, 40, 5, 6, f)
}

func (r *rb) waveEnd(sa, simd, wgp, wid int) *rb {
	return r.tok(0b10101, 20, 5, 7, uint64(sa)<<8|uint64(simd)<<9|uint64(wgp)<<11|uint64(wid)<<15)
}

func (r *rb) inst(wid, code int) *rb {
	if r.gen <= 11 {
		return r.tok(0b010, 20, 4, 6, uint64(wid)<<8|uint64(code)<<13)
	}
	return r.tok(0b010, 20, 3, 5, uint64(wid)<<7|uint64(code)<<12)
}

func (r *rb) valu(wid int) *rb { return r.tok(0b011, 12, 3, 5, uint64(wid)<<7) }

func (r *rb) immOne(wid int) *rb { return r.tok(0b1101, 12, 4, 6, uint64(wid)<<7) }

func (r *rb) immediate(mask uint16) *rb { return r.tok(0b00100, 24, 5, 7, uint64(mask)<<8) }

func (r *rb) ready(mask uint16) *rb { return r.tok(0b10100, 24, 5, 7, uint64(mask)<<8) }

// newPC writes NEW_PC for a byte address.
func (r *rb) newPC(wid int, addr uint64) *rb {
	if r.gen <= 11 {
		return r.tok(0b0100001, 64, 8, 10, uint64(wid)<<11|(addr/4)<<16)
	}
	// 72 bits: the pc field runs over the 64-bit boundary.
	pc := addr / 4
	r.tok(0b0100001, 64, 8, 10, uint64(wid)<<11|pc<<16)
	return r.bits(pc>>48, 8)
}

func (r *rb) misc(flags uint8) *rb { return r.tok(0b1010001, 24, 7, 15, uint64(flags)<<16) }

func (r *rb) event(id, me, pipe int, bop bool) *rb {
	f := uint64(pipe)<<14 | uint64(me)<<16 | uint64(id)<<18
	if bop {
		f |= 1 << 11
	}
	return r.tok(0b01100001, 24, 8, 10, f)
}

// shaderData writes SHADER_DATA (short: SHADER_DATA_SHORT) for a wave.
func (r *rb) shaderData(short bool, sa, simd, wgp, wid int, data uint32, sdt int) *rb {
	if r.gen <= 11 {
		f := uint64(sa)<<8 | uint64(simd)<<9 | uint64(wgp)<<11 | uint64(wid)<<15 | uint64(data)<<20
		if short {
			return r.tok(0b10110, 28, 5, 7, f&(1<<28-1))
		}
		return r.tok(0b00110, 52, 5, 7, f)
	}
	f := uint64(sa)<<10 | uint64(simd)<<11 | uint64(wgp)<<13 | uint64(wid)<<17
	if short {
		return r.tok(0b1000110, 32, 7, 9, f|uint64(data&0xFF)<<22|uint64(sdt)<<30)
	}
	return r.tok(0b0000110, 56, 7, 9, f|uint64(data)<<22|uint64(sdt)<<54)
}

// timestamp writes a gfx11/gfx12 TIMESTAMP (rt: realtime sample, pl:
// packet lost).
func (r *rb) timestamp(value uint64, rt, pl bool) *rb {
	var f uint64
	b := func(c bool) uint64 {
		if c {
			return 1
		}
		return 0
	}
	n := 64
	if r.gen == 11 {
		f, n = b(pl)<<8|b(rt)<<9|(value&(1<<36-1))<<12, 48
	} else {
		f = b(rt)<<7 | b(pl)<<8 | value<<12
	}
	if !rt {
		r.clock += int64(value)
	}
	return r.tok(0b0000001, n, 0, -1, f)
}

// vmemExec writes a VMEM_EXEC token (8 bits, no record; 2.3.2).
func (r *rb) vmemExec() *rb { return r.tok(0b1111, 8, 4, 5, 0) }

// lastOut stores in p where the next token starts: endTail(p) makes it the
// last token before the reader's tail.
func (r *rb) lastOut(p *int) *rb {
	*p = r.nbits
	return r
}

// endTail ends the stream without zero padding so that the reader's tail
// (A.4 item 7.13: the tokens whose previous token starts 128 bits or less
// before the end) begins with the token after the one starting at bit
// prev: NOPs up to the last byte boundary at most 128 bits after prev. The
// token before the one at prev must be longer than a NOP (else the tail
// begins earlier).
func (r *rb) endTail(prev int) []byte {
	end := (prev + 128) &^ 7
	if r.nbits > end {
		panic("rb.endTail: the stream is longer already")
	}
	for r.nbits < end {
		r.nop()
	}
	return r.b
}

func (r *rb) bytes() []byte { return r.b }
