package sqtt

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/attkit/attkit/internal/testutil"
)

// rdnaFuzzISA is the ISA the RDNA fuzz target answers from: the appendix
// programs plus a barrier wait, a branch and a jump target.
func rdnaFuzzISA() *table {
	isa := newTable(0, b4Rows...)
	for pc, e := range newTable(0, loopISA...).m {
		isa.m[pc] = e
	}
	for pc, e := range newTable(5, "0x0 4 s_barrier_signal -1", "0x4 4 s_barrier_wait 0xffff",
		"0x8 4 v_add_f32_e32 v1, v0, v0", "0xc 4 s_cbranch_scc0 65533", "0x10 4 s_endpgm").m {
		isa.m[pc] = e
	}
	return isa
}

// FuzzDecodeRDNA feeds arbitrary token streams to the RDNA decoder: gen
// picks the generation (gfx10, gfx11, gfx12) written into the HEADER's
// version field; the rest of data, including the other header bits, is
// the fuzzer's. Decoding, in the default mode and under Compat Lib016, must
// never panic or hang and may only fail with the documented errors.
func FuzzDecodeRDNA(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "rdna", "*.att"))
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(seedGen(data), data)
		}
	}
	for _, s := range rdnaSeedTraces() {
		f.Add(seedGen(s), s)
	}
	f.Add(uint8(0), []byte{})
	f.Add(uint8(1), []byte{0x91, 0x01})
	f.Fuzz(func(t *testing.T, gen uint8, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		if len(data) < 8 {
			data = append(data, make([]byte, 8-len(data))...)
		}
		// A HEADER token with version 1..4 at the start; the other header
		// bits stay the fuzzer's.
		if v := int(binary.LittleEndian.Uint16(data) >> 7 & 0x3F); data[0]&0x7F != 0x11 || v != int(gen%4)+1 {
			data = append([]byte(nil), data...)
			h := binary.LittleEndian.Uint16(data)&^0x1FFF | 0x11 | uint16(gen%4+1)<<7
			binary.LittleEndian.PutUint16(data, h)
		}
		fuzzDecode(t, New(), data, rdnaFuzzISA())
		fuzzDecode(t, &Decoder{Compat: Lib016}, data, rdnaFuzzISA())
	})
}

// rdnaSeedTraces are the appendix vectors and hand-built RDNA traces.
func rdnaSeedTraces() [][]byte {
	var out [][]byte
	for _, s := range []string{testutil.VectorB3, testutil.VectorB4} {
		b, _ := testutil.UnhexErr(s)
		out = append(out, b)
	}
	for _, gen := range []int{10, 11, 12} {
		d, _ := rdnaSynthTrace(gen, 1, 2)
		out = append(out, d)
	}
	out = append(out, rdnaScenarioTraces()...)
	return out
}

// seedGen is the fuzz argument that keeps a seed's header version.
func seedGen(data []byte) uint8 {
	if len(data) < 2 {
		return 0
	}
	return uint8(binary.LittleEndian.Uint16(data)>>7&0x3F+3) % 4
}
