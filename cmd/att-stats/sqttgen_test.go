package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/codeobj"
	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/sqtt"
	"github.com/attkit/attkit/internal/sqttgen"
	"github.com/attkit/attkit/internal/wire"
)

// TestGeneratedTraces: for traces the generator makes from real kernels
// (the gfx90a and gfx942 indexes of internal/sqttgen), att-stats's
// counters equal an independent recomputation over the records the
// generator says a decoder must produce; and the same holds for the
// records the native decoder actually produces from the trace bytes.
func TestGeneratedTraces(t *testing.T) {
	seeds := 6
	if testing.Short() {
		seeds = 2
	}
	for _, name := range []string{"gfx90a.index", "gfx942.index"} {
		idx := filepath.Join("..", "..", "internal", "sqttgen", "testdata", name)
		ix, err := wire.ReadIndexFile(idx)
		if err != nil {
			t.Fatal(err)
		}
		for seed := uint64(1); seed <= uint64(seeds); seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", name, seed), func(t *testing.T) {
				cfg := sqttgen.Config{Index: ix, Seed: seed, Instrument: true,
					WavesPerSIMD: 2 + int(seed%3), MaxTrips: 40, GFX9: sqttgen.GFX9{SIMDs: 1 + int(seed%4)}}
				trace, want, err := sqttgen.Generate(cfg)
				if err != nil {
					t.Fatal(err)
				}
				rc := newRecount(ix)
				waves := 0
				for i := range want {
					for j := range want[i].Waves {
						rc.wave(&want[i].Waves[j])
						waves++
					}
				}
				t.Logf("%d waves, %d PCs", waves, len(rc.counts))
				if waves == 0 {
					t.Fatal("the generator made no waves")
				}
				dir := t.TempDir()
				check := func(what string, batches []wire.Batch) {
					var b bytes.Buffer
					w := wire.NewWriter(&b)
					w.WriteHeader(&wire.Header{Producer: "test", Backend: "native", Trace: wire.Trace{Path: "g.att", Run: 1}})
					for i := range batches {
						w.WriteBatch(&batches[i])
					}
					w.Flush()
					stream := filepath.Join(dir, what+".rec")
					os.WriteFile(stream, b.Bytes(), 0o644)
					r := runTool(t, nil, "--index", idx, "--format", "json", stream)
					if r.code != 0 || r.stderr != "" {
						t.Fatalf("%s: exit %d: %s", what, r.code, r.stderr)
					}
					compareJSON(t, what, r.stdout, rc)
				}
				check("expected", want)
				var got []wire.Batch
				err = sqtt.New().Decode(context.Background(), bytes.NewReader(trace), isa.NewTable(ix),
					func(b *wire.Batch) error { got = append(got, b.Clone()); return nil })
				if err != nil {
					t.Fatalf("native decode: %v", err)
				}
				check("decoded", got)
			})
		}
	}
}

