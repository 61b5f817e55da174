//go:build cgo

package main

// Tests of --backend rocm. The plumbing tests build the cdec package's test
// fixture library (internal/cdec/testdata/fixture.c, a stand-in that makes
// scripted callbacks, not a decoder); the comparison with the native decoder
// needs AMD's library and skips without ROCPROF_TRACE_DECODER_LIB.

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/codeobj"
	"github.com/attkit/attkit/internal/sqttgen"
	"github.com/attkit/attkit/internal/wire"
)

// rocmFixtureLib compiles the cdec test-fixture library with go env CC.
func rocmFixtureLib(t *testing.T, defines ...string) string {
	t.Helper()
	out, err := exec.Command("go", "env", "CC").Output()
	cc := strings.Fields(string(out))
	if err != nil || len(cc) == 0 {
		t.Fatalf("go env CC: %v: a C compiler is needed to build the test fixture library", err)
	}
	lib := filepath.Join(t.TempDir(), "fixture.so")
	args := append(cc[1:len(cc):len(cc)], "-shared", "-fPIC", "-fvisibility=hidden", "-O1")
	args = append(args, defines...)
	args = append(args, "-o", lib, filepath.Join("..", "..", "internal", "cdec", "testdata", "fixture.c"), "-lpthread")
	if msg, err := exec.Command(cc[0], args...).CombinedOutput(); err != nil {
		t.Fatalf("building the fixture library with %s: %v\n%s", cc[0], err, msg)
	}
	return lib
}

// rocmIndex writes an index of rows "addr size text" for code object coid.
func rocmIndex(t *testing.T, coid uint64, base uint64, rows []string) string {
	t.Helper()
	ix := &wire.Index{}
	a := base
	for _, r := range rows {
		var size uint64
		sz, text, _ := strings.Cut(r, " ")
		for _, c := range sz {
			size = size*10 + uint64(c-'0')
		}
		ix.Rows = append(ix.Rows, wire.Row{CodeObj: coid, Vaddr: a, Size: size, Text: text})
		a += size
	}
	return writeIndexFile(t, ix)
}

func writeIndexFile(t *testing.T, ix *wire.Index) string {
	t.Helper()
	var buf bytes.Buffer
	if err := wire.WriteIndex(&buf, ix); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "index.msgpack")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readStream reads a msgpack record stream: its header and deep copies of
