package sqttgen

import (
	"strings"

	"github.com/attkit/attkit/internal/wire"
)

// rdnaCode is one entry of the RDNA instruction-code table (spec §2.4): the
// category and cycles an INST token's code maps to, and whether the
// instruction ran on the other SIMD of the WGP (INST_OTHER_SIMD record).
type rdnaCode struct {
	cat    wire.InstCategory
	cycles int
	other  bool
	ok     bool // listed; unlisted codes are NONE
}

// rdCodeTable builds the code table of one generation (10, 11, 12) for the
// header's dprate and derate (spec §2.3.5).
func rdCodeTable(gen, dp, de int) *[256]rdnaCode {
	var t [256]rdnaCode
	set := func(c int, cat wire.InstCategory, cyc int) { t[c] = rdnaCode{cat: cat, cycles: cyc, ok: true} }
	other := func(c int, cat wire.InstCategory, cyc int) {
		t[c] = rdnaCode{cat: cat, cycles: cyc, other: true, ok: true}
	}
	set(0, wire.CatSALU, 1)
	set(1, wire.CatSMEM, 1)
	set(2, wire.CatSMEM, 1)
	set(3, wire.CatJump, 1)
	set(4, wire.CatNext, 1)
	set(5, wire.CatSALU, 1)
	set(6, wire.CatContext, 1)
	set(7, wire.CatSALU, 1)
	set(8, wire.CatContext, 1)
	set(9, wire.CatMessage, 1)
	set(11, wire.CatVALU, 4)
	set(18, wire.CatVALU, 1)
	set(19, wire.CatImmed, 1)
	set(41, wire.CatLDS, 1)
	for i := 0; i < 5; i++ {
		set(42+i, wire.CatLDS, 1+i)
	}
	set(47, wire.CatVMEM, 1)
	set(48, wire.CatVMEM, 2)
	for i := 0; i < 6; i++ {
		set(49+i, wire.CatVMEM, 1+i)
	}
	for i := 0; i < 12; i++ {
		set(55+i, wire.CatVMEM, 1+i)
	}
	for i := 0; i < 4; i++ {
		set(68+i, wire.CatVMEM, 1+i)
	}
	for i := 0; i < 7; i++ {
		set(72+i, wire.CatVMEM, 2+i)
	}
	set(103, wire.CatBVH, 8)
	set(104, wire.CatBVH, 9)
	set(105, wire.CatBVH, 11)
	set(106, wire.CatBVH, 12)
	set(110, wire.CatLDS, 1)
	set(111, wire.CatLDS, 1)
	switch gen {
	case 10:
		set(10, wire.CatVALU, 1)
		set(12, wire.CatVALU, dp)
		set(13, wire.CatVALU, 2*dp)
		set(14, wire.CatVALU, 4*dp)
		set(15, wire.CatVALU, 16*dp)
		set(16, wire.CatVALU, dp)
		set(17, wire.CatVALU, dp)
		set(30, wire.CatFLAT, 1)
		for i := 0; i < 4; i++ {
			set(31+i, wire.CatFLAT, 2+i)
		}
		set(35, wire.CatVMEM, 1)
		for i := 0; i < 5; i++ {
			set(36+i, wire.CatVMEM, 1+i)
		}
		set(112, wire.CatSALU, 1)
		set(113, wire.CatSALU, 1)
		return &t
	case 11:
		set(10, wire.CatVALU, dp)
		set(15, wire.CatVALU, dp)
		set(16, wire.CatVALU, 1)
		set(17, wire.CatVALU, 1)
		set(112, wire.CatSALU, 1)
		set(113, wire.CatSALU, 1)
		set(118, wire.CatLDS, 6)
		for i := 0; i < 12; i++ {
			other(90+i, wire.CatVMEM, 1+i)
		}
	default:
		set(10, wire.CatVALU, 1)
		set(15, wire.CatVALU, 16)
		set(118, wire.CatBVH, 6)
		other(120, wire.CatLDS, 10)
		set(121, wire.CatBVH, 10)
		set(122, wire.CatMessage, 1)
		set(135, wire.CatSALU, 1)
		set(136, wire.CatSALU, 1)
		set(137, wire.CatSALU, 1)
		set(138, wire.CatMessage, 1)
		set(140, wire.CatVALU, 8)
		set(141, wire.CatVALU, 16)
		set(142, wire.CatVALU, 32)
		set(143, wire.CatVALU, 64)
		set(146, wire.CatVALU, dp)
		set(147, wire.CatVALU, dp*de)
		set(150, wire.CatSMEM, 1)
		set(151, wire.CatSMEM, 1)
		set(152, wire.CatSALU, 3)
		set(153, wire.CatVALU, 1)
		set(155, wire.CatSALU, 2)
		set(156, wire.CatSALU, 5)
		for c := 188; c <= 221; c++ {
			other(c, wire.CatVMEM, c-187)
		}
		for c := 222; c < 256; c++ {
			set(c, wire.CatVMEM, c-221)
		}
	}
	// gfx11 and gfx12
	set(12, wire.CatVALU, 1)
	set(13, wire.CatVALU, 2)
	set(14, wire.CatVALU, 4)
	for i := 0; i < 5; i++ {
		set(28+i, wire.CatFLAT, 2+i)
	}
	set(33, wire.CatVMEM, 1)
	set(34, wire.CatVMEM, 2)
	for i := 0; i < 6; i++ {
		set(35+i, wire.CatVMEM, 1+i)
	}
	for i := 0; i < 5; i++ {
		other(80+i, wire.CatLDS, 1+i)
		other(85+i, wire.CatFLAT, 2+i)
	}
	set(114, wire.CatSALU, 1)
	set(115, wire.CatVALU, 1)
	set(116, wire.CatVALU, 2)
	other(119, wire.CatLDS, 6)
	return &t
}

