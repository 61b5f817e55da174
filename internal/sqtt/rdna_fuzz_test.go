package sqtt

import (
	"encoding/binary"
	"fmt"
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
//
// Fuzz it with a small minimization budget, -fuzzminimizetime 50x: each
// input is decoded some twenty ways, so minimizing a new input within the
// default 60 s takes that long, one input after another, and a run then
// reports PASS having tried almost nothing (2 December 2026: 24 inputs in
// 20 s with the default, 9,205 with 50x).
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
		scanMatchesRead(t, data, rdnaFuzzISA())
		splitMatches(t, Decoder{}, data, rdnaFuzzISA())
		splitMatches(t, Decoder{Compat: Lib016, PoolLimit: 2}, data, rdnaFuzzISA())
	})
}

// scanMatchesRead checks that a reader's fast path gives the records of
// its token-by-token path (Decoder.noScan: read, deliver) on data: the
// RDNA reader's block path (scan, deliverBlock), gfx9's buffered loop
// (issue and inst inlined by hand). In both compat modes and with a pool
// limit of 2 (so that realtime pairs are flushed in the middle of blocks
// too).
func scanMatchesRead(t *testing.T, data []byte, p *table) {
	t.Helper()
	for _, d := range []Decoder{{}, {Compat: Lib016}, {PoolLimit: 2}, {PoolLimit: 2, Compat: Lib016}} {
		slow := d
		slow.noScan = true
		want, werr := decodeWith(&slow, data, provider(p), cloneAll)
		got, err := decodeWith(&d, data, provider(p), cloneAll)
		if fmt.Sprint(err) != fmt.Sprint(werr) || render(got) != render(want) {
			t.Fatalf("%v, pool limit %d: scan and read differ: %v / %v\nscan:\n%s\nread:\n%s", d.Compat, d.PoolLimit, err, werr, render(got), render(want))
		}
	}
}

// TestRDNAScanMatchesRead runs scanMatchesRead on the generated traces of
// testdata/rdna, the fuzz seeds and rdnaBlockTrace's.
func TestRDNAScanMatchesRead(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "rdna", "*.att"))
	var traces [][]byte
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		traces = append(traces, data)
	}
	if len(traces) == 0 {
		t.Fatal("no traces in testdata/rdna")
	}
	traces = append(traces, rdnaSeedTraces()...)
	for _, gen := range []int{10, 11, 12} {
		d, _ := rdnaSynthTrace(gen, 4, 30)
		traces = append(traces, d, rdnaBlockTrace(gen))
	}
	for i, data := range traces {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			scanMatchesRead(t, data, rdnaFuzzISA())
		})
	}
}

// rdnaBlockTrace is a trace for scan's block path: 8 waves running
// loopISA whose tokens come in groups of one time, 1 to 300 long (longer
// than rdnaCarry and than a block), with WAVE_READY tokens one cycle
// before the group they join (handled early) and, from gfx11 on,
// TIMESTAMP tokens raising the packet-loss flag or giving a realtime
// sample between the groups.
func rdnaBlockTrace(gen int) []byte {
	version := map[int]int{10: 2, 11: 3, 12: 4}[gen]
	r := newRB(gen).header(version, 0, 0, 0, 0, 0, 0).pgm(0, 0, 0x1000)
	clock := int64(10)
	for k := 0; k < 8; k++ {
		clock++
		r.at(clock).waveStart(0, 0, 0, k, 0, 0, 1)
	}
	rt := uint64(1000)
	for g, size := 0, 1; g < 120; g++ {
		clock += int64(1 + g%3)
		for i := 0; i < size; i++ {
			r.at(clock)
			switch i % 5 {
			case 0:
				r.valu(i % 8)
			case 1:
				r.immOne(i % 8)
			case 2:
				r.ready(uint16(1) << (i % 8))
			default:
				r.inst(i%8, 0)
			}
		}
		switch {
		case gen >= 11 && g%7 == 3:
			r.timestamp(0, false, true)
		case gen >= 11 && g%7 == 5:
			rt += 100
			r.timestamp(rt, true, false)
		}
		size = []int{1, 2, 1, 3, 70, 1, 300, 5, 1, 65, 64}[g%11]
	}
	for k := 0; k < 8; k++ {
		clock++
		r.at(clock).waveEnd(0, 0, 0, k)
	}
	return r.pad()
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
