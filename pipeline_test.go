package attkit_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/attkit/attkit/internal/testutil"
)

// attTool runs scripts/att-tool from the repository root (the sample's DWARF
// paths are relative to it, so its sources are found and snapshotted).
func attTool(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(filepath.Join(repoRoot(t), "scripts", "att-tool"), args...)
	cmd.Dir = repoRoot(t)
	cmd.Env = append(toolEnv("ATTKIT_BIN="+binDir), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code = 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return o.String(), e.String(), code
}

// treeFiles lists the regular files under dir, relative, sorted.
func treeFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, rel)
		}
		return nil
	})
	sort.Strings(files)
	return files
}

// TestAttToolSampleGolden runs the pipeline on the bundled sample and
// compares every file it writes with testdata/golden/att-tool (absolute
// paths of this checkout replaced by $ROOT).
func TestAttToolSampleGolden(t *testing.T) {
	needTools(t, "llvm-objdump-19", "bash")
	out := t.TempDir()
	// The goldens are the native decoder's records (auto would pick AMD's library
	// when ROCPROF_TRACE_DECODER_LIB is set).
	stdout, stderr, code := attTool(t, nil, "-d", out, "-j", "2", "--backend", "native", "testdata/sample")
	if code != 0 {
		t.Fatalf("att-tool exit %d: %s", code, stderr)
	}
	if want := out + "/ui_output_sample1\n" + out + "/ui_output_sample2\n"; stdout != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
	golden := filepath.Join("testdata", "golden", "att-tool")
	root := repoRoot(t)
	got := treeFiles(t, out)
	if testutil.Update() {
		os.RemoveAll(golden)
		for _, f := range got {
			b, _ := os.ReadFile(filepath.Join(out, f))
			b = bytes.ReplaceAll(b, []byte(root), []byte("$ROOT"))
			os.MkdirAll(filepath.Dir(filepath.Join(golden, f)), 0o755)
			if err := os.WriteFile(filepath.Join(golden, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := treeFiles(t, golden)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("files differ:\n got %q\nwant %q", got, want)
	}
	for _, f := range want {
		g, _ := os.ReadFile(filepath.Join(out, f))
		g = bytes.ReplaceAll(g, []byte(root), []byte("$ROOT"))
		w, _ := os.ReadFile(filepath.Join(golden, f))
		if !bytes.Equal(g, w) {
			t.Errorf("%s differs from its golden (run go test -run AttToolSample -update . to accept)", f)
		}
	}
	// The folders pass the viewer loader's rules (att-rcv --check).
	for _, d := range []string{"ui_output_sample1", "ui_output_sample2"} {
		cmd := exec.Command(filepath.Join(binDir, "att-rcv"), "--check", "-d", filepath.Join(out, d))
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("att-rcv --check %s: %v\n%s", d, err, b)
		}
	}
	for _, f := range []string{"ui_output_sample1/snapshots.json", "ui_output_sample1/source_0_kernels.cl",
		"stats_ui_output_sample1.csv", "ui_output_sample2/occupancy.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
}

// TestAttToolBadInputs feeds the bad inputs of python-layer §6.4 and
// checks message and exit status.
func TestAttToolBadInputs(t *testing.T) {
	needTools(t, "bash", "llvm-objdump-19")
	tmp := t.TempDir()
	other := filepath.Join(tmp, "notes.txt")
	os.WriteFile(other, []byte("x"), 0o644)
	empty := filepath.Join(tmp, "empty")
	os.Mkdir(empty, 0o755)
	for _, tc := range []struct {
		name string
		args []string
		msg  string
		code int
	}{
		{"missing", []string{filepath.Join(tmp, "nope.att")}, "att-tool: Input does not exist: " + filepath.Join(tmp, "nope.att") + "\n", 1},
		{"unsupported", []string{other}, "att-tool: Unsupported input type: " + other + ". Expected .att, code.json, or a code object (.out, .co, .hsaco).\n", 1},
		{"nothing", []string{empty}, "att-tool: No .att files, code.json, or code object files were provided or discovered.\n", 1},
		{"bad formats", []string{"--formats", "jsn", "testdata/sample"}, "att-tool: Unsupported output format(s): jsn. Expected one or more of: csv, json\n", 1},
		{"no formats", []string{"--formats", " , ", "testdata/sample"}, "att-tool: No output formats requested.\n", 1},
		{"no inputs", nil, "att-tool: the following arguments are required: FILE\nRun 'att-tool --help' for usage.\n", 2},
		{"bad option", []string{"--frobnicate", "x"}, "att-tool: unknown option: --frobnicate\nRun 'att-tool --help' for usage.\n", 2},
		{"bad jobs", []string{"-j", "0", "x"}, "att-tool: -j takes a positive whole number, not '0'\nRun 'att-tool --help' for usage.\n", 2},
		{"placed object missing", []string{"--code-object", "0=" + filepath.Join(tmp, "nope.hsaco") + "@0x1000", "testdata/sample"}, "att-tool: Input does not exist: " + filepath.Join(tmp, "nope.hsaco") + "\n", 1},
		{"placed object form", []string{"--code-object", "k.hsaco", "testdata/sample"}, "att-tool: --code-object k.hsaco: want ID=PATH@ADDR\nRun 'att-tool --help' for usage.\n", 2},
	} {
		stdout, stderr, code := attTool(t, nil, tc.args...)
		if code != tc.code || stderr != tc.msg || stdout != "" {
			t.Errorf("%s: exit %d stderr %q stdout %q; want exit %d stderr %q", tc.name, code, stderr, stdout, tc.code, tc.msg)
		}
	}
	// Warnings keep upstream's form, and ATT_SUPPRESS_WARNING hides them.
	warn := filepath.Join(tmp, "warn")
	os.Mkdir(warn, 0o755)
	full, err := os.ReadFile("testdata/sample/31337_1_shader_engine_0_1.att")
	if err != nil {
		t.Fatal(err)
	}
	// Cut short, the trace ends with waves in flight: a WAVE_INCOMPLETE info.
	os.WriteFile(filepath.Join(warn, "1_1_shader_engine_0_1.att"), full[:2000], 0o644)
	os.Link("testdata/sample/31337_1_code_object_id_1.hsaco", filepath.Join(warn, "1_1_code_object_id_1.hsaco"))
	_, stderr, code := attTool(t, nil, "--backend", "native", "-d", filepath.Join(tmp, "wout"), warn)
	if code != 0 || !strings.HasPrefix(stderr, "Warning: "+filepath.Join(warn, "1_1_shader_engine_0_1.att")+": ") {
		t.Errorf("warning form: exit %d stderr %q", code, stderr)
	}
	_, stderr, code = attTool(t, []string{"ATT_SUPPRESS_WARNING=1"}, "--backend", "native", "-d", filepath.Join(tmp, "wout2"), warn)
	if code != 0 || stderr != "" {
		t.Errorf("ATT_SUPPRESS_WARNING: exit %d stderr %q", code, stderr)
	}
	stdout, _, code := attTool(t, nil, "--help")
	if code != 0 || !strings.HasPrefix(stdout, "Usage: att-tool") {
		t.Errorf("--help: exit %d %q", code, stdout)
	}
	// A corrupt trace: the decoder's message, exit 1, nothing left behind.
	cap := filepath.Join(tmp, "cap")
	os.Mkdir(cap, 0o755)
	os.WriteFile(filepath.Join(cap, "1_1_shader_engine_0_1.att"), []byte("junk\n"), 0o644) // shorter than a header: not a trace
	_, stderr, code = attTool(t, nil, "-d", filepath.Join(tmp, "out"), cap)
	if code == 0 || !strings.Contains(stderr, "att-decode: ") {
		t.Errorf("corrupt trace: exit %d stderr %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(tmp, "out")); !os.IsNotExist(err) {
		t.Errorf("output folder left behind after a failure: %v", err)
	}
}

// TestAttToolKilledDecode kills a decode mid-way (a real att-decode, run by
// a wrapper that sends it SIGKILL once it has written output) and checks
// that att-tool fails and leaves no partial folder or CSV.
func TestAttToolKilledDecode(t *testing.T) {
	needTools(t, "llvm-objdump-19", "bash")
	tmp := t.TempDir()
	// A trace large enough that its decode is still running when killed.
	idx := filepath.Join(tmp, "idx")
	run(t, "", filepath.Join(binDir, "co-index"), "-o", idx, "testdata/sample/31337_1_code_object_id_1.hsaco")
	cap := filepath.Join(tmp, "cap")
	os.Mkdir(cap, 0o755)
	os.Link("testdata/sample/31337_1_code_object_id_1.hsaco", filepath.Join(cap, "9_1_code_object_id_1.hsaco"))
	run(t, repoRoot(t), "go", "run", "./scripts/gentrace", "-index", idx, "-seed", "3", "-size", "40MB", "-q",
		"-o", filepath.Join(cap, "9_1_shader_engine_0_1.att"))
	os.Link("testdata/sample/31337_1_shader_engine_1_1.att", filepath.Join(cap, "9_1_shader_engine_1_1.att"))

	wrap := filepath.Join(tmp, "wrapbin")
	os.Mkdir(wrap, 0o755)
	for _, tool := range []string{"co-index", "att-rcv", "att-stats", "att-name"} {
		os.Symlink(filepath.Join(binDir, tool), filepath.Join(wrap, tool))
	}
	script := `#!/usr/bin/env bash
# Runs the real att-decode and kills it with SIGKILL once it has started writing.
for a; do case "$a" in *.rec) out=$a ;; esac; done
"` + filepath.Join(binDir, "att-decode") + `" "$@" &
pid=$!
while kill -0 $pid 2>/dev/null; do
  if [ -s "$out" ] || ls "$(dirname "$out")"/.*rec* >/dev/null 2>&1; then kill -9 $pid; wait $pid; exit $?; fi
  sleep 0.01
done
wait $pid
`
	os.WriteFile(filepath.Join(wrap, "att-decode"), []byte(script), 0o755)
	out := filepath.Join(tmp, "out")
	start := time.Now()
	cmd := exec.Command(filepath.Join(repoRoot(t), "scripts", "att-tool"), "-d", out, "-j", "2", cap)
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), "ATTKIT_BIN="+wrap, "PATH="+wrap+":"+os.Getenv("PATH"))
	b, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("att-tool succeeded although a decode was killed:\n%s", b)
	}
	if time.Since(start) > 60*time.Second {
		t.Errorf("att-tool took %v to stop", time.Since(start))
	}
	for _, p := range []string{out, filepath.Join(cap, "ui_output_cap1"), filepath.Join(cap, "stats_ui_output_cap1.csv")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s left behind after the killed decode (%v)", p, err)
		}
	}
}

// TestAttToolCodeOnly: with code objects and no traces, att-tool writes
// code.json and the source snapshots into the folder and prints it.
func TestAttToolCodeOnly(t *testing.T) {
	needTools(t, "llvm-objdump-19", "bash")
	out := filepath.Join(t.TempDir(), "code")
	stdout, stderr, code := attTool(t, nil, "-d", out, "testdata/sample/31337_1_code_object_id_1.hsaco")
	if code != 0 || stdout != out+"\n" {
		t.Fatalf("exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	files := strings.Join(treeFiles(t, out), " ")
	if files != "code.json snapshots.json source_0_kernels.cl source_1_helper.h" {
		t.Errorf("files: %s", files)
	}
}

func run(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, b)
	}
}
