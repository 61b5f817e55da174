package sqtt

import "github.com/attkit/attkit/internal/wire"

// RDNA token types (2.3.2).
const (
	rUnknown = iota
	rNop
	rTime
	rTimestamp
	rHeader
	rInst
	rValuInst
	rImmOne
	rImmediate
	rWaveReady
	rNewPC
	rWaveStart
	rWaveStartExt
	rWaveAlloc
	rWaveEnd
	rShaderData
	rShaderDataShort
	rUtilCounter
	rMisc
	rEvent
	rEventSync
	rReg
	rRegInit
	rExecPopcount1
	rExecPopcount3
	rAluExec
	rVmemExec
)

// rdnaEntry is one slot of a generation's 256-entry token table: the
// token type, its length in bits and its time-delta field (start bit and
// width; width 0: no delta).
type rdnaEntry struct {
	typ    uint8
	bits   uint8
	tb, tw uint8
}

// rdnaEnc is one row of the encoding tables of 2.3.2: the prefix pattern
// (written as a binary number whose least significant bit is the first
// stream bit), its length, the token length and the time field bits lo..hi
// (hi < lo: none).
type rdnaEnc struct {
	typ     uint8
	pattern string
	bits    uint8
	lo, hi  int8
}

func enc(typ uint8, pattern string, bits uint8, lo, hi int8) rdnaEnc {
	return rdnaEnc{typ: typ, pattern: pattern, bits: bits, lo: lo, hi: hi}
}

var gfx10Encodings = []rdnaEnc{
	enc(rInst, "010", 20, 4, 6),
	enc(rValuInst, "011", 12, 3, 5),
	enc(rImmOne, "1101", 12, 4, 6),
	enc(rImmediate, "00100", 24, 5, 7),
	enc(rWaveReady, "10100", 24, 5, 7),
	enc(rNewPC, "0100001", 64, 8, 10),
	enc(rWaveStart, "01100", 32, 5, 6),
	enc(rWaveStartExt, "11100", 48, 5, 6),
	enc(rWaveAlloc, "00101", 20, 5, 7),
	enc(rWaveEnd, "10101", 20, 5, 7),
	enc(rShaderData, "00110", 52, 5, 7),
	enc(rShaderDataShort, "10110", 28, 5, 7),
	enc(rUtilCounter, "0110001", 64, 7, 8),
	enc(rTime, "1000", 8, 4, 7),
	enc(rNop, "0000", 4, 0, -1),
	enc(rMisc, "1010001", 24, 7, 15),
	enc(rEvent, "01100001", 24, 8, 10),
	enc(rEventSync, "11100001", 32, 8, 10),
	enc(rReg, "1001", 64, 4, 6),
	enc(rRegInit, "1110001", 64, 7, 9),
	enc(rTimestamp, "0000001", 64, 0, -1),
	enc(rHeader, "0010001", 64, 0, -1),
	enc(rAluExec, "1110", 8, 4, 5),
	enc(rVmemExec, "1111", 8, 4, 5),
}

var gfx11Encodings = []rdnaEnc{
	enc(rUtilCounter, "0110001", 48, 7, 8),
	enc(rTimestamp, "0000001", 48, 0, -1),
}

var gfx12Encodings = []rdnaEnc{
	enc(rInst, "010", 20, 3, 5),
	enc(rShaderData, "0000110", 56, 7, 9),
	enc(rShaderDataShort, "1000110", 32, 7, 9),
	enc(rExecPopcount1, "1100110", 24, 7, 9),
	enc(rExecPopcount3, "010110", 48, 6, 8),
	enc(rNewPC, "0100001", 72, 8, 10),
	enc(rWaveStartExt, "11100", 40, 5, 6),
	enc(rWaveAlloc, "00101", 24, 5, 7),
	enc(rTimestamp, "0000001", 64, 0, -1),
}