// TestGeneratedLateLoad: on generated captures whose code objects are
// announced after the first waves started, AMD's 0.1.6 library (the
// generator's Compat016 records, and the native decoder's 0.1.6 mode)
// leaves the instructions of waves that ended before the load unresolved.
// Upstream's default run then ends its stats CSV with the row of (0, 0),
// the one PC the index lacks; att-stats writes the same, and --csv-only
// (att_tool.py --formats csv) the same bytes without that row. With the
// newest decoder's late attribution nothing is unresolved, and both
// CSVs are the same.
func TestGeneratedLateLoad(t *testing.T) {
	for _, name := range []string{"gfx90a.index", "gfx942.index"} {
		idx := filepath.Join("..", "..", "internal", "sqttgen", "testdata", name)
		ix, err := wire.ReadIndexFile(idx)
		if err != nil {
			t.Fatal(err)
		}
		for seed := uint64(1); seed <= 2; seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", name, seed), func(t *testing.T) {
				cfg := sqttgen.Config{Index: ix, Seed: seed, Instrument: true, LateLoad: true, Compat016: true, MaxTrips: 40}
				trace, want, err := sqttgen.Generate(cfg)
				if err != nil {
					t.Fatal(err)
				}
				decode := func(compat bool) []wire.Batch {
					var got []wire.Batch
					d := sqtt.New()
					d.Compat = sqtt.CompatIf(compat)
					err := d.Decode(context.Background(), bytes.NewReader(trace), isa.NewTable(ix),
						func(b *wire.Batch) error { got = append(got, b.Clone()); return nil })
					if err != nil {
						t.Fatalf("native decode (0.1.6 mode %v): %v", compat, err)
					}
					return got
				}
				dir := t.TempDir()
				for _, c := range []struct {
					what       string
					batches    []wire.Batch
					unresolved bool
				}{{"expected", want, true}, {"decoded-0.1.6", decode(true), true}, {"decoded-newest", decode(false), false}} {
					unresolved := 0
					for i := range c.batches {
						for _, w := range c.batches[i].Waves {
							for _, in := range w.Instructions {
								if in.PC == (wire.PC{}) {
									unresolved++
								}
							}
						}
					}
					if (unresolved > 0) != c.unresolved {
						t.Fatalf("%s: %d unresolved instructions (want some: %v)", c.what, unresolved, c.unresolved)
					}
					var b bytes.Buffer
					w := wire.NewWriter(&b)
					w.WriteHeader(&wire.Header{Producer: "test", Backend: "native", Trace: wire.Trace{Path: "g.att", Run: 1}})
					for i := range c.batches {
						w.WriteBatch(&c.batches[i])
					}
					w.Flush()
					stream := filepath.Join(dir, c.what+".rec")
					os.WriteFile(stream, b.Bytes(), 0o644)
					full := runTool(t, nil, "--index", idx, stream)
					only := runTool(t, nil, "--index", idx, "--csv-only", stream)
					if full.code != 0 || only.code != 0 || full.stderr != "" || only.stderr != "" {
						t.Fatalf("%s: exit %d and %d (--csv-only): %s%s", c.what, full.code, only.code, full.stderr, only.stderr)
					}
					const zero = "0,0,,0,0,0,0,\r\n"
					if c.unresolved {
						if !strings.HasSuffix(full.stdout, "\r\n"+zero) || full.stdout != only.stdout+zero {
							t.Errorf("%s: the CSV is not the --csv-only one plus a last row %q:\n%s", c.what, zero, full.stdout[max(0, len(full.stdout)-300):])
						}
					} else if full.stdout != only.stdout || strings.Contains(full.stdout, "\r\n"+zero) {
						t.Errorf("%s: nothing unresolved, yet the CSVs differ or hold %q", c.what, zero)
					}
					// The counters and line numbers of both runs are the
					// recount's, with and without the wave writer's rule.
					for _, csvOnly := range []bool{false, true} {
						rc := newRecount(ix)
						rc.csvOnly = csvOnly
						for i := range c.batches {
							for j := range c.batches[i].Waves {
								rc.wave(&c.batches[i].Waves[j])
							}
						}
						args := []string{"--index", idx, "--format", "json", stream}
						if csvOnly {
							args = append(args, "--csv-only")
						}
						r := runTool(t, nil, args...)
						if r.code != 0 {
							t.Fatalf("%s %v: exit %d: %s", c.what, args, r.code, r.stderr)
						}
						compareJSON(t, fmt.Sprintf("%s (csv-only %v)", c.what, csvOnly), r.stdout, rc)
					}
				}
			})
		}
	}
}

// compareJSON checks att-stats --format json output against a recount.
func compareJSON(t *testing.T, what, out string, rc *recount) {
	t.Helper()
	n := 0
	var hits int64
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var row jsonRow
		if err := dec.Decode(&row); err != nil {
			t.Fatal(err)
		}
		n++
		hits += row.Hitcount
		k := fmt.Sprintf("%d:%d", row.CodeObj, row.Vaddr)
		c := rc.counts[k]
		if c == nil {
			t.Errorf("%s: PC %s not in the recount", what, k)
			continue
		}
		if got := [5]int64{row.Hitcount, row.Latency, row.Stall, row.Idle, row.Line}; got != *c {
			t.Errorf("%s: PC %s: got hit/lat/stall/idle/line %v, want %v", what, k, got, *c)
		}
	}
	if n != len(rc.counts) {
		t.Errorf("%s: %d PCs, recount has %d", what, n, len(rc.counts))
	}
	if hits == 0 {
		t.Errorf("%s: no instruction counted", what)
	}
}