// rdnaCodes lists, per generation, the codes the generator writes for each
// kind of instruction. Codes 5 (jump), 6 (trap), 8 (halt), 117 and the
// codes that are NONE on a generation are not in these lists.
type rdnaCodes struct {
	salu, smem, valu, vmem, flat, lds, bvh, other []uint16
}

func rdCodeLists(gen int) rdnaCodes {
	var c rdnaCodes
	rng := func(lo, hi int) []uint16 {
		var s []uint16
		for i := lo; i <= hi; i++ {
			s = append(s, uint16(i))
		}
		return s
	}
	cat := func(ss ...[]uint16) []uint16 {
		var s []uint16
		for _, x := range ss {
			s = append(s, x...)
		}
		return s
	}
	vmemCommon := cat(rng(47, 54), rng(55, 66), rng(68, 78))
	c.smem = []uint16{1, 2}
	c.lds = cat(rng(41, 46), []uint16{110, 111})
	c.bvh = rng(103, 106)
	switch gen {
	case 10:
		c.salu = []uint16{0, 7, 112, 113}
		c.valu = rng(10, 18)
		c.flat = rng(30, 34)
		c.vmem = cat(rng(35, 40), vmemCommon)
	case 11:
		c.salu = []uint16{0, 7, 112, 113, 114}
		c.valu = cat(rng(10, 18), []uint16{115, 116})
		c.flat = rng(28, 32)
		c.vmem = cat(rng(33, 40), vmemCommon)
		c.lds = append(c.lds, 118)
		c.other = cat(rng(80, 101), []uint16{119})
	default:
		c.salu = []uint16{0, 7, 114, 135, 136, 137, 152, 155, 156}
		c.smem = []uint16{1, 2, 150, 151}
		c.valu = cat(rng(10, 15), []uint16{18, 115, 116, 140, 141, 142, 143, 146, 147, 153})
		c.flat = rng(28, 32)
		c.vmem = cat(rng(33, 40), vmemCommon, rng(222, 255))
		c.bvh = cat(c.bvh, []uint16{118, 121})
		c.other = cat(rng(80, 89), []uint16{119, 120}, rng(188, 221))
	}
	return c
}

// Extra stitcher category of gfx12 (spec §3.2).
const clsVMovB64 lineClass = 20

// rdClassify is the stitcher's category of an instruction text on RDNA
// (spec §3.2): the gfx9 post-rules do not apply (s_barrier stays IMMED,
// v_mfma_scale_ is plain VALU); gfx12 adds V_MOV_B64 and ds_bvh as BVH
// (the 0.1.6 library, compat, has neither).
func rdClassify(text string, gen int, compat bool) lineClass {
	c := classify(text)
	switch c {
	case clsGFX9Barrier:
		c = clsImmed
	case clsMFMAScale:
		c = clsVALU
	}
	if gen >= 12 {
		switch {
		case c == clsVALU && strings.HasPrefix(text, "v_mov_b64") && !compat:
			c = clsVMovB64
		case c == clsLDS && strings.HasPrefix(text, "ds_bvh") && !compat:
			c = clsBVH
		}
	}
	return c
}
