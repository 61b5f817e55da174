package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

// selectStream: two kernels (entries 0x100 and 0x200 of code object 1,
// the index names them), their dispatches on queues (1, 0) and (1, 1),
// occupancy, and 60 waves alternately of each, of growing durations but
// for wave 7 (the slowest) and wave 12 (the fastest).
func selectStream(t *testing.T) (idx, stream string) {
	dir := t.TempDir()
	ix := &wire.Index{
		Rows:    []wire.Row{{CodeObj: 1, Vaddr: 0x100, Size: 4, Text: "s_nop 0", Line: 1}, {CodeObj: 1, Vaddr: 0x200, Size: 4, Text: "s_endpgm", Line: 2}},
		Kernels: []wire.Kernel{{Address: 0x100, CodeObj: 1, Name: "first"}, {Address: 0x200, CodeObj: 1, Name: "second"}},
	}
	var b bytes.Buffer
	if err := wire.WriteIndex(&b, ix); err != nil {
		t.Fatal(err)
	}
	idx = filepath.Join(dir, "k.idx")
	if err := os.WriteFile(idx, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	batches := []wire.Batch{{Type: wire.TypeDispatch, Dispatches: []wire.Dispatch{
		{Time: 1, MEID: 1, EntryPoint: wire.PC{Address: 0x100, CodeObjectID: 1}},
		{Time: 2, MEID: 1, PipeID: 1, EntryPoint: wire.PC{Address: 0x200, CodeObjectID: 1}}}}}
	for i := range 60 {
		begin := int64(10 + i*100)
		dur := int64(20 + i)
		switch i {
		case 7:
			dur = 500
		case 12:
			dur = 5
		}
		w := wire.Wave{CU: uint8(i % 3), SIMD: uint8(i % 4), WaveID: uint8(i % 5), Dispatcher: 0x10 | uint8(i%2), BeginTime: begin, EndTime: begin + dur,
			Instructions: []wire.Instruction{{Time: begin, Duration: 2, PC: wire.PC{Address: 0x100 + 0x100*uint64(i%2), CodeObjectID: 1}}}}
		batches = append(batches,
			wire.Batch{Type: wire.TypeOccupancy, Occupancy: []wire.Occupancy{{CU: w.CU, Time: uint64(begin), Start: true}}},
			wire.Batch{Type: wire.TypeWave, Waves: []wire.Wave{w}})
	}
	b.Reset()
	if err := wire.WriteStream(&b, &wire.Header{Producer: "test", Trace: wire.Trace{SE: 1, Run: 1, GFXIP: 9}}, batches...); err != nil {
		t.Fatal(err)
	}
	stream = filepath.Join(dir, "s.rec")
	if err := os.WriteFile(stream, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return idx, stream
}

// split returns the IDs of the wave slices and the other events but
// metadata, encoded and sorted.
func split(t *testing.T, out string) (waves []string, others []string) {
	for _, e := range parse(t, out).TraceEvents {
		if e.Cat == "wave" {
			waves = append(waves, fmt.Sprint(e.Args["id"]))
			continue
		}
		if e.Cat == "instruction" || e.Ph == "M" {
			continue // instructions of waves; a wave slot's track is named where a wave shows
		}
		j, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		others = append(others, string(j))
	}
	sort.Strings(others)
	return waves, others
}

func TestSelect(t *testing.T) {
	idx, s := selectStream(t)
	data, err := os.ReadFile(s)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd(t, nil, "--index", idx, s)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	all, others := split(t, out)
	if len(all) != 60 || !strings.Contains(out, `"dispatch second","cat":"dispatch","ph":"i","ts":2,"pid":2,"tid":2097152,"s":"t","args":{"entry_point":"1:0x200","dispatch":1,`) {
		t.Fatalf("%d waves, or no dispatch 1 in\n%s", len(all), out)
	}
	id := func(i int) string {
		return fmt.Sprintf("se1.cu%d.simd%d.slot%d@%d", i%3, i%4, i%5, 10+i*100)
	}
	every := func(from int) []string {
		var s []string
		for i := from; i < 60; i += 2 {
			s = append(s, id(i))
		}
		return s
	}
	for _, c := range []struct {
		args  []string
		stdin bool
		want  []string
	}{
		{[]string{"--kernel", "s*"}, false, every(1)},
		{[]string{"--dispatch", "0"}, false, every(0)},
		{[]string{"--wave", "slowest"}, false, []string{id(7)}},
		{[]string{"--wave", "slowest", "-"}, true, []string{id(7)}},
		{[]string{"--wave", "fastest", "--kernel", "first"}, false, []string{id(12)}},
		{[]string{"--wave", "fastest", "--kernel", "second", "-"}, true, []string{id(1)}},
		{[]string{"--wave", id(33)}, false, []string{id(33)}},
		{[]string{"--wave", "slowest", "--jq", `.type != "wave" or .begin_time > 1000`}, false, []string{id(59)}},
	} {
		args := append([]string{"--index", idx}, c.args...)
		var stdin *bytes.Reader
		if c.stdin {
			stdin = bytes.NewReader(data)
		} else {
			args = append(args, s)
			stdin = bytes.NewReader(nil)
		}
		code, out, errs := runCmd(t, stdin, args...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", c.args, code, errs)
			continue
		}
		waves, o := split(t, out)
		if strings.Join(waves, " ") != strings.Join(c.want, " ") {
			t.Errorf("%v: waves %v, want %v", c.args, waves, c.want)
		}
		if strings.Join(o, "\n") != strings.Join(others, "\n") {
			for i := range min(len(o), len(others)) {
				if o[i] != others[i] {
					t.Logf("%s\n%s", o[i], others[i])
					break
				}
			}
			t.Errorf("%v: the other events changed", c.args)
		}
	}
	code, _, errs = runCmd(t, nil, "--index", idx, "--kernel", "third", "-o", filepath.Join(t.TempDir(), "x.json"), s)
	if code != 1 || !strings.Contains(errs, `--kernel "third" matched no wave; the input's 60 waves belong to kernels first (30 waves), second (30 waves)`) {
		t.Errorf("--kernel third: exit %d %q", code, errs)
	}
	if code, _, errs = runCmd(t, nil, "--kernel", "[", s); code != 2 {
		t.Errorf("bad glob: exit %d %q", code, errs)
	}
}