// TestGeneratedPprofSource: a profile of a generated trace over a real
// code object (gfx942 kernels built from testdata/kernels/src with DWARF)
// leads go tool pprof -top with the hottest instruction, and -list shows
// its line of the OpenCL source (pprof run from the repository root, where
// the index's relative source paths resolve).
func TestGeneratedPprofSource(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH: cannot run go tool pprof")
	}
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	idx := filepath.Join(root, "internal", "sqttgen", "testdata", "gfx942.index")
	ix, err := wire.ReadIndexFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	_, want, err := sqttgen.Generate(sqttgen.Config{Index: ix, Seed: 3, Instrument: true, MaxTrips: 40})
	if err != nil {
		t.Fatal(err)
	}
	rc := newRecount(ix)
	for i := range want {
		for j := range want[i].Waves {
			rc.wave(&want[i].Waves[j])
		}
	}
	// The hottest PC by latency, and its row.
	var hot string
	for k, c := range rc.counts {
		if hot == "" || c[1] > rc.counts[hot][1] || c[1] == rc.counts[hot][1] && k < hot {
			hot = k
		}
	}
	var row wire.Row
	var kernelName string
	for _, r := range ix.Rows {
		if r.Kind == wire.RowFunction {
			kernelName = r.Source
		}
		if !r.IsLabel() && fmt.Sprintf("%d:%d", r.CodeObj, r.Vaddr) == hot {
			row = r
			break
		}
	}
	// The kernel's own line: the outermost frame of an inlined chain.
	frames := sourceFrames(row.Source)
	if len(frames) == 0 {
		t.Skipf("hottest instruction %q has no source line", row.Text)
	}
	file, line := frames[len(frames)-1].file, frames[len(frames)-1].line
	if file == "" || line == 0 {
		t.Skipf("hottest instruction %q has no source line (%q)", row.Text, row.Source)
	}
	src, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	srcLine := strings.TrimSpace(strings.Split(string(src), "\n")[line-1])

	dir := t.TempDir()
	var b bytes.Buffer
	w := wire.NewWriter(&b)
	w.WriteHeader(&wire.Header{Producer: "test", Trace: wire.Trace{Path: "g.att", Run: 1}})
	for i := range want {
		w.WriteBatch(&want[i])
	}
	w.Flush()
	stream := filepath.Join(dir, "g.rec")
	os.WriteFile(stream, b.Bytes(), 0o644)
	prof := filepath.Join(dir, "g.pb.gz")
	if r := runTool(t, nil, "--index", idx, "--format", "pprof", "-o", prof, stream); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	pprof := func(args ...string) string {
		cmd := exec.Command(goBin, append([]string{"tool", "pprof"}, args...)...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+dir)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go tool pprof %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	top := pprof("-top", "-addresses", prof)
	if want := fmt.Sprintf("%016x %s ", row.Vaddr, kernelName); !strings.Contains(top, want) {
		t.Errorf("-top -addresses lacks the hottest instruction %q (%q):\n%s", row.Text, want, top)
	}
	list := pprof("-list", "^"+regexp.QuoteMeta(kernelName)+"$", prof)
	want4 := fmt.Sprintf("%d:", line)
	found := false
	for _, l := range strings.Split(list, "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 && f[1] != "." && f[2] == want4 && strings.Contains(l, srcLine) {
			found = true
		}
	}
	if !found {
		t.Errorf("-list %q does not show cycles at %s:%d (%q) of the hottest instruction %q:\n%s", kernelName, file, line, srcLine, row.Text, list)
	}
}

