package attkit_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/sqttgen"
	"github.com/attkit/attkit/internal/wire"
)

// TestCaptureWithoutLoadRecords covers captures of runtimes other than
// rocprofv3: no code-object load record, so the trace's PCs are absolute.
// The gfx942 test kernels, loaded at an address, run in traces made by the
// generator (sqttgen.Loaded); co-index --code-object 0=PATH@ADDR indexes
// the object there, att-decode with that index gives exactly the records
// the generator intended, and att-tool --code-object does the whole job in
// one command, as att-stats on the intended records does.
func TestCaptureWithoutLoadRecords(t *testing.T) {
	needTools(t, "llvm-objdump-19")
	const load = 0x7f3a00001000
	tmp := t.TempDir()
	capture := filepath.Join(tmp, "capture")
	os.Mkdir(capture, 0o755)
	obj := filepath.Join(capture, "kernels.hsaco")
	data, err := os.ReadFile("testdata/kernels/gfx942/kernels_code_object_id_1.hsaco")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(obj, data, 0o644)
	plainIdx, placedIdx := filepath.Join(tmp, "plain.idx"), filepath.Join(tmp, "placed.idx")
	tool(t, "co-index", "-o", plainIdx, "--code-object", "1="+obj)
	tool(t, "co-index", "-o", placedIdx, "--code-object", fmt.Sprintf("0=%s@%#x", obj, load))
	plain, err := wire.ReadIndexFile(plainIdx)
	if err != nil {
		t.Fatal(err)
	}
	placed, err := wire.ReadIndexFile(placedIdx)
	if err != nil {
		t.Fatal(err)
	}
	// The kernels' instructions at their load addresses, and co-index's.
	text, indexed := map[wire.PC]string{}, map[wire.PC]string{}
	for _, r := range plain.Rows {
		if r.Kind == wire.RowInstruction {
			text[wire.PC{Address: load + r.Vaddr}] = r.Text
		}
	}
	for _, r := range placed.Rows {
		if r.Kind == wire.RowInstruction {
			indexed[r.PC()] = r.Text
		}
	}
	loaded, err := sqttgen.Loaded(plain, map[uint64]uint64{1: load})
	if err != nil {
		t.Fatal(err)
	}

	var intended []string // the generator's records, as record streams
	for se := 0; se < 2; se++ {
		trace, want, err := sqttgen.Generate(sqttgen.Config{Index: loaded, Seed: uint64(7 + se), WavesPerSIMD: 2, GFX9: sqttgen.GFX9{SE: uint8(se)}})
		if err != nil {
			t.Fatal(err)
		}
		att := filepath.Join(capture, fmt.Sprintf("1_1_shader_engine_%d_1.att", se))
		os.WriteFile(att, trace, 0o644)
		intended = append(intended, writeRecords(t, filepath.Join(tmp, fmt.Sprintf("want%d.rec", se)), se, want))

		rec := filepath.Join(tmp, fmt.Sprintf("se%d.rec", se))
		tool(t, "att-decode", "--backend", "native", "--index", placedIdx, "-o", rec, att)
		got := readRecords(t, rec)
		if d := sqttgen.Diff(want, got); d != "" {
			t.Fatalf("shader engine %d: att-decode with co-index's placed index differs from the generator's records: %s", se, d)
		}
		n := 0
		for _, b := range got {
			for _, w := range b.Waves {
				for _, in := range w.Instructions {
					if in.PC == (wire.PC{}) {
						continue
					}
					want, ok := text[in.PC]
					if got, inIndex := indexed[in.PC]; !ok || !inIndex || got != want {
						t.Fatalf("decoded instruction at %+v: not load address + vaddr of a kernel instruction with its text", in.PC)
					}
					n++
				}
			}
		}
		if n == 0 {
			t.Fatalf("shader engine %d: no decoded instruction", se)
		}
	}

	// One command: att-tool with the load address.
	out := filepath.Join(tmp, "out", "ui")
	stdout, stderr1, code := attTool(t, nil, "--backend", "native", "-d", out,
		"--code-object", fmt.Sprintf("0=%s@%#x", obj, load), capture)
	if code != 0 || stdout != out+"\n" {
		t.Fatalf("att-tool --code-object: exit %d, stdout %q, stderr %s", code, stdout, stderr1)
	}
	tool(t, "att-rcv", "--check", "-d", out)
	want := filepath.Join(tmp, "want.csv")
	tool(t, "att-stats", append([]string{"--index", placedIdx, "-o", want}, intended...)...)
	g, _ := os.ReadFile(filepath.Join(tmp, "out", "stats_ui.csv"))
	w, _ := os.ReadFile(want)
	if !bytes.Equal(g, w) || len(w) == 0 {
		t.Errorf("att-tool's stats CSV differs from att-stats on the generator's records:\n%s\nwant:\n%s", g, w)
	}
	// The kernels' rows are at their load addresses, in code object 0, the
	// one copy of kernels.hsaco in the capture indexed once.
	entry := fmt.Sprintf("\r\n0,%d,; _loop_sum,", load+plain.Kernels[0].Address)
	if !strings.Contains(string(g), entry) || strings.Count(string(g), "; _loop_sum,") != 1 {
		t.Errorf("stats CSV lacks the one row %q of the placed kernel:\n%s", entry, g)
	}

	if hits(t, readLines(t, want)) == 0 {
		t.Error("no executed instruction in the stats")
	}

	// Without the load address, the object's ELF vaddrs match no PC: the
	// decoder can place no instruction, nothing is counted, and att-tool
	// says why and what to give.
	_, stderr, code := attTool(t, nil, "--backend", "native", "-d", filepath.Join(tmp, "out2", "ui"), capture)
	if code != 0 {
		t.Fatalf("att-tool without --code-object: exit %d, stderr %q", code, stderr)
	}
	if want := "att-tool: warning: no executed instruction is in the code objects' index, so every counter is zero (" +
		filepath.Join(tmp, "out2", "ui") + "): a capture without code-object load records"; !strings.HasPrefix(stderr, want) ||
		!strings.Contains(stderr, "--code-object ID=PATH@ADDR") || strings.Count(stderr, "warning") != 1 {
		t.Errorf("without --code-object: stderr %q, want one warning starting %q and naming --code-object ID=PATH@ADDR", stderr, want)
	}
	if strings.Contains(stderr1, "warning") {
		t.Errorf("with --code-object: a warning: %s", stderr1)
	}
	if n := hits(t, readLines(t, filepath.Join(tmp, "out2", "stats_ui.csv"))); n != 0 {
		t.Errorf("without --code-object, %d instructions of the ELF-vaddr index count", n)
	}
}

// writeRecords writes batches as the record stream of shader engine se,
// run 1.
func writeRecords(t *testing.T, path string, se int, batches []wire.Batch) string {
	t.Helper()
	var b bytes.Buffer
	if err := wire.WriteStream(&b, &wire.Header{Producer: "sqttgen", Trace: wire.Trace{SE: se, Run: 1, GFXIP: 9}}, batches...); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// readRecords reads the batches of a record stream file.
func readRecords(t *testing.T, path string) []wire.Batch {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []wire.Batch
	rd := wire.NewReader(f, path)
	for rd.Scan() {
		if rd.Kind() == wire.KindBatch {
			out = append(out, rd.Batch().Clone())
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
