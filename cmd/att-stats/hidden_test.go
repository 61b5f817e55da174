package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

// hiddenInput writes an index of two VALU instructions and a stream of
// three parts: run 1 on shader engines 0 and 1, and run 2 on shader engine
// 0. In every part, the wave of PC 0x100 (time 10, stall 4, duration 10)
// runs beside a wave of PC 0x104 that keeps the VALU busy from 0 to 14 on
// the same SIMD: python-layer §8.2's first known answer, hidden (10, 4, 0).
// Run 2 also has an IMMED at 0x108 whose issue (40 to 46) other-SIMD
// vector memory hides from 42 to 46 (a record of 0 cycles does not count).
func hiddenInput(t *testing.T) (idx, stream string) {
	dir := t.TempDir()
	idx = writeIndex(t, filepath.Join(dir, "h.idx"), &wire.Index{Rows: []wire.Row{
		{Kind: wire.RowFunction, CodeObj: 1, Vaddr: 0x100, Text: "; _k", Source: "k", Line: 1},
		{CodeObj: 1, Vaddr: 0x100, Text: "v_add_f32 v0, v1, v2", Source: "/src/k.cl:3", Line: 2},
		{CodeObj: 1, Vaddr: 0x104, Text: "v_mov_b32 v1, 0", Source: "/src/k.cl:4", Line: 3},
		{CodeObj: 1, Vaddr: 0x108, Text: "s_nop 0", Source: "/src/k.cl:5", Line: 4},
	}})
	var b bytes.Buffer
	w := wire.NewWriter(&b)
	for _, p := range []struct{ run, se int }{{1, 0}, {1, 1}, {2, 0}} {
		w.WriteHeader(&wire.Header{Producer: "test", Trace: wire.Trace{Path: "x.att", SE: p.se, Run: p.run, GFXIP: 11}})
		target := wire.Wave{Instructions: []wire.Instruction{{Category: wire.CatVALU, PC: pc(1, 0x100), Time: 10, Stall: 4, Duration: 10}}}
		if p.run == 2 {
			target.Instructions = append(target.Instructions, wire.Instruction{Category: wire.CatImmed, PC: pc(1, 0x108), Time: 40, Duration: 6})
			w.WriteBatch(&wire.Batch{Type: wire.TypeInstOtherSIMD, OtherSIMD: []wire.OtherSIMD{{Time: 42, Cycles: 10}, {Time: 20, Cycles: 0}}})
		}
		other := wire.Wave{Instructions: []wire.Instruction{{Category: wire.CatVALU, PC: pc(1, 0x104), Time: 0, Duration: 14}}}
		w.WriteBatch(&wire.Batch{Type: wire.TypeWave, Waves: []wire.Wave{target, other}})
	}
	w.Flush()
	stream = filepath.Join(dir, "h.rec")
	os.WriteFile(stream, b.Bytes(), 0o644)
	return idx, stream
}

func TestHiddenCSV(t *testing.T) {
	idx, s := hiddenInput(t)
	head := "CodeObj,Vaddr,Instruction,Latency,HiddenIdle,HiddenStall,HiddenIssue\r\n"
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"run 1, two shader engines", []string{"--run", "1"}, head + "1,256,v_add_f32 v0,20,20,8,0\r\n"},
		{"run 2, other SIMD", []string{"--run", "2"}, head + "1,256,v_add_f32 v0,10,10,4,0\r\n1,264,s_nop 0,6,0,0,4\r\n"},
		{"merged", []string{"--merge-runs"}, head + "1,256,v_add_f32 v0,30,30,12,0\r\n1,264,s_nop 0,6,0,0,4\r\n"},
		// Without the wave that hides it, nothing is hidden.
		{"jq", []string{"--run", "1", "--jq", ".instructions[0].pc.address != 260"}, head},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runTool(t, nil, append([]string{"--index", idx, "--format", "hidden.csv", s}, c.args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			// The instruction text holds a comma: quoted as in the stats CSV.
			want := strings.ReplaceAll(c.want, "v_add_f32 v0,", `"v_add_f32 v0, v1, v2",`)
			if r.stdout != want {
				t.Errorf("got\n%q\nwant\n%q", r.stdout, want)
			}
		})
	}
	// Several runs need --run or --merge-runs, as for the stats CSV.
	if r := runTool(t, nil, "--index", idx, "--format", "hidden.csv", s); r.code != 2 {
		t.Errorf("exit %d, want 2: %s", r.code, r.stderr)
	}
}

func TestTop(t *testing.T) {
	idx, s := hiddenInput(t)
	// PC 0x100: latency 20 + idle 20 (from wave begin 0 to 10, twice) =
	// 40 total; hidden 8 stall + min(20, 20) idle = 28; 12 exposed.
	// PC 0x104: 28 cycles, none hidden.
	want := "" +
		"Rank NonHidden Total Hidden Hits CodeObj Vaddr         Instruction / Source\n" +
		"   1        28    28      0    2       1 0x0000000104  v_mov_b32 v1, 0 / /src/k.cl:4\n" +
		"   2        12    40     28    2       1 0x0000000100  v_add_f32 v0, v1, v2 / /src/k.cl:3\n"
	r := runTool(t, nil, "--index", idx, "--format", "top", "--run", "1", s)
	if r.code != 0 || r.stdout != want {
		t.Errorf("exit %d, got\n%s\nwant\n%s%s", r.code, r.stdout, want, r.stderr)
	}
	r = runTool(t, nil, "--index", idx, "--format", "top", "--run", "1", "-n", "1", s)
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 2 || !strings.Contains(lines[1], "0x0000000104") {
		t.Errorf("-n 1:\n%s", r.stdout)
	}
	// Without an index: no text, so "?".
	r = runTool(t, nil, "--format", "top", "--run", "1", s)
	if !strings.Contains(r.stdout, "0x0000000100  ?\n") {
		t.Errorf("no index:\n%s", r.stdout)
	}
}
