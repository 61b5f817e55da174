// Package archtest builds and runs the architecture tests that
// att-stats, att-rcv and att-timeline share: record streams of one trace
// (msgpack and the JSON projection) and indexes of another architecture
// (an index stream, and a code.json whose "hsaco" list names a code
// object). Out flow paths in a test's temporary folder and the exit code
// each tool must give; Check runs them through one tool.
package archtest

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

// A Case is a record stream and an index the tool reads together.
type Case struct {
	Name   string
	Stream string // path of the record stream
	Index  string // path of the index
	Code   int    // the exit code wanted without --any-arch
	// Names are what the error message must name.
	Names []string
}

// SampleObject is the path of the bundled sample's code object (gfx942).
func SampleObject() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "sample", "31337_1_code_object_id_1.hsaco")
}

// Cases writes the inputs into dir: gfx11 records and gfx942 records with
// a gfx942 index (3, 0), records of a trace its capture names gfx950 with
// that index (3), gfx11 records as JSON lines (3), gfx11 records with a
// code.json naming the gfx942 sample object (3) and with a code.json that
// names none (0: nothing to check).
func Cases(t testing.TB, dir string) []Case {
	t.Helper()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stream := func(name string, gfxip int, target string) string {
		var buf bytes.Buffer
		w := wire.NewWriter(&buf)
		h := wire.Header{Producer: "archtest", Backend: "native",
			Trace: wire.Trace{Path: name + ".att", SE: 0, Run: 1, GFXIP: gfxip, Target: target}}
		if err := w.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteBatch(&wire.Batch{Type: wire.TypeGFXIP, GFXIP: uint64(gfxip)}); err != nil {
			t.Fatal(err)
		}
		wave := wire.Wave{BeginTime: 10, EndTime: 30, Instructions: []wire.Instruction{
			{Category: 1, Duration: 4, Time: 12, PC: wire.PC{Address: 0x1000, CodeObjectID: 1}}}}
		if err := w.WriteBatch(&wire.Batch{Type: wire.TypeWave, Waves: []wire.Wave{wave}}); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		return write(name+".rec", buf.Bytes())
	}
	var buf bytes.Buffer
	ix := &wire.Index{Objects: []wire.CodeObject{{ID: 1, Path: "k.hsaco", Target: "gfx942"}},
		Rows: []wire.Row{{CodeObj: 1, Vaddr: 0x1000, Size: 4, Text: "s_endpgm", Line: 1}}}
	if err := wire.WriteIndex(&buf, ix); err != nil {
		t.Fatal(err)
	}
	index := write("gfx942.idx", buf.Bytes())
	codeJSON := func(name, hsaco string) string {
		cj := &wire.Index{Rows: ix.Rows}
		if hsaco != "" {
			cj.Doc.Hsaco = []string{hsaco}
		}
		return write(name, cj.CodeJSON())
	}
	withObj := codeJSON("with-object.json", SampleObject())
	without := codeJSON("without-object.json", "")
	gfx11 := stream("gfx11", 11, "")
	json := write("gfx11.jsonl", []byte(`{"gfxip":11,"run":1,"se":0,"type":"gfxip"}`+"\n"))
	return []Case{
		{"gfx11 records, gfx942 index", gfx11, index, 3, []string{"gfx11", "gfx942"}},
		{"gfx942 records, gfx942 index", stream("gfx942", 9, "gfx942"), index, 0, nil},
		{"gfx9 records, gfx942 index", stream("gfx9", 9, ""), index, 0, nil},
		{"gfx950 records, gfx942 index", stream("gfx950", 9, "gfx950"), index, 3, []string{"gfx950 (MI350)", "gfx942 (MI300)"}},
		{"gfx11 JSON lines, gfx942 index", json, index, 3, []string{"gfx11", "gfx942"}},
		{"gfx11 records, code.json of a gfx942 object", gfx11, withObj, 3, []string{"gfx11", "gfx942"}},
		{"gfx11 records, code.json naming no object", gfx11, without, 0, nil},
	}
}

// Check runs every case of Cases through one tool, without and with
// --any-arch. out gives the output arguments of run n (each run its own
// output; nil for a tool that writes to stdout), run runs the tool on its
// arguments and returns its exit code and standard error. Without
// --any-arch the exit code must be the case's and the message must name
// each of its Names; with it, 0.
func Check(t *testing.T, out func(n int) []string, run func(args []string) (code int, stderr string)) {
	t.Helper()
	dir := t.TempDir()
	n := 0
	for _, c := range Cases(t, dir) {
		for _, any := range []bool{false, true} {
			args := append(out(n), "--index", c.Index, c.Stream)
			n++
			want := c.Code
			if any {
				args, want = append([]string{"--any-arch"}, args...), 0
			}
			code, errs := run(args)
			if code != want {
				t.Errorf("%s (--any-arch %v): exit %d, want %d; stderr %q", c.Name, any, code, want, errs)
				continue
			}
			for _, name := range c.Names {
				if !any && !strings.Contains(errs, name) {
					t.Errorf("%s: stderr %q does not name %s", c.Name, errs, name)
				}
			}
		}
	}
}
