package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

// TestBy: --by pc is the stats CSV byte for byte; --by line, function and
// kernel write their roll-ups (internal/rollup tests the sums), as CSV or
// JSON lines; other formats and --diff are usage errors.
func TestBy(t *testing.T) {
	dir := t.TempDir()
	idx := writeIndex(t, filepath.Join(dir, "k.idx"), exampleIndex())
	s := writeStream(t, filepath.Join(dir, "a.rec"), part{run: 1, waves: []wire.Wave{workedWave(0)}})
	plain := runTool(t, nil, "--index", idx, s)
	byPC := runTool(t, nil, "--index", idx, "--by", "pc", s)
	if plain.code != 0 || byPC.code != 0 || plain.stdout != byPC.stdout || !strings.HasPrefix(plain.stdout, "CodeObj,Vaddr,Instruction,") {
		t.Fatalf("--by pc differs from the stats CSV: %+v %+v", plain, byPC)
	}
	// §4.1's worked example: lines 3 and 4 of k.cl, then the rest without
	// source (the six other rows and the unresolved PC the wave asked for:
	// hits of 4876 and 4880, latency 20 + 10, stall 10, idle 8, of which
	// the other pipes hid 4).
	r := runTool(t, nil, "--index", idx, "--by", "line", s)
	want := "Source,Hitcount,Latency,Stall,Idle,HiddenIdle,HiddenStall,HiddenIssue,Hidden,Exposed,PCs\r\n" +
		"/src/k.cl:3,1,8,0,0,0,0,0,0,8,1\r\n" +
		"/src/k.cl:4,1,6,2,2,0,0,0,0,8,1\r\n" +
		",2,30,10,8,4,0,0,4,34,7\r\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("--by line: exit %d %s\n%q\nwant\n%q", r.code, r.stderr, r.stdout, want)
	}
	r = runTool(t, nil, "--index", idx, "--by", "kernel", "--format", "json", s)
	if r.code != 0 || r.stdout != `{"codeobj":1,"kernel":"mykernel","hitcount":4,"latency":44,"stall":12,"idle":10,"hidden_idle":4,"hidden_stall":0,"hidden_issue":0,"hidden":4,"exposed":50,"pcs":8}`+"\n"+
		`{"codeobj":0,"kernel":"","hitcount":0,"latency":0,"stall":0,"idle":0,"hidden_idle":0,"hidden_stall":0,"hidden_issue":0,"hidden":0,"exposed":0,"pcs":1}`+"\n" {
		t.Errorf("--by kernel --format json: exit %d %s %s", r.code, r.stderr, r.stdout)
	}
	for _, args := range [][]string{{"--by", "line", "--format", "pprof"}, {"--by", "kernel", "--format", "top"},
		{"--by", "function", "--diff", s, s}, {"--by", "file"}} {
		r := runTool(t, nil, append(append([]string{"--index", idx}, args...), s)...)
		if r.code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, r.code, r.stderr)
		}
	}
}
