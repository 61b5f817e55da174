package sqtt

import "encoding/binary"

// tb writes gfx9 tokens by hand, field by field as sqtt-format.md 2.2
// lays them out. Every token it writes carries a zero time delta; at(t)
// moves the clock with MISC TIME tokens, so the next token has time t.
type tb struct {
	b     []byte
	clock int64
}

// newTB starts a trace with the gfx9 software header (2.2.1).
func newTB(version2, targetCU int, doubleBuffer bool) *tb {
	h := uint64(0x11) | uint64(version2)<<13 | 0xF<<16 | uint64(targetCU)<<20
	if doubleBuffer {
		h |= 1 << 32
	}
	t := &tb{}
	t.b = binary.LittleEndian.AppendUint64(t.b, h)
	return t
}

func (t *tb) put(v uint64, n int) *tb {
	for i := 0; i < n; i++ {
		t.b = append(t.b, byte(v>>(8*i)))
	}
	return t
}

// at advances the clock to time c (a multiple of 4, not in the past).
func (t *tb) at(c int64) *tb {
	if c < t.clock || c%4 != 0 {
		panic("tb.at: bad time")
	}
	for t.clock < c {
		d := min((c-t.clock)/4, 255)
		t.misc(int(d), miscTime)
		t.clock += 4 * d
	}
	return t
}

func (t *tb) misc(delta8, typ int) *tb {
	return t.put(uint64(delta8)<<4|uint64(typ)<<13, 2)
}

// timeTok writes a TIME token with an absolute time.
func (t *tb) timeTok(abs uint64) *tb { return t.put(tTime|abs<<16, 8) }

// meRaw encodes an ME number as REG and REG_CS carry it.
func meRaw(me int) uint64 { return uint64(1-me) & 1 }

func (t *tb) reg(me, pipe int, addr, data uint32) *tb {
	return t.put(tReg|uint64(pipe)<<5|meRaw(me)<<7|1<<15|uint64(addr)<<16|uint64(data)<<32, 8)
}

func (t *tb) regCS(me, pipe int, reg, data uint32) *tb {
	return t.put(tRegCS|uint64(pipe)<<5|meRaw(me)<<7|uint64(reg)<<9|uint64(data)<<16, 6)
}

func group(sh, cu, wave, simd int) uint64 {
	return uint64(sh)<<5 | uint64(cu)<<6 | uint64(wave)<<10 | uint64(simd)<<14
}

func (t *tb) waveStart(cu, simd, wave, me, pipe, count, tg int) *tb {
	return t.put(tWaveStart|group(0, cu, wave, simd)|uint64(pipe)<<16|uint64(me)<<18|
		uint64(count)<<22|uint64(tg)<<29, 4)
}

func (t *tb) waveEnd(cu, simd, wave int) *tb { return t.put(tWaveEnd|group(0, cu, wave, simd), 2) }

func (t *tb) inst(simd, wave, typ int) *tb {
	return t.put(tInst|uint64(wave)<<5|uint64(simd)<<9|uint64(typ)<<11, 2)
}

func (t *tb) instPC(simd, wave int, byteAddr uint64) *tb {
	return t.put(tInstPC|uint64(wave)<<5|uint64(simd)<<9|(byteAddr/4)<<16, 8)
}

func (t *tb) shaderData(cu, simd, wave int, data uint32) *tb {
	return t.put(tShaderData|group(0, cu, wave, simd)|uint64(data)<<16, 6)
}

// Issue statuses.
const (
	isStall = 1
	isInst  = 2
	isImmed = 3
)

// issue writes an ISSUE token; st maps wave slots to statuses.
func (t *tb) issue(simd int, st map[int]int) *tb {
	v := uint64(tIssue) | uint64(simd)<<5
	for slot, s := range st {
		v |= uint64(s) << (8 + 2*slot)
	}
	return t.put(v, 4)
}

// issue1 writes an ISSUE token for slot 0 of SIMD 0.
func (t *tb) issue1(s int) *tb { return t.issue(0, map[int]int{0: s}) }

func (t *tb) perf(cu, bank int, c [4]uint64) *tb {
	return t.put(tPerf|uint64(cu)<<6|uint64(bank)<<10|c[0]<<12|c[1]<<25|c[2]<<38|c[3]<<51, 8)
}

// Instrumentation (2.1.2) on USERDATA2, from ME 1 pipe 0.
func (t *tb) roc() *tb { return t.reg(1, 0, regUserData2, rocMagic) }

func (t *tb) ud2(op, typ int, d20 uint32) *tb {
	return t.reg(1, 0, regUserData2, uint32(op)|uint32(typ)<<8|d20<<12)
}

// codeObject announces a load (or unload) through CODEOBJ packets.
func (t *tb) codeObject(addr, size uint64, legacyID uint32, fromStart, unload bool) *tb {
	t.ud2(opCodeObj, coAddrLo, 0).reg(1, 0, regUserData2, uint32(addr))
	t.ud2(opCodeObj, coAddrHi, 0).reg(1, 0, regUserData2, uint32(addr>>32))
	t.ud2(opCodeObj, coSizeLo, 0).reg(1, 0, regUserData2, uint32(size))
	tail := legacyID << 2
	if unload {
		tail |= 1
	}
	if fromStart {
		tail |= 2
	}
	return t.ud2(opCodeObj, coTail, 0).reg(1, 0, regUserData2, tail)
}

// pgm latches the wave start address for (me, pipe).
func (t *tb) pgm(me, pipe int, addr uint64) *tb {
	return t.regCS(me, pipe, regPgmLo, uint32(addr>>8)).regCS(me, pipe, regPgmHi, uint32(addr>>40))
}

func (t *tb) bytes() []byte { return t.b }
