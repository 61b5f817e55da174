package sqtt

import (
	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

// DiffTrace is a hand-built RDNA trace with its ISA, for the differential
// test against AMD's library (rdna_lib_test.go, package sqtt_test): with
// Compat016 the native records must equal the 0.1.6 library's.
type DiffTrace struct {
	Name string
	Data []byte
	ISA  isa.Provider
}

func diffTrace(name string, data []byte, isa *table) DiffTrace { return DiffTrace{name, data, isa} }

// RDNADiffTraces are the RDNA vectors and scenarios of the tests.
func RDNADiffTraces() []DiffTrace {
	b3, _ := testutil.UnhexErr(testutil.VectorB3)
	b4, _ := testutil.UnhexErr(testutil.VectorB4)
	return []DiffTrace{
		diffTrace("B.3", b3, newTable(0, b3Rows...)),
		diffTrace("B.4", b4, newTable(0, b4Rows...)),
		diffTrace("jump", scenarioJump(), newTable(5, "0x0 4 s_setpc_b64 s[0:1]", "0x40 4 v_add_f32_e32 v1, v0, v0", "0x44 4 s_endpgm")),
		diffTrace("two waves", scenarioTwoWaves(), newTable(0, "0x1000 4 s_waitcnt lgkmcnt(0)", "0x1004 4 s_endpgm")),
		diffTrace("reorder", scenarioReorder(), newTable(0, "0x1000 8 v_fma_f64 v[0:1], v[0:1], v[0:1], v[0:1]", "0x1008 4 v_add_f32_e32 v1, v0, v0",
			"0x100c 4 s_waitcnt vmcnt(0)", "0x1010 8 s_load_b32 s0, s[0:1], 0x0", "0x1018 4 s_endpgm")),
		diffTrace("context", scenarioContext(), newTable(0, "0x3000 8 s_load_b32 s0, s[0:1], 0x0", "0x3008 4 s_nop 0",
			"0x3010 4 v_add_f32_e32 v1, v0, v0", "0x3014 4 s_endpgm")),
		diffTrace("barrier excluded", scenarioBarrier(true), newTable(0, "0x4000 4 s_barrier_signal -1", "0x4004 4 s_barrier_wait 0xffff",
			"0x4008 4 v_add_f32_e32 v1, v0, v0", "0x400c 4 s_endpgm")),
		diffTrace("lost start", scenarioLostStart(), newTable(0, "0x1000 4 v_add_f32_e32 v1, v0, v0", "0x1004 4 s_endpgm")),
		diffTrace("ext plain", extTrace(0, false), newTable(0, "0x3000 8 s_load_b32 s0, s[0:1], 0x0", "0x3008 4 s_endpgm")),
		diffTrace("ext byte", extTrace(0, true), newTable(0, "0x3000 8 s_load_b32 s0, s[0:1], 0x0", "0x3008 4 s_endpgm")),
		diffTrace("ext wg5", extTrace(5, false), newTable(0, "0x3000 8 s_load_b32 s0, s[0:1], 0x0", "0x3008 4 s_endpgm")),
		diffTrace("ext gfx11", newRB(11).header(3, 0, 0, 0, 0, 0, 0).pgm(0, 0, 0x3000).
			at(100).tok(0b11100, 48, 5, 6, 1<<25).at(104).inst(0, 1).at(110).waveEnd(0, 0, 0, 0).pad(),
			newTable(0, "0x3000 8 s_load_b32 s0, s[0:1], 0x0", "0x3008 4 s_endpgm")),
		diffTrace("ts rt", newRB(12).header(4, 0, 0, 0, 0, 0, 0).pgm(0, 0, 0x3000).at(50).timestamp(0x12345, true, false).
			at(100).waveStart(0, 0, 0, 0, 0, 0, 1).at(104).inst(0, 1).at(110).waveEnd(0, 0, 0, 0).pad(), newTable(0, "0x3000 8 s_load_b32 s0, s[0:1], 0x0", "0x3008 4 s_endpgm")),
		diffTrace("save restore", newRB(12).header(4, 0, 0, 0, 0, 0, 0).pgm(0, 0, 0x3000).
			at(100).waveStart(0, 0, 0, 0, 0, 0, 1).at(104).inst(0, 1).
			at(110).misc(0x08).
			at(112).waveStart(0, 0, 0, 0, 0, 0, 66).
			at(150).waveStart(0, 0, 0, 0, 0, 0, 68).
			at(155).inst(0, codeReturnExc).at(156).newPC(0, 0x3010).
			at(160).valu(0).at(170).waveEnd(0, 0, 0, 0).pad(), newTable(0, "0x3000 8 s_load_b32 s0, s[0:1], 0x0", "0x3008 4 s_nop 0",
			"0x3010 4 v_add_f32_e32 v1, v0, v0", "0x3014 4 s_endpgm")),
		diffTrace("w64 gfx10", w64Trace(10, 2), anyCodes()),
		diffTrace("w64 gfx11", w64Trace(11, 3), anyCodes()),
		diffTrace("w64 gfx12", w64Trace(12, 4), anyCodes()),
		diffTrace("dp gfx10", dpTrace(10, 1, 3, 0, 12, 13, 14, 15, 16, 17), anyCodes()),
		diffTrace("dp gfx11", dpTrace(11, 3, 3, 0, 12, 13, 14, 16, 17), anyCodes()),
		diffTrace("dp gfx12", dpTrace(12, 4, 2, 1, 10, 15, 146, 147), anyCodes()),
		diffTrace("dp 0 gfx12", dpTrace(12, 4, 0, 0, 146), anyCodes()),
		diffTrace("dp gfx11 codes 10, 15", dpTrace(11, 3, 2, 0, 10, 15), anyCodes()),
		diffTrace("misc gfx10", miscTrace(10, 2), anyCodes()),
		diffTrace("misc gfx11", miscTrace(11, 3), anyCodes()),
		diffTrace("misc gfx12", miscTrace(12, 4), anyCodes()),
		diffTrace("trap gfx11", trapTrace(11, 3, false), anyCodes()),
		diffTrace("trap gfx12", trapTrace(12, 4, false), anyCodes()),
		diffTrace("trap w64 gfx12", trapTrace(12, 4, true), anyCodes()),
		diffTrace("realtime gfx11", rtTrace(11, 3), anyCodes()),
		diffTrace("realtime gfx12", rtTrace(12, 4), anyCodes()),
		diffTrace("realtime tail gfx10 k0 a", rtTail(10, 0, [][2]int64{{50, 100}, {50, 200}, {60, 150}, {70, 300}, {80, 300}}), anyCodes()),
		diffTrace("realtime tail gfx10 k8 a", rtTail(10, 8, [][2]int64{{50, 100}, {50, 200}, {60, 150}, {70, 300}, {80, 300}}), anyCodes()),
		diffTrace("realtime tail gfx10 k10 a", rtTail(10, 10, [][2]int64{{50, 100}, {50, 200}, {60, 150}, {70, 300}, {80, 300}}), anyCodes()),
		diffTrace("realtime tail gfx10 k30 a", rtTail(10, 30, [][2]int64{{50, 100}, {50, 200}, {60, 150}, {70, 300}, {80, 300}}), anyCodes()),
		diffTrace("realtime tail gfx10 k0 b", rtTail(10, 0, [][2]int64{{50, 100}, {60, 200}, {65, 150}, {70, 400}}), anyCodes()),
		diffTrace("realtime tail gfx10 k18 b", rtTail(10, 18, [][2]int64{{50, 100}, {60, 200}, {65, 150}, {70, 400}}), anyCodes()),
		diffTrace("realtime tail gfx10 k20 b", rtTail(10, 20, [][2]int64{{50, 100}, {60, 200}, {65, 150}, {70, 400}}), anyCodes()),
		diffTrace("realtime tail gfx11 k0 a", rtTail(11, 0, [][2]int64{{50, 100}, {50, 200}, {60, 150}, {70, 300}, {80, 300}}), anyCodes()),
		diffTrace("realtime tail gfx11 k8 a", rtTail(11, 8, [][2]int64{{50, 100}, {50, 200}, {60, 150}, {70, 300}, {80, 300}}), anyCodes()),
		diffTrace("realtime tail gfx11 k10 a", rtTail(11, 10, [][2]int64{{50, 100}, {50, 200}, {60, 150}, {70, 300}, {80, 300}}), anyCodes()),
		diffTrace("realtime tail gfx11 k30 a", rtTail(11, 30, [][2]int64{{50, 100}, {50, 200}, {60, 150}, {70, 300}, {80, 300}}), anyCodes()),
		diffTrace("realtime tail gfx11 k0 b", rtTail(11, 0, [][2]int64{{50, 100}, {60, 200}, {65, 150}, {70, 400}}), anyCodes()),
		diffTrace("realtime tail gfx11 k18 b", rtTail(11, 18, [][2]int64{{50, 100}, {60, 200}, {65, 150}, {70, 400}}), anyCodes()),
		diffTrace("realtime tail gfx11 k20 b", rtTail(11, 20, [][2]int64{{50, 100}, {60, 200}, {65, 150}, {70, 400}}), anyCodes()),
		diffTrace("realtime tail gfx12 k0 a", rtTail(12, 0, [][2]int64{{50, 100}, {50, 200}, {60, 150}, {70, 300}, {80, 300}}), anyCodes()),
		diffTrace("realtime tail gfx12 k8 a", rtTail(12, 8, [][2]int64{{50, 100}, {50, 200}, {60, 150}, {70, 300}, {80, 300}}), anyCodes()),
		diffTrace("realtime tail gfx12 k10 a", rtTail(12, 10, [][2]int64{{50, 100}, {50, 200}, {60, 150}, {70, 300}, {80, 300}}), anyCodes()),
		diffTrace("realtime tail gfx12 k30 a", rtTail(12, 30, [][2]int64{{50, 100}, {50, 200}, {60, 150}, {70, 300}, {80, 300}}), anyCodes()),
		diffTrace("realtime tail gfx12 k0 b", rtTail(12, 0, [][2]int64{{50, 100}, {60, 200}, {65, 150}, {70, 400}}), anyCodes()),
		diffTrace("realtime tail gfx12 k18 b", rtTail(12, 18, [][2]int64{{50, 100}, {60, 200}, {65, 150}, {70, 400}}), anyCodes()),
		diffTrace("realtime tail gfx12 k20 b", rtTail(12, 20, [][2]int64{{50, 100}, {60, 200}, {65, 150}, {70, 400}}), anyCodes()),
		diffTrace("synth gfx10", mustSynth(10), newTable(0, loopISA...)),
		diffTrace("synth gfx11", mustSynth(11), newTable(0, loopISA...)),
		diffTrace("synth gfx12", mustSynth(12), newTable(0, loopISA...)),
	}
}

func mustSynth(gen int) []byte {
	d, _ := rdnaSynthTrace(gen, 2, 5)
	return d
}

func extTrace(wg int, extByte bool) []byte {
	r := newRB(12).header(4, 0, 0, 0, 0, 0, 0).pgm(0, 0, 0x3000).
		at(100).waveStartExt(0, 0, 0, 0, 0, 0, 1, wg)
	if extByte {
		r.bits(0xA5, 8)
	}
	return r.at(104).inst(0, 1).at(110).waveEnd(0, 0, 0, 0).pad()
}

// anyCodes is an ISA of s_nop lines: enough for the timing records.
func anyCodes() *table {
	t := newTable(0)
	for a := uint64(0x3000); a < 0x3100; a += 4 {
		t.m[wire.PC{Address: a}] = tableEntry{"s_nop 0", 4}
	}
	return t
}

// w64Trace is a wave whose INST and VALU_INST tokens have the w64 bit set
// (and, for comparison, clear), 10 cycles apart.
func w64Trace(gen, version int) []byte {
	r := newRB(gen).header(version, 0, 0, 0, 0, 0, 0).pgm(0, 0, 0x3000).at(100).waveStart(0, 0, 0, 0, 0, 0, 1)
	t := int64(100)
	for _, w64 := range []bool{false, true} {
		for _, c := range []int{0, 1, 3, 4, 7, 8, 9, 11, 18, 41, 43, 47, 50, 57, 103, 110, -1} {
			t += 10
			r.at(t)
			var f uint64
			if c < 0 {
				if w64 {
					f = 1 << 6
				}
				r.tok(0b011, 12, 3, 5, f)
				continue
			}
			if gen <= 11 {
				if w64 {
					f = 1 << 7
				}
				r.tok(0b010, 20, 4, 6, f|uint64(c)<<13)
			} else {
				if w64 {
					f = 1 << 6
				}
				r.tok(0b010, 20, 3, 5, f|uint64(c)<<12)
			}
		}
	}
	return r.at(t+20).waveEnd(0, 0, 0, 0).pad()
}

// dpTrace is a wave of the given instruction codes under a header DPRate
// and dp_derate, 100 cycles apart.
func dpTrace(gen, version int, dprate, derate uint64, codes ...int) []byte {
	r := newRB(gen).header(version, 0, 0, 0, dprate, derate, 0).pgm(0, 0, 0x3000).at(100).waveStart(0, 0, 0, 0, 0, 0, 1)
	t := int64(100)
	for _, c := range codes {
		t += 100
		r.at(t).inst(0, c)
	}
	return r.at(t+200).waveEnd(0, 0, 0, 0).pad()
}

// miscTrace: instrumentation with a code-object load and the realtime
// frequency, events, shader data of every form, TIMESTAMP clock and
// realtime samples, IMMEDIATE and WAVE_READY masks over three waves.
func miscTrace(gen, version int) []byte {
	r := newRB(gen).header(version, 0, 0, 0, 1, 0, 0)
	r.ud2(rocMagic).ud2(opAgentInfo|100000<<12).codeObject(0x3000, 0x100, 3, true).pgm(0, 0, 0x3000)
	r.at(20).misc(0x30).event(0x28, 1, 2, true).event(7, 0, 1, false)
	if gen == 10 {
		r.tok(0b0000001, 64, 0, -1, 2<<14|0x777<<16) // realtime sample
		r.tok(0b0000001, 64, 0, -1, 1<<14|30<<16)    // clock += 30
		r.clock += 30
	} else {
		r.timestamp(0x777, true, false).timestamp(30, false, false)
	}
	r.at(100).waveStart(0, 0, 0, 0, 0, 0, 1).at(101).waveStart(0, 0, 0, 1, 0, 0, 1).at(102).waveStart(0, 0, 0, 2, 0, 0, 1)
	r.at(110).immediate(0b101).at(115).ready(0b111).at(120).inst(1, 1).valu(0).valu(2)
	r.at(125).shaderData(false, 0, 0, 0, 1, 0xcafe, 0).shaderData(true, 0, 0, 0, 2, 0x5a, 0)
	if gen == 12 {
		r.shaderData(false, 0, 0, 0, 0, 0xbeef, 2).shaderData(true, 0, 0, 0, 0, 0x11, 1)
	}
	r.at(130).inst(0, 47).at(135).immOne(1).at(140).inst(2, 41)
	r.at(150).waveEnd(0, 0, 0, 0).at(151).waveEnd(0, 0, 0, 1).at(152).waveEnd(0, 0, 0, 2)
	return r.pad()
}

// trapTrace: a trap (code 6), the handler's instructions (ignored until the
// return), the return from exception (117) and a NEW_PC.
func trapTrace(gen, version int, w64 bool) []byte {
	r := newRB(gen).header(version, 0, 0, 0, 0, 0, 0).pgm(0, 0, 0x3000).at(100).waveStart(0, 0, 0, 0, 0, 0, 1)
	r.at(104).inst(0, 0)
	if w64 {
		r.at(110).tok(0b010, 20, 3, 5, 1<<6|uint64(codeTrap)<<12)
	} else {
		r.at(110).inst(0, codeTrap)
	}
	r.at(120).inst(0, 0).valu(0).at(140).inst(0, codeReturnExc).at(141).newPC(0, 0x3008)
	return r.at(150).valu(0).at(160).waveEnd(0, 0, 0, 0).pad()
}

// rtTrace: realtime samples, some not newer than the previous one.
func rtTrace(gen, version int) []byte {
	r := newRB(gen).header(version, 0, 0, 0, 0, 0, 0)
	r.at(50).timestamp(0x1000, true, false).timestamp(0x2000, true, false)
	r.at(60).timestamp(0x1800, true, false).at(70).timestamp(0x3000, true, false)
	return r.at(80).timestamp(0x3000, true, false).pad()
}

// rtTail writes realtime samples (time, value) and then k NOP nibbles: it
// probes the reader's tail, where averaging differs (rtSample).
func rtTail(gen, k int, samples [][2]int64) []byte {
	r := newRB(gen).header(gen-8, 0, 0, 0, 0, 0, 0)
	for _, p := range samples {
		r.at(p[0])
		if gen == 10 {
			r.tok(0b0000001, 64, 0, -1, 2<<14|uint64(p[1])<<16)
		} else {
			r.timestamp(uint64(p[1]), true, false)
		}
	}
	for i := 0; i < k; i++ {
		r.nop()
	}
	if r.nbits%8 != 0 {
		r.nop()
	}
	return r.bytes()
}
