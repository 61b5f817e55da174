//go:build cgo

package cdec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/codeobj"
	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

const skipReal = "set " + EnvLib + " to the path of librocprof-trace-decoder.so (ROCm 7.x, or AMD's 0.1.6 build from the ROCm/rocprof-trace-decoder repository's releases/ folder) to run the real-library tests"

// realDecoder loads the library named by ROCPROF_TRACE_DECODER_LIB, or skips.
func realDecoder(t testing.TB) *Decoder {
	t.Helper()
	if os.Getenv(EnvLib) == "" {
		t.Skip(skipReal)
	}
	d, err := Load("")
	if err != nil {
		t.Fatalf("%s=%s: %v", EnvLib, os.Getenv(EnvLib), err)
	}
	t.Cleanup(func() { d.Close() })
	t.Logf("library %s, version %q, API %s", d.Path(), d.Version(), d.API())
	return d
}

// The test vectors of sqtt-format.md Appendix B.
var vectors = []struct {
	name  string
	hex   string
	gfxip uint64
	coid  uint64
	base  uint64
	isa   []string // "size text", consecutive from base
}{
	{"B.1 gfx9", testutil.VectorB1, 9, 0, 0x1000, gfx9ISA},
	{"B.2 gfx9 instrumented", testutil.VectorB2, 9, 7, 0, gfx9ISA},
	{"B.3 gfx12", testutil.VectorB3, 12, 0, 0x2000,
		[]string{"8 s_load_b32 s0, s[0:1], 0x0", "4 v_mov_b32_e32 v0, s0", "4 v_add_f32_e32 v1, v0, v0", "4 s_nop 0", "4 s_endpgm"}},
}

var gfx9ISA = []string{"8 s_load_dword s0, s[0:1], 0x0", "4 s_waitcnt lgkmcnt(0)", "4 v_mov_b32_e32 v0, s0",
	"4 s_cbranch_scc0 65534", "8 global_store_dword v[0:1], v0, off", "4 s_endpgm"}

func vectorISA(base, coid uint64, rows []string) mapISA {
	m := mapISA{}
	a := base
	for _, r := range rows {
		var size uint64
		sz, text, _ := strings.Cut(r, " ")
		fmt.Sscan(sz, &size)
		m[wire.PC{Address: a, CodeObjectID: coid}] = struct {
			text string
			size uint64
		}{text, size}
		a += size
	}
	return m
}

// b1Wave016 and b1WaveNewest are the WAVE record of Appendix B.1 as the
// specification states it (B.1 "Expected records", item 2): 0.1.6 ends the
// wave at the WAVE_END token (220) with a last segment IDLE 8 (A.3 item 1),
// the newest at 224 with EXEC 12. B.2 has the same wave with PCs relative
// to the code object 7 loaded at 0x1000.
func b1Wave(old bool, base, coid uint64) wire.Wave {
	pc := func(a uint64) wire.PC { return wire.PC{Address: base + a, CodeObjectID: coid} }
	w := wire.Wave{BeginTime: 100, EndTime: 224,
		Instructions: []wire.Instruction{
			{Category: wire.CatSMEM, Time: 120, Duration: 4, PC: pc(0)},
			{Category: wire.CatImmed, Time: 124, Duration: 12, Stall: 12, PC: pc(0x8)},
			{Category: wire.CatVALU, Time: 144, Duration: 4, PC: pc(0xc)},
			{Category: wire.CatJump, Time: 152, Duration: 4, PC: pc(0x10)},
			{Category: wire.CatVALU, Time: 160, Duration: 12, Stall: 8, PC: pc(0xc)},
			{Category: wire.CatNext, Time: 176, Duration: 4, PC: pc(0x10)},
			{Category: wire.CatFLAT, Time: 184, Duration: 20, PC: pc(0x14)},
			{Category: wire.CatImmed, Time: 204, Duration: 8, Stall: 8, PC: pc(0x1c)},
		},
		Timeline: []wire.WaveState{{Type: wire.StateIdle, Duration: 20}, {Type: wire.StateExec, Duration: 4},
			{Type: wire.StateWait, Duration: 12}, {Type: wire.StateExec, Duration: 24}, {Type: wire.StateStall, Duration: 8},
			{Type: wire.StateExec, Duration: 36}, {Type: wire.StateWait, Duration: 8}, {Type: wire.StateExec, Duration: 12}},
	}
	if old {
		w.EndTime = 220
		w.Timeline[7] = wire.WaveState{Type: wire.StateIdle, Duration: 8}
	}
	return w
}