// TestGeneratedPprofInline: with a fresh index of the gfx942 kernels
// (co-index's DWARF inline chains), every location of the profile of a
// generated trace has the chain of its instruction as its lines,
// innermost first: the inlined functions by name at their file and line,
// the kernel last at the call site's line. go tool pprof -traces shows
// the inlined helper above the kernel that inlined it.
func TestGeneratedPprofInline(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH: cannot run go tool pprof")
	}
	od, err := exec.LookPath("llvm-objdump-19")
	if err != nil {
		t.Skip("llvm-objdump-19 not found: install the Debian package llvm-19")
	}
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	in, err := codeobj.Normalize([]codeobj.Input{{ID: 1, Path: filepath.Join(root, "testdata", "kernels", "gfx942", "kernels_code_object_id_1.hsaco")}})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := codeobj.Build(context.Background(), in, codeobj.Options{Objdump: &codeobj.Objdump{Explicit: od}, Producer: "test"})
	if err != nil {
		t.Fatal(err)
	}
	_, recs, err := sqttgen.Generate(sqttgen.Config{Index: ix, Seed: 5, Instrument: true, MaxTrips: 40})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	idx := writeIndex(t, filepath.Join(dir, "k.idx"), ix)
	var b bytes.Buffer
	w := wire.NewWriter(&b)
	w.WriteHeader(&wire.Header{Producer: "test", Trace: wire.Trace{Path: "g.att", Run: 1}})
	for i := range recs {
		w.WriteBatch(&recs[i])
	}
	w.Flush()
	stream := filepath.Join(dir, "g.rec")
	os.WriteFile(stream, b.Bytes(), 0o644)
	prof := filepath.Join(dir, "g.pb.gz")
	if r := runTool(t, nil, "--index", idx, "--format", "pprof", "-o", prof, stream); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	rows := map[uint64]*wire.Row{}
	kernelOf := map[uint64]string{}
	kernel := ""
	for i := range ix.Rows {
		r := &ix.Rows[i]
		if r.Kind == wire.RowFunction {
			kernel = r.Source
		}
		if !r.IsLabel() {
			rows[r.Vaddr], kernelOf[r.Vaddr] = r, kernel
		}
	}
	p := readProfile(t, prof)
	inlined := map[string]bool{}
	for _, l := range p.Location {
		r := rows[l.Address]
		if r == nil {
			t.Fatalf("location %#x is no instruction of the index", l.Address)
		}
		if len(r.Inline) == 0 {
			continue
		}
		if len(l.Line) != len(r.Inline) {
			t.Errorf("%#x: %d lines, chain %+v", l.Address, len(l.Line), r.Inline)
			continue
		}
		for k, ln := range l.Line {
			f := r.Inline[k]
			name := f.Function
			if k == len(l.Line)-1 {
				name = kernelOf[l.Address] // the kernel, by its symbol
			}
			if ln.Function.Name != name || ln.Function.Filename != f.File || ln.Line != f.Line {
				t.Errorf("%#x: line %d is %s %s:%d, chain frame %+v", l.Address, k, ln.Function.Name, ln.Function.Filename, ln.Line, f)
			}
		}
		if len(l.Line) > 1 {
			inlined[l.Line[0].Function.Name+" in "+l.Line[len(l.Line)-1].Function.Name] = true
		}
	}
	if !inlined["mix in loop_sum"] {
		t.Fatalf("no location of mix inlined in loop_sum: %v", inlined)
	}
	cmd := exec.Command(goBin, "tool", "pprof", "-traces", prof)
	cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+dir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go tool pprof -traces: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`(?m)^\s+\d+\s+mix \(inline\)\n\s+loop_sum$`).Match(out) {
		t.Errorf("-traces shows no mix inlined in loop_sum:\n%.3000s", out)
	}
	// -list shows the helper's own source (helper.h, run from the
	// repository root where the index's relative paths resolve) with the
	// cycles of its lines wherever it was inlined.
	cmd = exec.Command(goBin, "tool", "pprof", "-list", "^mix$", prof)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+dir)
	if out, err = cmd.Output(); err != nil {
		t.Fatalf("go tool pprof -list: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "ROUTINE ======================== mix in testdata/kernels/src/helper.h") ||
		!regexp.MustCompile(`(?m)^\s+[1-9]\d*\s+[1-9]\d*\s+8:\s+x \^= x >> 16;$`).Match(out) {
		t.Errorf("-list ^mix$ does not show cycles at helper.h:8:\n%s", out)
	}
}
