package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/attkit/attkit/internal/wire"
)

// pprofInput writes an index whose rows point at lines of a real source
// file, and a stream in which the instruction at line 4 of the source
// (s_waitcnt, PC 1:0x108) is by far the hottest.
func pprofInput(t *testing.T) (dir, idx, stream string) {
	dir = t.TempDir()
	src := filepath.Join(dir, "k.cl")
	os.WriteFile(src, []byte("kernel void k(global int *p) {\n  int s = 0;\n  for (int i = 0; i < 10; i++)\n    s += p[i];\n  p[0] = s;\n}\n"), 0o644)
	rows := []wire.Row{
		{Kind: wire.RowFunction, CodeObj: 1, Vaddr: 0x100, Text: "; _k", Source: "k", Line: 1},
		{CodeObj: 1, Vaddr: 0x100, Text: "s_load_dword s2, s[0:1], 0x0", Source: src + ":3", Line: 2},
		{CodeObj: 1, Vaddr: 0x104, Text: "global_load_dword v1, v0, s[0:1]", Source: src + ":4", Line: 3},
		{CodeObj: 1, Vaddr: 0x108, Text: "s_waitcnt vmcnt(0)", Source: src + ":4 -> " + src + ":1", Line: 4},
		{CodeObj: 1, Vaddr: 0x10c, Text: "v_add_u32_e32 v2, v2, v1", Source: src + ":4", Line: 5},
		{CodeObj: 1, Vaddr: 0x110, Text: "global_store_dword v0, v2, s[0:1]", Source: src + ":5", Line: 6},
		{CodeObj: 1, Vaddr: 0x114, Text: "s_endpgm", Source: src + ":?", Line: 7},
	}
	idx = writeIndex(t, filepath.Join(dir, "k.idx"), &wire.Index{Rows: rows})
	var waves []wire.Wave
	for w := range 4 {
		wv := wire.Wave{BeginTime: int64(w * 1000)}
		t0 := wv.BeginTime
		add := func(a uint64, stall uint32, dur int32) {
			wv.Instructions = append(wv.Instructions, inst(pc(1, a), t0, stall, dur))
			t0 += int64(max(int32(stall), dur)) + 1
		}
		add(0x100, 0, 4)
		for range 10 {
			add(0x104, 0, 8)
			add(0x108, 300, 300)
			add(0x10c, 0, 4)
		}
		add(0x110, 2, 8)
		add(0x114, 0, 1)
		waves = append(waves, wv)
	}
	stream = writeStream(t, filepath.Join(dir, "k.rec"), part{run: 1, waves: waves})
	return dir, idx, stream
}

func TestPprofProfile(t *testing.T) {
	dir, idx, s := pprofInput(t)
	out := filepath.Join(dir, "k.pb.gz")
	if r := runTool(t, nil, "--index", idx, "--format", "pprof", "-o", out, s); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.SampleType) != 4 || p.SampleType[0].Type != "hits" || p.SampleType[1].Type != "latency" ||
		p.SampleType[2].Type != "stall" || p.SampleType[3].Type != "idle" || p.SampleType[3].Unit != "cycles" {
		t.Errorf("sample types %v", p.SampleType)
	}
	if len(p.Sample) != 6 || len(p.Location) != 6 {
		t.Fatalf("%d samples, %d locations; want one per hit PC (6)", len(p.Sample), len(p.Location))
	}
	for _, smp := range p.Sample {
		l := smp.Location[0]
		if l.Address != 0x108 {
			continue
		}
		ln := l.Line[0]
		if ln.Function.Name != "s_waitcnt vmcnt(0)" || ln.Line != 4 || ln.Function.Filename != filepath.Join(dir, "k.cl") {
			t.Errorf("waitcnt location %+v %+v", ln, ln.Function)
		}
		if got := smp.Value; got[0] != 40 || got[1] != 40*300 || got[2] != 40*300 {
			t.Errorf("waitcnt values %v", got)
		}
		return
	}
	t.Error("no sample at 0x108")
}

// TestGoToolPprof runs go tool pprof -top and -list on the profile: the
// hottest instruction leads -top, and -list shows its source line with the
// cycles.
func TestGoToolPprof(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH: cannot run go tool pprof")
	}
	dir, idx, s := pprofInput(t)
	out := filepath.Join(dir, "k.pb.gz")
	if r := runTool(t, nil, "--index", idx, "--format", "pprof", "-o", out, s); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	pprof := func(args ...string) string {
		cmd := exec.Command(goBin, append([]string{"tool", "pprof"}, args...)...)
		cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+dir)
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		if err := cmd.Run(); err != nil {
			t.Fatalf("go tool pprof %v: %v\n%s%s", args, err, so.String(), se.String())
		}
		return so.String()
	}
	top := pprof("-top", out)
	t.Log(top)
	var first string
	lines := strings.Split(top, "\n")
	for i, l := range lines {
		if strings.Contains(l, "flat%") && i+1 < len(lines) {
			first = lines[i+1]
			break
		}
	}
	// 40 hits x 300 cycles of the 14.6k total latency.
	if !strings.Contains(first, "s_waitcnt vmcnt(0)") || !strings.Contains(first, "12000") {
		t.Errorf("-top: first row %q, want s_waitcnt vmcnt(0) with 12000 cycles\n%s", first, top)
	}
	if !strings.Contains(top, "Type: latency") {
		t.Errorf("-top: default sample type is not latency\n%s", top)
	}
	list := pprof("-list", "s_waitcnt", out)
	t.Log(list)
	found := false
	for _, l := range strings.Split(list, "\n") {
		f := strings.Fields(l)
		// "   12000    12000      4:    s += p[i];"
		if len(f) >= 4 && f[0] == "12000" && f[2] == "4:" && strings.Contains(l, "s += p[i];") {
			found = true
		}
	}
	if !found {
		t.Errorf("-list s_waitcnt does not show 12000 cycles at source line 4:\n%s", list)
	}
	hits := pprof("-sample_index=hits", "-top", out)
	if !strings.Contains(hits, "Type: hits") {
		t.Errorf("-sample_index=hits:\n%s", hits)
	}
}

func TestSourceLine(t *testing.T) {
	for in, want := range map[string]struct {
		file string
		line int64
	}{
		"/a/k.cl:3":             {"/a/k.cl", 3},
		"/a/k.cl:3 -> /a/b.h:9": {"/a/k.cl", 3},
		"k.cl:?":                {"k.cl", 0},
		"":                      {"", 0},
		"noline":                {"noline", 0},
		"c:/x/k.cl:12":          {"c:/x/k.cl", 12},
	} {
		f, l := sourceLine(in)
		if f != want.file || l != want.line {
			t.Errorf("sourceLine(%q) = %q, %d; want %q, %d", in, f, l, want.file, want.line)
		}
	}
}
