package sqtt

import (
	"encoding/binary"
	"fmt"
)

// rdnaHeaderPrefix is the prefix code of the RDNA HEADER token
// (sqtt-format.md 2.3.2): 7 bits, 0b0010001. The gfx9 software header
// imitates it in its legacy field (1.2).
const rdnaHeaderPrefix = 0b0010001

// Detect reads the architecture from the first 8 bytes of a trace
// (sqtt-format.md 1.2). It fails with an *ArchError when the header is not
// a trace header; an Arch it returns may still be unsupported.
//
// The rule is stricter than the library's on purpose: an RDNA trace must
// begin with a whole HEADER token (its 7-bit prefix, not just a non-zero
// legacy field), so that about 1 in 1500 random buffers passes instead of
// 1 in 13 (header_test.go counts them), and no text file does.
func Detect(head []byte) (Arch, error) {
	if len(head) < 8 {
		return Arch{}, &ArchError{Msg: fmt.Sprintf(
			"not a thread trace: %d bytes, shorter than the 8-byte header", len(head))}
	}
	h := binary.LittleEndian.Uint64(head)
	legacy := h & 0x1FFF
	v2 := int(h>>13) & 7
	if (legacy == 0 || legacy == 0x11) && v2 >= 4 && v2 <= 6 {
		// The version is the header format's, not the GPU's: real MI350
		// traces carry 4 (sqtt-format.md 1.2), so name no generation.
		return Arch{GFXIP: 9, Name: fmt.Sprintf("gfx9, header version %d", v2), Version2: v2}, nil
	}
	unknown := &ArchError{Header: h, Msg: fmt.Sprintf(
		"not a thread trace of a known architecture (header 0x%016x); "+
			"if it is one, try --backend rocm", h)}
	if h&0x7F != rdnaHeaderPrefix {
		return Arch{}, unknown
	}
	var a Arch
	switch ver := int(h>>7) & 0x3F; ver {
	case 1, 2:
		a = Arch{GFXIP: 10, Name: "gfx10 (RDNA2)", Version2: ver}
	case 3:
		a = Arch{GFXIP: 11, Name: "gfx11 (RDNA3)", Version2: ver}
	case 4:
		a = Arch{GFXIP: 12, Name: "gfx12 (RDNA4)", Version2: ver}
	case 5:
		a = Arch{GFXIP: 12, Name: "MI400 (gfx12.5)", Version2: ver}
	default:
		return Arch{}, unknown
	}
	return a, nil
}

func unsupported(a Arch, h uint64) error {
	return &ArchError{Arch: a, Header: h, Msg: fmt.Sprintf(
		"%s thread trace: the native decoder handles gfx9 (MI200, MI300, MI350) and "+
			"gfx10, gfx11, gfx12 (RDNA2-4) only; "+
			"decode it with --backend rocm", a.Name)}
}