// buildRDNATable fills a 256-entry table from encoding lists applied in
// order: a pattern of n bits fills every index whose low n bits equal it,
// later rows overwriting earlier ones (2.3.1). Uncovered slots are UNKNOWN
// tokens of 4 bits without a time field.
func buildRDNATable(lists ...[]rdnaEnc) *[256]rdnaEntry {
	var t [256]rdnaEntry
	for i := range t {
		t[i] = rdnaEntry{typ: rUnknown, bits: 4}
	}
	for _, list := range lists {
		for _, e := range list {
			var p int
			for _, c := range e.pattern {
				p = p<<1 | int(c-'0')
			}
			n := len(e.pattern)
			ent := rdnaEntry{typ: e.typ, bits: e.bits}
			if e.hi >= e.lo {
				ent.tb, ent.tw = uint8(e.lo), uint8(e.hi-e.lo+1)
			}
			for i := range t {
				if i&(1<<n-1) == p {
					t[i] = ent
				}
			}
		}
	}
	return &t
}

// encodings016 are the framing rows of AMD's 0.1.6 that 2.3.2 lacks: the
// one prefix nibble no token starts with, 0111, begins an 8-bit token
// without a time field or a record (A.4 item 7.14).
var encodings016 = []rdnaEnc{
	enc(rUnknown, "0111", 8, 0, -1),
}

var (
	gfx10Table = buildRDNATable(gfx10Encodings)
	gfx11Table = buildRDNATable(gfx10Encodings, gfx11Encodings)
	gfx12Table = buildRDNATable(gfx10Encodings, gfx11Encodings, gfx12Encodings)

	gfx10Table016 = buildRDNATable(gfx10Encodings, encodings016)
	gfx11Table016 = buildRDNATable(gfx10Encodings, gfx11Encodings, encodings016)
	gfx12Table016 = buildRDNATable(gfx10Encodings, gfx11Encodings, gfx12Encodings, encodings016)
)

// rdnaInst is what an INST token's instruction code means (2.4): the
// category and cycles, whether the cycles scale with the dp rate or the
// derate, and whether the instruction ran on the other SIMD of the WGP.
type rdnaInst struct {
	cat    wire.InstCategory
	cycles uint16
	dp, de bool
	other  bool
}

type instTable [256]rdnaInst

// fill sets codes first, first+1, ... to m with the given cycles.
func (t *instTable) fill(m rdnaInst, first int, cycles ...uint16) {
	for i, c := range cycles {
		m.cycles = c
		t[first+i] = m
	}
}

func (t *instTable) set(cat wire.InstCategory, first int, cycles ...uint16) {
	t.fill(rdnaInst{cat: cat}, first, cycles...)
}

func (t *instTable) setDP(cat wire.InstCategory, first int, cycles ...uint16) {
	t.fill(rdnaInst{cat: cat, dp: true}, first, cycles...)
}

func (t *instTable) setOther(cat wire.InstCategory, first int, cycles ...uint16) {
	t.fill(rdnaInst{cat: cat, other: true}, first, cycles...)
}

// ramp returns from, from+1, ..., to.
func ramp(from, to uint16) []uint16 {
	var r []uint16
	for c := from; c <= to; c++ {
		r = append(r, c)
	}
	return r
}

// Instruction codes with a special meaning (2.3.6).
const (
	codeJump      = 5   // s_setpc and friends: the next PC arrives in NEW_PC
	codeTrap      = 6   // trap entry
	codeReturnExc = 117 // return from exception
)

// commonInsts fills the codes all RDNA generations share.
func commonInsts(t *instTable) {
	t.set(wire.CatSALU, 0, 1)
	t.set(wire.CatSMEM, 1, 1, 1)
	t.set(wire.CatJump, 3, 1)
	t.set(wire.CatNext, 4, 1)
	t.set(wire.CatSALU, 5, 1)
	t.set(wire.CatContext, 6, 1)
	t.set(wire.CatSALU, 7, 1)
	t.set(wire.CatContext, 8, 1)
	t.set(wire.CatMessage, 9, 1)
	t.set(wire.CatVALU, 11, 4)
	t.set(wire.CatVALU, 18, 1)
	t.set(wire.CatImmed, 19, 1)
	t.set(wire.CatLDS, 41, 1)
	t.set(wire.CatLDS, 42, ramp(1, 5)...)
	t.set(wire.CatVMEM, 47, 1, 2)
	t.set(wire.CatVMEM, 49, ramp(1, 6)...)
	t.set(wire.CatVMEM, 55, ramp(1, 12)...)
	t.set(wire.CatVMEM, 68, ramp(1, 4)...)
	t.set(wire.CatVMEM, 72, ramp(2, 8)...)
	t.set(wire.CatBVH, 103, 8, 9, 11, 12)
	t.set(wire.CatLDS, 110, 1, 1)
}