// TestRealLibraryVectors decodes the Appendix B vectors through the library
// and checks them against the facts the specification states; for B.1 and
// B.2 the whole WAVE record of Appendix B.1 for the library's version.
// (cmd/att-decode's TestRocmMatchesNative compares all records of B.1, B.2
// and the sample capture with the native decoder's.)
func TestRealLibraryVectors(t *testing.T) {
	d := realDecoder(t)
	old := is01(d.Version())
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			trace := testutil.Unhex(t, v.hex)
			p := vectorISA(v.base, v.coid, v.isa)
			var got collector
			if err := d.Decode(context.Background(), strings.NewReader(string(trace)), p, got.emit); err != nil {
				t.Fatal(err)
			}
			if len(got.batches) == 0 || got.batches[0].Type != wire.TypeGFXIP || got.batches[0].GFXIP != v.gfxip {
				t.Fatalf("first batch %+v, want GFXIP %d", got.batches, v.gfxip)
			}
			var waves []wire.Wave
			for _, b := range got.batches {
				waves = append(waves, b.Waves...)
			}
			if len(waves) != 1 || waves[0].BeginTime != 100 {
				t.Fatalf("waves %+v, want one wave beginning at 100", waves)
			}
			for _, in := range waves[0].Instructions {
				if in.PC.CodeObjectID != v.coid || in.PC.Address < v.base || in.PC.Address >= v.base+0x20 {
					t.Errorf("instruction %+v: PC outside the vector's code", in)
				}
			}
			if v.gfxip != 9 {
				return
			}
			w := waves[0]
			w.Size = 0 // the C struct's size (newest layout), not a decoded value
			if want := b1Wave(old, v.base, v.coid); !reflect.DeepEqual(w, want) {
				t.Errorf("wave\n got %+v\nwant %+v (Appendix B.1, library %s)", w, want, d.Version())
			}
		})
	}
}

// TestRealLibraryChunks decodes B.1 three times in one parse call through
// the data callback: GFXIP once, the records of each buffer in turn.
func TestRealLibraryChunks(t *testing.T) {
	d := realDecoder(t)
	v := vectors[0]
	trace := testutil.Unhex(t, v.hex)
	p := vectorISA(v.base, v.coid, v.isa)
	var one, three collector
	if err := d.Decode(context.Background(), strings.NewReader(string(trace)), p, one.emit); err != nil {
		t.Fatal(err)
	}
	if err := d.DecodeBuffers(context.Background(), [][]byte{trace, trace, trace}, p, three.emit); err != nil {
		t.Fatal(err)
	}
	gfx := 0
	waves := 0
	for _, b := range three.batches {
		if b.Type == wire.TypeGFXIP {
			gfx++
		}
		waves += len(b.Waves)
	}
	if gfx != 1 || waves != 3 {
		t.Errorf("three buffers: %d GFXIP batches and %d waves, want 1 and 3", gfx, waves)
	}
}

// TestRealLibraryBadData checks that a malformed trace is an error with
// exit code 3 and the library's status text.
func TestRealLibraryBadData(t *testing.T) {
	d := realDecoder(t)
	var c collector
	err := d.Decode(context.Background(), strings.NewReader(strings.Repeat("\x00", 64)), noISA, c.emit)
	if err == nil {
		t.Fatal("an all-zero trace decoded without error")
	}
	if !strings.Contains(err.Error(), "INVALID_SHADER_DATA") {
		t.Errorf("error %v does not carry the library's status text", err)
	}
	if got := d.StatusString(StatusInvalidShaderData); !strings.Contains(got, "INVALID_SHADER_DATA") {
		t.Errorf("StatusString(4) = %q", got)
	}
	if got := d.InfoString(wire.InfoDataLost); !strings.HasPrefix(got, "Data Lost") {
		t.Errorf("InfoString(1) = %q", got)
	}
}

// TestRealLibrarySample decodes the repository's bundled capture
// (testdata/sample, gfx942) with an index of its code object; every traced
// instruction must resolve to code object 1. (cmd/att-decode's rocm test
// compares these records with the native decoder's.)
func TestRealLibrarySample(t *testing.T) {
	d := realDecoder(t)
	sample := filepath.Join("..", "..", "testdata", "sample")
	ix, err := codeobj.Build(context.Background(),
		[]codeobj.Input{{ID: 1, Path: filepath.Join(sample, "31337_1_code_object_id_1.hsaco")}}, codeobj.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := isa.NewTable(ix)
	atts, _ := filepath.Glob(filepath.Join(sample, "*.att"))
	if len(atts) == 0 {
		t.Fatal("no sample traces")
	}
	for _, a := range atts {
		f, err := os.Open(a)
		if err != nil {
			t.Fatal(err)
		}
		var c collector
		err = d.Decode(context.Background(), f, p, c.emit)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		if len(c.batches) == 0 || c.batches[0].Type != wire.TypeGFXIP || c.batches[0].GFXIP != 9 {
			t.Fatalf("%s: does not start with GFXIP 9", a)
		}
		waves := 0
		for _, b := range c.batches {
			for _, w := range b.Waves {
				waves++
				for _, in := range w.Instructions {
					if in.PC.CodeObjectID != 1 {
						t.Errorf("%s: instruction %+v not in code object 1", a, in)
						break
					}
				}
			}
		}
		if waves == 0 {
			t.Errorf("%s: no waves", a)
		}
	}
}

// is01 reports a 0.1.x library (Version "0.1" when only the API tells).
func is01(v string) bool { return v == "0.1" || strings.HasPrefix(v, "0.1.") }