// its batches.
func readStream(t *testing.T, data []byte) (wire.Header, []wire.Batch) {
	t.Helper()
	rd := wire.NewReader(bytes.NewReader(data), "output")
	var h wire.Header
	var bs []wire.Batch
	for rd.Scan() {
		switch rd.Kind() {
		case wire.KindHeader:
			h = *rd.Header()
		case wire.KindBatch:
			bs = append(bs, sqttgen.CloneBatch(rd.Batch()))
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	return h, bs
}

func rocmRun(args ...string) (code int, stdout []byte, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, bytes.NewReader(nil), &out, &errb)
	return code, out.Bytes(), errb.String()
}

var gfx9Rows = []string{"8 s_load_dword s0, s[0:1], 0x0", "4 s_waitcnt lgkmcnt(0)", "4 v_mov_b32_e32 v0, s0",
	"4 s_cbranch_scc0 65534", "8 global_store_dword v[0:1], v0, off", "4 s_endpgm"}

func TestRocmBackendWithFixture(t *testing.T) {
	lib := rocmFixtureLib(t)
	index := rocmIndex(t, 0, 0x1000, gfx9Rows)
	trace := writeTemp(t, "x_shader_engine_1_2.att", []byte("gfxip 9\nrec 3 1 13\nrec 1 2 11\n"))
	for _, backend := range []string{"rocm", "auto"} {
		code, out, errs := rocmRun("--backend", backend, "--lib", lib, "--index", index, "-q", trace)
		if code != 0 {
			t.Fatalf("--backend %s: exit %d: %s", backend, code, errs)
		}
		h, bs := readStream(t, out)
		if h.Backend != "rocm" || h.BackendVersion != "0.2.99" || h.Trace.SE != 1 || h.Trace.Run != 2 {
			t.Errorf("--backend %s: header %+v", backend, h)
		}
		var types []string
		for _, b := range bs {
			types = append(types, b.Type.String())
		}
		if got := strings.Join(types, " "); got != "gfxip wave occupancy" {
			t.Fatalf("--backend %s: batches %q", backend, got)
		}
		if len(bs[1].Waves) != 1 || len(bs[1].Waves[0].Instructions) != 5 || len(bs[2].Occupancy) != 2 {
			t.Errorf("--backend %s: records %+v", backend, bs)
		}
	}
}

func TestRocmBackendErrors(t *testing.T) {
	lib := rocmFixtureLib(t)
	index := rocmIndex(t, 0, 0x1000, gfx9Rows)
	bad := writeTemp(t, "bad.att", []byte("gfxip 9\nfail 4\n"))
	code, _, errs := rocmRun("--backend", "rocm", "--lib", lib, "--index", index, bad)
	if code != 3 || !strings.Contains(errs, "FIXTURE_INVALID_SHADER_DATA") || !strings.HasPrefix(errs, "att-decode: ") {
		t.Errorf("INVALID_SHADER_DATA: exit %d, %q", code, errs)
	}

	missing := filepath.Join(t.TempDir(), "librocprof-trace-decoder.so")
	code, _, errs = rocmRun("--backend", "rocm", "--lib", missing, "--index", index, bad)
	if code != 4 || !strings.Contains(errs, missing) {
		t.Errorf("missing --lib: exit %d, %q", code, errs)
	}

	// The standard lookup, with nothing to find: exit 4, listing the places.
	dir := t.TempDir()
	t.Setenv("ROCPROF_TRACE_DECODER_LIB", "")
	t.Setenv("LD_LIBRARY_PATH", dir)
	t.Setenv("ROCM_HOME", "")
	t.Setenv("ROCM_PATH", "")
	code, _, errs = rocmRun("--backend", "rocm", "--index", index, bad)
	if code == 4 {
		for _, want := range []string{"ROCPROF_TRACE_DECODER_LIB", dir, "/opt/rocm/lib", "librocprof-trace-decoder.so"} {
			if !strings.Contains(errs, want) {
				t.Errorf("lookup failure does not mention %q: %s", want, errs)
			}
		}
	} else if !strings.Contains(errs, "FIXTURE") {
		t.Logf("a decoder library is installed in the loader's path: lookup failure not tested (exit %d)", code)
	}
}

func TestRocmCodeObjects(t *testing.T) {
	co := filepath.Join("..", "..", "testdata", "kernels", "gfx90a", "kernels_code_object_id_1.hsaco")
	elfData, err := os.ReadFile(co)
	if err != nil {
		t.Fatal(err)
	}
	trace := writeTemp(t, "t.att", []byte("isa 256 7 8\n"))
	lib := rocmFixtureLib(t)
	code, out, errs := rocmRun("--backend", "rocm", "--lib", lib, "--code-object", "7="+co+"@0x1000", "-q", trace)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, bs := readStream(t, out)
	// The fixture answers the ISA query from the code object it was given
	// and reports it as record type 201 (unknown to attkit: carried raw).
	if len(bs) != 1 || bs[0].Type != 201 || !bytes.Contains(bs[0].Raw.Data, []byte("builtin id=7 addr=256 elf=7f454c46 size=")) {
		t.Fatalf("records %+v", bs)
	}
	if !bytes.Contains(bs[0].Raw.Data, []byte("size="+strconv.Itoa(len(elfData)))) {
		t.Errorf("the library did not get the whole file: %q", bs[0].Raw.Data)
	}

	for _, tc := range []struct{ define, want string }{
		{"-DFIXTURE_V1_ONLY", "V1"},
		{"-DFIXTURE_NO_DISASM", "without a disassembler"},
	} {
		lib := rocmFixtureLib(t, tc.define)
		code, _, errs := rocmRun("--backend", "rocm", "--lib", lib, "--code-object", "7="+co+"@0x1000", trace)
		if code != 4 || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: exit %d, %q", tc.define, code, errs)
		}
	}
}

