package arch

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/attkit/attkit/internal/arch/archtest"
	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

func TestNames(t *testing.T) {
	for _, c := range []struct {
		t, fam, gen string
		major       int
	}{
		{"gfx942", "gfx9", "MI300", 9}, {"gfx940", "gfx9", "MI300", 9}, {"gfx950", "gfx9", "MI350", 9},
		{"gfx90a", "gfx9", "MI200", 9}, {"gfx908", "gfx9", "MI100", 9}, {"gfx906", "gfx9", "gfx906", 9},
		{"gfx90c", "gfx9", "gfx90c", 9}, {"gfx1100", "gfx11", "gfx11", 11}, {"gfx1201", "gfx12", "gfx12", 12},
		{"gfx1030", "gfx10", "gfx10", 10}, {"gfx9-generic", "gfx9", "", 9}, {"gfx9-4-generic", "gfx9", "", 9},
		{"gfx10-3-generic", "gfx10", "", 10}, {"gfx12-generic", "gfx12", "", 12},
		{"", "", "", 0}, {"gfx", "", "", 0}, {"gfx9", "", "", 0}, {"sm_90", "", "", 0}, {"gfx94z", "", "", 0},
		{"gfx-generic", "", "", 0},
	} {
		if f, g, m := Family(c.t), Generation(c.t), Major(c.t); f != c.fam || g != c.gen || m != c.major {
			t.Errorf("%q: family %q generation %q major %d; want %q %q %d", c.t, f, g, m, c.fam, c.gen, c.major)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		tr      Trace
		targets []string
		bad     bool
	}{
		{Trace{GFXIP: 11}, []string{"gfx942"}, true},
		{Trace{GFXIP: 9}, []string{"gfx942"}, false},
		{Trace{GFXIP: 9}, []string{"gfx950"}, false}, // the bytes name no generation
		{Trace{GFXIP: 9, Target: "gfx950"}, []string{"gfx942"}, true},
		{Trace{Target: "gfx950"}, []string{"gfx942"}, true},
		{Trace{GFXIP: 9, Target: "gfx942"}, []string{"gfx940"}, false},
		{Trace{GFXIP: 9, Target: "gfx950"}, []string{"gfx942", "gfx950"}, false},
		{Trace{GFXIP: 9, Target: "gfx950"}, []string{"gfx9-generic"}, false},
		{Trace{GFXIP: 9, Target: "gfx90a"}, []string{"gfx908"}, true},
		{Trace{GFXIP: 11, Target: "gfx1101"}, []string{"gfx1100"}, false},
		{Trace{GFXIP: 12}, []string{"gfx1100"}, true},
		{Trace{GFXIP: 11}, nil, false},
		{Trace{}, []string{"gfx942"}, false},
		{Trace{GFXIP: 11, Target: "gfx942"}, nil, true}, // --arch contradicts the trace
		{Trace{GFXIP: 9, Target: "gfx942"}, nil, false},
	} {
		err := Check(c.tr, "ix", c.targets)
		if (err != nil) != c.bad {
			t.Errorf("%+v with %v: %v", c.tr, c.targets, err)
		}
		var m *Mismatch
		if err != nil && (!errors.As(err, &m) || exitcode.Of(err) != exitcode.Format) {
			t.Errorf("%+v: %T, exit %d", c.tr, err, exitcode.Of(err))
		}
	}
}

func TestIndexTargets(t *testing.T) {
	obj := archtest.SampleObject()
	if got := ELFTarget(obj); got != "gfx942" {
		t.Fatalf("ELFTarget(sample) = %q", got)
	}
	dir := t.TempDir()
	for _, p := range []string{"short", "text"} {
		os.WriteFile(filepath.Join(dir, p), []byte(p), 0o644)
	}
	if ELFTarget(filepath.Join(dir, "short")) != "" || ELFTarget(filepath.Join(dir, "none")) != "" {
		t.Error("a non-ELF file has a target")
	}
	// A relative hsaco path is taken from the code.json's folder.
	rel, err := filepath.Rel(dir, obj)
	if err != nil {
		t.Fatal(err)
	}
	ix := &wire.Index{Doc: wire.DocMeta{Hsaco: []string{rel, "missing.hsaco", obj}}}
	if got := IndexTargets(ix, dir); len(got) != 1 || got[0] != "gfx942" {
		t.Errorf("code.json targets %q", got)
	}
	ix.Objects = []wire.CodeObject{{Target: "gfx1100"}, {Target: ""}, {Target: "gfx950"}, {Target: "gfx1100"}}
	if got := IndexTargets(ix, dir); len(got) != 2 || got[0] != "gfx1100" || got[1] != "gfx950" {
		t.Errorf("index targets %q", got)
	}
}

// TestRealCodeJSON: the real captures' code.json files name no code
// object, so they check nothing (and still read).
func TestRealCodeJSON(t *testing.T) {
	for _, c := range testutil.RealCorpus(t) {
		ix, err := wire.ReadIndexFile(c.CodeJSON)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		if ts := IndexTargets(ix, c.Dir); ts != nil {
			t.Errorf("%s: targets %q", c.Name, ts)
		}
	}
}

// TestCaptureTarget: a rocprofv3 trace's target is that of the code
// objects of its <pid>_<agent> beside it; other processes' objects, other
// names and objects of two generations give none.
func TestCaptureTarget(t *testing.T) {
	dir := t.TempDir()
	obj, err := os.ReadFile(archtest.SampleObject())
	if err != nil {
		t.Fatal(err)
	}
	put := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	trace := put("4[2]_1_shader_engine_0_1.att", []byte("x"))
	if got := CaptureTarget(trace); got != "" {
		t.Errorf("no object: %q", got)
	}
	put("4[2]_1_code_object_id_1.hsaco", obj)
	put("4[2]_1_code_object_id_2.out", []byte("not an ELF file"))
	put("5_1_code_object_id_1.hsaco", []byte("another process"))
	if got := CaptureTarget(trace); got != "gfx942" {
		t.Errorf("gfx942 object: %q", got)
	}
	if got := CaptureTarget(put("other.att", []byte("x"))); got != "" {
		t.Errorf("a name not rocprofv3's: %q", got)
	}
	mixed := append([]byte{}, obj...)
	mixed[48] = 0x4f // EF_AMDGPU_MACH gfx950
	put("4[2]_1_code_object_id_3.co", mixed)
	if got := CaptureTarget(trace); got != "" {
		t.Errorf("two generations: %q", got)
	}
}
