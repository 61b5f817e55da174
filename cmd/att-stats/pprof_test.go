package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/attkit/attkit/internal/wire"
)

// pprofInput writes an index of two kernels whose rows point at lines of
// real source files, and a stream in which the instruction at line 5 of
// k.cl (s_waitcnt, PC 1:0x108, in kernel k) is by far the hottest; kernel
// k2 calls an inlined helper of h.h. waitStall is the waitcnt's stall.
func pprofInput(t *testing.T, waitStall uint32) (dir, idx, stream string) {
	dir = t.TempDir()
	src, hdr := filepath.Join(dir, "k.cl"), filepath.Join(dir, "h.h")
	os.WriteFile(src, []byte("#include \"h.h\"\nkernel void k(global int *p) {\n  int s = 0;\n  for (int i = 0; i < 10; i++)\n    s += p[i];\n  p[0] = s;\n}\nkernel void k2(global int *p) {\n  p[1] = twice(p[0]);\n}\n"), 0o644)
	os.WriteFile(hdr, []byte("static int twice(int x) {\n  return x + x;\n}\n"), 0o644)
	rows := []wire.Row{
		{Kind: wire.RowFunction, CodeObj: 1, Vaddr: 0x100, Text: "; _k", Source: "k", Line: 1},
		{CodeObj: 1, Vaddr: 0x100, Text: "s_load_dword s2, s[0:1], 0x0", Source: src + ":3", Line: 2},
		{CodeObj: 1, Vaddr: 0x104, Text: "global_load_dword v1, v0, s[0:1]", Source: src + ":5", Line: 3},
		{CodeObj: 1, Vaddr: 0x108, Text: "s_waitcnt vmcnt(0)", Source: src + ":5", Line: 4},
		{CodeObj: 1, Vaddr: 0x10c, Text: "v_add_u32_e32 v2, v2, v1", Source: src + ":5", Line: 5},
		{CodeObj: 1, Vaddr: 0x110, Text: "global_store_dword v0, v2, s[0:1]", Source: src + ":6", Line: 6},
		{CodeObj: 1, Vaddr: 0x114, Text: "s_endpgm", Source: src + ":?", Line: 7},
		{Kind: wire.RowFunction, CodeObj: 1, Vaddr: 0x200, Text: "; _k2", Source: "k2", Line: 8},
		{CodeObj: 1, Vaddr: 0x200, Text: "global_load_dword v1, v0, s[0:1]", Source: src + ":9", Line: 9},
		{CodeObj: 1, Vaddr: 0x204, Text: "s_waitcnt vmcnt(0)", Source: src + ":9", Line: 10},
		{CodeObj: 1, Vaddr: 0x208, Text: "v_add_u32_e32 v1, v1, v1", Source: hdr + ":2 -> " + src + ":9", Line: 11},
		{CodeObj: 1, Vaddr: 0x20c, Text: "global_store_dword v0, v1, s[0:1] offset:4", Source: src + ":9", Line: 12},
		{CodeObj: 1, Vaddr: 0x210, Text: "s_endpgm", Source: src + ":10", Line: 13},
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
			add(0x108, waitStall, int32(waitStall))
			add(0x10c, 0, 4)
		}
		add(0x110, 2, 8)
		add(0x114, 0, 1)
		waves = append(waves, wv)
	}
	for w := range 2 {
		wv := wire.Wave{SIMD: 1, BeginTime: int64(w * 500)}
		t0 := wv.BeginTime
		for _, a := range []uint64{0x200, 0x204, 0x208, 0x208, 0x20c, 0x210} {
			wv.Instructions = append(wv.Instructions, inst(pc(1, a), t0, 0, 20))
			t0 += 21
		}
		waves = append(waves, wv)
	}
	stream = writeStream(t, filepath.Join(dir, "k.rec"), part{run: 1, waves: waves})
	return dir, idx, stream
}