const rocmB1 = `
11 a0 0f 00 00 00 00 00 05 18 10 00 00 00 05 1a 00 00 00 00 90 01 03 00 44 00 43 8c 44 00 50 00
0d 02 00 00 10 00 0a 00 20 00 0d 03 00 00 30 00 0d 02 00 00 1a 28 1d 02 00 00 1a 60 1d 01 00 00
20 00 0d 02 00 00 1a 28 1d 02 00 00 1a 68 1d 02 00 00 40 00 0a 20 1c 00 cd ab 00 00 1d 03 00 00
30 00 06 00 1e 10 00 04 c0 00 20 00 56 8c 00 00 00 00 00 00 00 00`

const rocmB2 = `
11 a0 0f 00 00 00 00 00 02 80 42 c3 00 52 4f 43 02 80 42 c3 06 00 6a 18 02 80 42 c3 04 02 00 00
02 80 42 c3 00 10 00 00 02 80 42 c3 04 03 00 00 02 80 42 c3 00 00 00 00 02 80 42 c3 04 01 00 00
02 80 42 c3 00 01 00 00 02 80 42 c3 04 00 00 00 02 80 42 c3 1e 00 00 00 05 18 10 00 00 00 05 1a
00 00 00 00 90 01 03 00 44 00 43 8c 44 00 50 00 0d 02 00 00 10 00 0a 00 20 00 0d 03 00 00 30 00
0d 02 00 00 1a 28 1d 02 00 00 1a 60 1d 01 00 00 20 00 0d 02 00 00 1a 28 1d 02 00 00 1a 68 1d 02
00 00 40 00 0a 20 1c 00 cd ab 00 00 1d 03 00 00 02 80 43 c3 05 00 00 00 02 80 43 c3 10 00 00 00
02 80 43 c3 02 00 00 00 02 80 43 c3 20 00 00 00 30 00 06 00 1e 10 00 04 c0 00 20 00 56 8c 00 00
00 00 00 00 00 00`

// rocmNormalize removes what may differ between the library and the native
// decoder: C struct sizes and, for a 0.1.x library, the documented 0.1.6
// differences (sqtt-format.md §4.6 and A.3): no EVENT/DISPATCH/MARKER
// records, no wave or occupancy fields beyond the 0.1.6 layout, and the gfx9
// wave end (end time and last timeline segment).
func rocmNormalize(bs []wire.Batch, old bool) []wire.Batch {
	var out []wire.Batch
	for _, b := range bs {
		b = sqttgen.CloneBatch(&b)
		if old && (b.Type == wire.TypeEvent || b.Type == wire.TypeDispatch || b.Type == wire.TypeMarker) {
			continue
		}
		for i := range b.Waves {
			w := &b.Waves[i]
			w.Size = 0
			if old {
				w.Dispatcher, w.WorkgroupID, w.ClusterID, w.Reserved, w.EndTime = 0, 0, 0, 0, 0
				if n := len(w.Timeline); n > 0 {
					w.Timeline = w.Timeline[:n-1]
				}
			}
		}
		for i := range b.Occupancy {
			if old {
				start := b.Occupancy[i].Start
				b.Occupancy[i].SetWord(0)
				b.Occupancy[i].Start = start
			}
		}
		for i := range b.Events {
			b.Events[i].Size = 0
		}
		for i := range b.Dispatches {
			b.Dispatches[i].Size = 0
		}
		out = append(out, b)
	}
	return out
}

// wavesOnly keeps of each wave its slot and begin time.
func wavesOnly(bs []wire.Batch) []wire.Batch {
	for i := range bs {
		for j, w := range bs[i].Waves {
			bs[i].Waves[j] = wire.Wave{CU: w.CU, SIMD: w.SIMD, WaveID: w.WaveID, BeginTime: w.BeginTime}
		}
	}
	return bs
}

// loop kernel of the generated traces.
var rocmLoopRows = []string{"8 s_load_dwordx2 s[0:1], s[4:5], 0x0", "4 s_mov_b32 s2, 0", "4 v_mov_b32_e32 v1, 0",
	"4 s_waitcnt lgkmcnt(0)", "8 global_load_dword v2, v[0:1], off", "4 v_add_u32_e32 v1, v1, v2",
	"4 s_add_u32 s2, s2, 1", "4 s_cmp_lt_u32 s2, 10", "8 ds_write_b32 v0, v1", "4 s_cbranch_scc1 65530",
	"4 s_cbranch_execz 2", "4 s_barrier", "4 s_nop 0", "8 global_store_dword v[0:1], v1, off", "4 s_endpgm"}

