package attkit_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/sqttgen"
	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

// runBin runs one of the built tools and returns its exit code, stdout and
// stderr.
func runBin(t *testing.T, name string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	cmd.Env = toolEnv("ATT_SUPPRESS_WARNING=")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), o.String(), e.String()
		}
		t.Fatal(err)
	}
	return 0, o.String(), e.String()
}

// driverLines returns what a tool said about trace (its lines naming the
// trace) and, when it failed, its last line, without the tool's prefix:
// att-decode's "att-decode: warning: " and att-tool's upstream "Warning: "
// both become "warning: ".
func driverLines(tool, stderr, trace string, failed bool) []string {
	var out []string
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	for i, l := range lines {
		if !strings.Contains(l, trace) && !(failed && i == len(lines)-1) {
			continue
		}
		switch {
		case strings.HasPrefix(l, tool+": warning: "):
			l = "warning: " + strings.TrimPrefix(l, tool+": warning: ")
		case strings.HasPrefix(l, "Warning: "):
			l = "warning: " + strings.TrimPrefix(l, "Warning: ")
		default:
			l = strings.TrimPrefix(l, tool+": ")
		}
		out = append(out, l)
	}
	return out
}

// TestOneDriver runs the same bad inputs through att-decode and att-tool:
// both decode through internal/driver, so both exit with the same code and
// say the same about the trace. On 478e79a att-tool decoded a gfx11 trace
// with a gfx942 code object (exit 0, every counter zero) and said nothing
// of a trace cut after its header.
func TestOneDriver(t *testing.T) {
	needTools(t, "llvm-objdump-19")
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	hsaco := filepath.Join(repoRoot(t), "testdata", "sample", "31337_1_code_object_id_1.hsaco") // gfx942
	index := filepath.Join(dir, "gfx942.index")
	if code, _, stderr := runBin(t, "co-index", "-o", index, hsaco); code != 0 {
		t.Fatalf("co-index: %s", stderr)
	}
	ix11, err := wire.ReadIndexFile(filepath.Join(repoRoot(t), "internal", "sqttgen", "testdata", "gfx1100.index"))
	if err != nil {
		t.Fatal(err)
	}
	gfx11, _, err := sqttgen.GenerateRDNA(sqttgen.Config{Index: ix11, Seed: 1, WavesPerSIMD: 1, WavesPerSlot: 1,
		OtherCUs: -1, MaxTrips: 4, Instrument: true}, sqttgen.RDNA{GFXIP: 11})
	if err != nil {
		t.Fatal(err)
	}
	b1 := testutil.Unhex(t, testutil.VectorB1) // a gfx9 trace
	badSlot := append(append([]byte{}, b1[:0x16]...), 0x03, 0x30, 0x44, 0x00)
	for _, tc := range []struct {
		name string
		data []byte
		args []string
		code int
		want string // in what both say
	}{
		{"garbage", make([]byte, 64), nil, 3, "not a thread trace"},
		{"short", b1[:6], nil, 3, "shorter than the 8-byte header"},
		{"header only", b1[:8], nil, 1, "only its 8-byte header"},
		{"bad wave slot", badSlot, nil, 1, "wave slot 12"},
		{"cut after header", b1[:20], nil, 0, "truncated trace: only 12 bytes after its 8-byte header"},
		{"cut in a wave", b1[:0x2b], nil, 0, "Wave incomplete"},
		{"empty", nil, nil, 0, "empty trace, no records"},
		{"wrong architecture", gfx11, nil, 3, "a gfx11 trace, but the code objects are for gfx942"},
		{"missing library", b1, []string{"--backend", "rocm", "--lib", filepath.Join(dir, "no-such-lib.so")}, 4, "no-such-lib.so"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sub := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			trace := filepath.Join(sub, "1_1_shader_engine_0_1.att")
			if err := os.WriteFile(trace, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			backend := []string{"--backend", "native"}
			if tc.args != nil {
				backend = tc.args
			}
			dargs := append(append([]string{}, backend...), "--index", index, "-o", filepath.Join(sub, "out.rec"), trace)
			dcode, _, derr := runBin(t, "att-decode", dargs...)
			targs := append(append([]string{}, backend...), "-d", filepath.Join(sub, "ui"), trace, hsaco)
			tcode, _, terr := runBin(t, "att-tool", targs...)
			dl := driverLines("att-decode", derr, trace, dcode != 0)
			tl := driverLines("att-tool", terr, trace, tcode != 0)
			if dcode != tc.code || tcode != tc.code || strings.Join(dl, "\n") != strings.Join(tl, "\n") ||
				!strings.Contains(strings.Join(dl, "\n"), tc.want) {
				t.Errorf("att-decode: exit %d, said %q\natt-tool: exit %d, said %q\nwant exit %d and %q in both",
					dcode, dl, tcode, tl, tc.code, tc.want)
			}
			if tcode != 0 {
				if _, err := os.Stat(filepath.Join(sub, "ui")); !os.IsNotExist(err) {
					t.Errorf("att-tool left an output after exit %d", tcode)
				}
			}
		})
	}
}