func readProfile(t *testing.T, path string) *profile.Profile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPprofProfile(t *testing.T) {
	dir, idx, s := pprofInput(t, 300)
	out := filepath.Join(dir, "k.pb.gz")
	if r := runTool(t, nil, "--index", idx, "--format", "pprof", "-o", out, s); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	p := readProfile(t, out)
	var types []string
	for _, st := range p.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	if got := strings.Join(types, " "); got != "hits/count latency/cycles stall/cycles idle/cycles exposed/cycles hidden/cycles" {
		t.Errorf("sample types %s", got)
	}
	if len(p.Sample) != 11 || len(p.Location) != 11 {
		t.Fatalf("%d samples, %d locations; want one per hit PC (11)", len(p.Sample), len(p.Location))
	}
	// The hidden split of the profile is the one of --format hidden.csv.
	r := runTool(t, nil, "--index", idx, "--format", "hidden.csv", s)
	hid := map[uint64][3]int64{}
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\r\n")[1:] {
		f := strings.Split(l, ",")
		a, _ := strconv.ParseUint(f[1], 10, 64)
		var v [3]int64
		for k := range v {
			v[k], _ = strconv.ParseInt(f[4+k], 10, 64)
		}
		hid[a] = v
	}
	if len(hid) == 0 {
		t.Fatalf("nothing hidden:\n%s", r.stdout)
	}
	found := false
	for _, smp := range p.Sample {
		l := smp.Location[0]
		v := smp.Value
		h := hid[l.Address]
		if want := h[1] + h[2] + min(h[0], v[3]); v[5] != want || v[4] != v[1]+v[3]-want {
			t.Errorf("PC %#x: exposed %d hidden %d, want hidden %d of %d", l.Address, v[4], v[5], want, v[1]+v[3])
		}
		if smp.NumLabel["vaddr"][0] != int64(l.Address) || smp.NumLabel["codeobj"][0] != 1 {
			t.Errorf("labels %v at %#x", smp.NumLabel, l.Address)
		}
		switch l.Address {
		case 0x108:
			found = true
			if len(l.Line) != 1 || l.Line[0].Function.Name != "k" || l.Line[0].Line != 5 || l.Line[0].Function.Filename != filepath.Join(dir, "k.cl") ||
				l.Line[0].Function.StartLine != 3 {
				t.Errorf("waitcnt location %+v %+v", l.Line, l.Line[0].Function)
			}
			if smp.Label["instruction"][0] != "s_waitcnt vmcnt(0)" {
				t.Errorf("labels %v", smp.Label)
			}
			if v[0] != 40 || v[1] != 40*300 || v[2] != 40*300 {
				t.Errorf("waitcnt values %v", v)
			}
		case 0x208:
			// Inlined: the helper's line inside kernel k2's call line.
			if len(l.Line) != 2 || l.Line[0].Function.Name != "(inlined) h.h" || l.Line[0].Line != 2 ||
				l.Line[1].Function.Name != "k2" || l.Line[1].Line != 9 {
				t.Errorf("inlined location %+v", l.Line)
			}
		}
	}
	if !found {
		t.Error("no sample at 0x108")
	}
}

// gotool runs go tool pprof in dir: the pprof binary that go tool -n
// names, without starting the go command each time.
func gotool(t *testing.T, dir string) func(args ...string) string {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH: cannot run go tool pprof")
	}
	out, err := exec.Command(goBin, "tool", "-n", "pprof").Output()
	if err != nil {
		t.Fatalf("go tool -n pprof: %v", err)
	}
	bin := strings.TrimSpace(string(out))
	return func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+dir)
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		if err := cmd.Run(); err != nil {
			t.Fatalf("go tool pprof %v: %v\n%s%s", args, err, so.String(), se.String())
		}
		return so.String()
	}
}

// rowsAfter returns the lines after the header line holding "flat%".
func rowsAfter(out string) []string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.Contains(l, "flat%") {
			return lines[i+1:]
		}
	}
	return nil
}