var gfx10Insts = func() *instTable {
	var t instTable
	commonInsts(&t)
	t.set(wire.CatVALU, 10, 1)
	t.setDP(wire.CatVALU, 12, 1, 2, 4, 16, 1, 1) // 12..17
	t.set(wire.CatFLAT, 30, ramp(1, 5)...)       // 30..34
	t.set(wire.CatVMEM, 35, 1)
	t.set(wire.CatVMEM, 36, ramp(1, 5)...)
	t.set(wire.CatSALU, 112, 1, 1)
	return &t
}()

// gfx11and12Insts fills the codes gfx11 and gfx12 share.
func gfx11and12Insts(t *instTable) {
	commonInsts(t)
	t.set(wire.CatVALU, 12, 1, 2, 4)
	t.set(wire.CatFLAT, 28, ramp(2, 6)...)
	t.set(wire.CatVMEM, 33, 1, 2)
	t.set(wire.CatVMEM, 35, ramp(1, 6)...)
	t.setOther(wire.CatLDS, 80, ramp(1, 5)...)
	t.setOther(wire.CatFLAT, 85, ramp(2, 6)...)
	t.set(wire.CatSALU, 114, 1)
	t.set(wire.CatVALU, 115, 1, 2)
	t.setOther(wire.CatLDS, 119, 6)
}

var gfx11Insts = func() *instTable {
	var t instTable
	gfx11and12Insts(&t)
	t.setDP(wire.CatVALU, 10, 1)
	t.setDP(wire.CatVALU, 15, 1)
	t.set(wire.CatVALU, 16, 1, 1)
	t.setOther(wire.CatVMEM, 90, ramp(1, 12)...)
	t.set(wire.CatSALU, 112, 1, 1)
	t.set(wire.CatLDS, 118, 6)
	return &t
}()

var gfx12Insts = func() *instTable {
	var t instTable
	gfx11and12Insts(&t)
	t.set(wire.CatVALU, 10, 1)
	t.set(wire.CatVALU, 15, 16)
	t.set(wire.CatBVH, 118, 6)
	t.setOther(wire.CatLDS, 120, 10)
	t.set(wire.CatBVH, 121, 10)
	t.set(wire.CatMessage, 122, 1)
	t.set(wire.CatSALU, 135, 1, 1, 1)
	t.set(wire.CatMessage, 138, 1)
	t.set(wire.CatVALU, 140, 8, 16, 32, 64)
	t.setDP(wire.CatVALU, 146, 1)
	t[147] = rdnaInst{cat: wire.CatVALU, cycles: 1, dp: true, de: true}
	t.set(wire.CatSMEM, 150, 1, 1)
	t.set(wire.CatSALU, 152, 3)
	t.set(wire.CatVALU, 153, 1)
	t.set(wire.CatSALU, 155, 2, 5)
	t.setOther(wire.CatVMEM, 188, ramp(1, 34)...)
	t.set(wire.CatVMEM, 222, ramp(1, 34)...)
	return &t
}()

// The tables of AMD's 0.1.6 library where they differ from 2.4 (observed
// with that library on generated traces, A.4 W2, and for every code of each
// generation by TestLibrary016's rdna-code-* cases): gfx11 codes 10 and 15
// are VALU 1 and 16 without dp-rate scaling, gfx11 code 102 is other-SIMD
// VMEM of 13 cycles, and the gfx12 other-SIMD codes 85..89 are LDS rather
// than FLAT.
var (
	gfx11Insts016 = func() *instTable {
		t := *gfx11Insts
		t[10].cycles, t[10].dp = 1, false
		t[15].cycles, t[15].dp = 16, false
		t[102] = rdnaInst{cat: wire.CatVMEM, cycles: 13, other: true}
		return &t
	}()
	gfx12Insts016 = func() *instTable {
		t := *gfx12Insts
		for c := 85; c <= 89; c++ {
			t[c].cat = wire.CatLDS
		}
		return &t
	}()
)
