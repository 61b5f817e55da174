package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

// exposedOf reads the exposed cycles per address from --format top -n 0.
func exposedOf(t *testing.T, idx, stream string) map[string]int64 {
	r := runTool(t, nil, "--index", idx, "--format", "top", "-n", "0", stream)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	out := map[string]int64{}
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n")[1:] {
		f := strings.Fields(l)
		v, _ := strconv.ParseInt(f[1], 10, 64)
		out[f[6]] = v
	}
	return out
}

// TestDiffStreams: two record streams of one kernel, the waitcnt at 0x108
// stalling 300 cycles a time before and 100 after.
func TestDiffStreams(t *testing.T) {
	_, idx, before := pprofInput(t, 300)
	_, _, after := pprofInput(t, 100)
	r := runTool(t, nil, "--index", idx, "--diff", before, after)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	t.Log(r.stdout)
	eb, ea := exposedOf(t, idx, before), exposedOf(t, idx, after)
	var wait string
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.Contains(l, "0x0000000108  s_waitcnt") {
			wait = l
		}
	}
	f := strings.Fields(wait)
	// 40 waitcnts, 200 cycles fewer each.
	if len(f) < 7 || f[0] != "0" || f[1] != "-8000" || f[2] != "-8000" || f[5] != "1" {
		t.Fatalf("waitcnt row %q", wait)
	}
	want := ea["0x0000000108"] - eb["0x0000000108"]
	if got, _ := strconv.ParseInt(f[4], 10, 64); got != want || want == 0 {
		t.Errorf("exposed change %s, want %d (from --format top)", f[4], want)
	}
	// Per line: k.cl:5 holds the load, the waitcnt and the add.
	if !regexp.MustCompile(`(?m)^ *0 +-8000 +-8000 .*  .*/k\.cl:5$`).MatchString(r.stdout) {
		t.Errorf("no k.cl:5 line with -8000 cycles:\n%s", r.stdout)
	}
	// Kernel k2 did not change: no row.
	if strings.Contains(r.stdout, "0x0000000200") {
		t.Errorf("unchanged PC listed:\n%s", r.stdout)
	}
	// One file twice is a usage error (as for every input list); a copy
	// of it against it changed nothing.
	if r := runTool(t, nil, "--index", idx, "--diff", before, before); r.code != 2 {
		t.Errorf("same file twice: exit %d, want 2", r.code)
	}
	cp := filepath.Join(t.TempDir(), "copy.rec")
	data, _ := os.ReadFile(before)
	os.WriteFile(cp, data, 0o644)
	if r := runTool(t, nil, "--index", idx, "--diff", before, cp); r.code != 0 || !strings.Contains(r.stdout, ": 0 of 11 PCs changed") {
		t.Errorf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Usage.
	for _, args := range [][]string{{"--diff", before}, {"--diff", before, after, cp}, {"--diff", "--format", "csv", before, after}} {
		if r := runTool(t, nil, args...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2", args, r.code)
		}
	}
}

// TestDiffMovedCode: the after capture's kernel was loaded as another code
// object at other addresses; its PCs are matched by source line and
// instruction text. Before is a stats CSV, after a code.json.
func TestDiffMovedCode(t *testing.T) {
	dir, idx, before := pprofInput(t, 300)
	_, _, after := pprofInput(t, 100)
	// Move the after side: code object 2, addresses + 0x1000.
	ix, err := wire.ReadIndexFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ix.Rows {
		ix.Rows[i].CodeObj, ix.Rows[i].Vaddr = 2, ix.Rows[i].Vaddr+0x1000
	}
	idx2 := writeIndex(t, filepath.Join(dir, "moved.idx"), ix)
	f, _ := os.Open(after)
	rd := wire.NewReader(f, after)
	var b bytes.Buffer
	w := wire.NewWriter(&b)
	for rd.Scan() {
		if rd.Kind() == wire.KindHeader {
			w.WriteHeader(rd.Header())
			continue
		}
		bt := rd.Batch()
		for i := range bt.Waves {
			for j := range bt.Waves[i].Instructions {
				in := &bt.Waves[i].Instructions[j]
				in.PC = pc(2, in.PC.Address+0x1000)
			}
		}
		w.WriteBatch(bt)
	}
	f.Close()
	w.Flush()
	moved := filepath.Join(dir, "moved.rec")
	os.WriteFile(moved, b.Bytes(), 0o644)

	csvPath, jsonPath := filepath.Join(dir, "before.csv"), filepath.Join(dir, "after.json")
	if r := runTool(t, nil, "--index", idx, "-o", csvPath, before); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := runTool(t, nil, "--index", idx2, "--format", "code.json", "-o", jsonPath, moved); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r := runTool(t, nil, "--diff", csvPath, jsonPath)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	t.Log(r.stdout)
	if !strings.Contains(r.stdout, ": 1 of 11 PCs changed (by latency)") {
		t.Errorf("want one changed PC of 11 matched:\n%s", r.stdout)
	}
	if !regexp.MustCompile(`(?m)^ *0 +-8000 +-8000 +0 +- +2 0x0000001108  s_waitcnt vmcnt\(0\) / .*k\.cl:5 \(before: 1 0x0000000108\)$`).MatchString(r.stdout) {
		t.Errorf("the waitcnt is not matched across code objects:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, "only") {
		t.Errorf("unmatched PCs:\n%s", r.stdout)
	}
}