// TestGoToolPprof runs the go tool pprof views a user asks for on the
// profile: -top ranks kernels, -top -addresses instructions, -list KERNEL
// shows its source lines with the cycles, -peek shows an inlined helper
// under its kernel, -traces the instruction text, and -sample_index picks
// exposed, hidden or hits.
func TestGoToolPprof(t *testing.T) {
	dir, idx, s := pprofInput(t, 300)
	pprof := gotool(t, dir)
	out := filepath.Join(dir, "k.pb.gz")
	if r := runTool(t, nil, "--index", idx, "--format", "pprof", "-o", out, s); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	// Kernel k: 4 waves of 4 + 10*(8+300+4) + 8 + 1 cycles = 12532.
	top := pprof("-top", out)
	rows := rowsAfter(top)
	if len(rows) < 3 || !strings.HasSuffix(rows[0], " k") || !strings.HasPrefix(strings.TrimSpace(rows[0]), "12532cycles") {
		t.Errorf("-top: first row is not kernel k with 12532 cycles\n%s", top)
	}
	if !strings.Contains(top, " k2\n") || !strings.Contains(top, "(inlined) h.h") || !strings.Contains(top, "Type: latency") {
		t.Errorf("-top: no k2, inlined helper or default type latency\n%s", top)
	}
	addrs := pprof("-top", "-addresses", out)
	rows = rowsAfter(addrs)
	if len(rows) == 0 || !strings.Contains(rows[0], "0000000000000108 k ") || !strings.Contains(rows[0], "k.cl:5") ||
		!strings.HasPrefix(strings.TrimSpace(rows[0]), "12000cycles") {
		t.Errorf("-top -addresses: first row is not PC 0x108 of k at k.cl:5 with 12000 cycles\n%s", addrs)
	}
	list := pprof("-list", "^k$", out)
	found := false
	for _, l := range strings.Split(list, "\n") {
		f := strings.Fields(l)
		// "   12480    12480      5:    s += p[i];" (load, waitcnt, add)
		if len(f) >= 4 && f[0] == "12480" && f[2] == "5:" && strings.Contains(l, "s += p[i];") {
			found = true
		}
	}
	if !found || !strings.Contains(list, "ROUTINE ======================== k in "+filepath.Join(dir, "k.cl")) {
		t.Errorf("-list ^k$ does not show kernel k with 12480 cycles at source line 5:\n%s", list)
	}
	list2 := pprof("-list", "^k2$", out)
	found = false
	for _, l := range strings.Split(list2, "\n") {
		f := strings.Fields(l)
		// k2's line 9: 2 waves x 3 instructions x 20 cycles flat, with
		// the inlined helper (2 x 2 x 20) in cum.
		if len(f) >= 4 && f[0] == "120" && f[1] == "200" && f[2] == "9:" && strings.Contains(l, "twice(p[0])") {
			found = true
		}
	}
	if !found {
		t.Errorf("-list ^k2$ does not show 120 flat, 200 cum cycles at line 9:\n%s", list2)
	}
	peek := pprof("-peek", "^k2$", out)
	if !regexp.MustCompile(`(?m)\|\s+k2\n.*80cycles.*\|\s+\(inlined\) h\.h`).MatchString(peek) {
		t.Errorf("-peek ^k2$ does not show the inlined helper's 80 cycles under k2:\n%s", peek)
	}
	traces := pprof("-traces", out)
	if !strings.Contains(traces, "instruction:  s_waitcnt vmcnt(0)") || !strings.Contains(traces, "vaddr:  264") {
		t.Errorf("-traces lacks the instruction label:\n%s", traces)
	}
	for _, idx := range []string{"hits", "exposed", "hidden"} {
		if got := pprof("-sample_index="+idx, "-top", out); !strings.Contains(got, "Type: "+idx) {
			t.Errorf("-sample_index=%s:\n%s", idx, got)
		}
	}
}

// TestPprofDiff: go tool pprof -diff_base compares two captures per
// kernel and per line: the waitcnt of kernel k stalls 300 cycles before
// and 100 after, k2 is unchanged.
func TestPprofDiff(t *testing.T) {
	dirA, idx, before := pprofInput(t, 300)
	pprof := gotool(t, dirA)
	_, _, after := pprofInput(t, 100)
	pa, pb := filepath.Join(dirA, "before.pb.gz"), filepath.Join(dirA, "after.pb.gz")
	for _, x := range [][2]string{{before, pa}, {after, pb}} {
		if r := runTool(t, nil, "--index", idx, "--format", "pprof", "-o", x[1], x[0]); r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
	}
	top := pprof("-top", "-diff_base="+pa, pb)
	rows := rowsAfter(top)
	// 40 waitcnts x 200 cycles fewer, all in kernel k.
	if len(rows) == 0 || !strings.HasPrefix(strings.TrimSpace(rows[0]), "-8000cycles") || !strings.HasSuffix(rows[0], " k") {
		t.Errorf("-diff_base -top: first row is not k with -8000 cycles\n%s", top)
	}
	if strings.Contains(top, " k2\n") {
		t.Errorf("-diff_base -top shows the unchanged k2\n%s", top)
	}
	list := pprof("-list", "^k$", "-diff_base="+pa, pb)
	found := false
	for _, l := range strings.Split(list, "\n") {
		if f := strings.Fields(l); len(f) >= 3 && f[0] == "-8000" && f[2] == "5:" {
			found = true
		}
	}
	if !found {
		t.Errorf("-diff_base -list ^k$ does not show -8000 at line 5:\n%s", list)
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