// TestRocmMatchesNative runs att-decode with both backends on every gfx9
// test trace and compares the record streams (needs AMD's library).
func TestRocmMatchesNative(t *testing.T) {
	lib := os.Getenv("ROCPROF_TRACE_DECODER_LIB")
	if lib == "" {
		t.Skip("set ROCPROF_TRACE_DECODER_LIB to the path of librocprof-trace-decoder.so (ROCm 7.x, or AMD's 0.1.6 build) to compare --backend rocm with --backend native")
	}
	type tc struct {
		name, trace, index string
		barriers           bool // has OTHER_MSG barriers, which 0.1.6 drops
	}
	unhexS := func(s string) []byte {
		b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cases := []tc{
		{"B.1", writeTemp(t, "b1.att", unhexS(rocmB1)), rocmIndex(t, 0, 0x1000, gfx9Rows), false},
		{"B.2", writeTemp(t, "b2.att", unhexS(rocmB2)), rocmIndex(t, 7, 0, gfx9Rows), false},
	}
	// The bundled sample capture (testdata/sample, gfx942).
	sample := filepath.Join("..", "..", "testdata", "sample")
	ix, err := codeobj.Build(context.Background(),
		[]codeobj.Input{{ID: 1, Path: filepath.Join(sample, "31337_1_code_object_id_1.hsaco")}}, codeobj.Options{})
	if err != nil {
		t.Fatalf("indexing the sample code object: %v", err)
	}
	sampleIndex := writeIndexFile(t, ix)
	atts, _ := filepath.Glob(filepath.Join(sample, "*.att"))
	if len(atts) == 0 {
		t.Fatal("no sample traces in testdata/sample")
	}
	for _, a := range atts {
		cases = append(cases, tc{filepath.Base(a), a, sampleIndex, true})
	}
	for i, cfg := range []sqttgen.Config{
		{Seed: 1},
		{Seed: 2, Perf: true, ShaderData: true},
		{Seed: 3, Instrument: true, Perf: true, PerfInterval: 300},
		{Seed: 4, Dispatch: true, Events: true, Version2: 4},
		{Seed: 5, Version2: 6, WavesPerSIMD: 10},
	} {
		coid := uint64(0)
		if cfg.Instrument {
			coid = 3
		}
		index := rocmIndex(t, coid, 0x100, rocmLoopRows)
		ix, err = wire.ReadIndexFile(index)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Index = ix
		cfg.Kernels = []sqttgen.Kernel{{Entry: 0x100, CodeObjectID: coid}}
		trace, _, err := sqttgen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, tc{"generated-" + strconv.Itoa(i), writeTemp(t, "gen.att", trace), index, false})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, rocm, errs := rocmRun("--backend", "rocm", "--lib", lib, "--index", c.index, "-q", c.trace)
			if code != 0 {
				t.Fatalf("rocm: exit %d: %s", code, errs)
			}
			code, native, errs := rocmRun("--backend", "native", "--index", c.index, "-q", c.trace)
			if code != 0 {
				t.Fatalf("native: exit %d: %s", code, errs)
			}
			rh, rb := readStream(t, rocm)
			_, nb := readStream(t, native)
			old := rh.BackendVersion == "0.1" || strings.HasPrefix(rh.BackendVersion, "0.1.")
			want, got := rocmNormalize(nb, old), rocmNormalize(rb, old)
			if old && c.barriers {
				// 0.1.6 drops OTHER_MSG (sqtt-format.md A.3), so the
				// instructions of waves that pass a barrier differ:
				// compare which waves ran, not their instructions.
				want, got = wavesOnly(want), wavesOnly(got)
			}
			if d := sqttgen.Diff(want, got); d != "" {
				t.Errorf("rocm (got) and native (want) differ: %s", d)
			}
			if len(rb) == 0 {
				t.Error("no records")
			}
		})
	}
}
