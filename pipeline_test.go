package attkit_test

import (
	"bytes"
	"errors"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/attkit/attkit/internal/publish"
	"github.com/attkit/attkit/internal/testutil"
)

// attTool runs the att-tool binary from the repository root (the sample's
// DWARF paths are relative to it, so its sources are found and
// snapshotted).
func attTool(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "att-tool"), args...)
	cmd.Dir = repoRoot(t)
	cmd.Env = append(toolEnv(), env...)
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
		if d.Type().IsRegular() && d.Name() != publish.ManifestName { // the mark names the run
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
	needTools(t, "llvm-objdump-19")
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
	// Where the stats CSVs went, on stderr.
	if want := "att-tool: stats CSV: " + out + "/stats_ui_output_sample1.csv\natt-tool: stats CSV: " + out + "/stats_ui_output_sample2.csv\n"; stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	checkGolden(t, out)
}

// checkGolden checks that out holds exactly the sample's outputs of
// testdata/golden/att-tool (rewritten by -update), and that the folders pass
// att-rcv --check.
func checkGolden(t *testing.T, out string) {
	t.Helper()
	if hidden := hiddenEntries(t, out); len(hidden) > 0 {
		t.Errorf("temporaries left in %s: %q", out, hidden)
	}
	testutil.GoldenDir(t, "golden/att-tool", out, repoRoot(t), "$ROOT")
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

// TestAttToolDirect checks that the first trace of a run, decoded
// straight into the run's writer, gives the files its record file gives:
// --keep-going writes every trace through its record file, and the
// sample's runs have two traces each, so the run without it mixes both
// ways; the trees are compared byte for byte.
func TestAttToolDirect(t *testing.T) {
	needTools(t, "llvm-objdump-19")
	direct, recs := t.TempDir(), t.TempDir()
	for _, run := range []struct {
		out  string
		args []string
	}{{direct, nil}, {recs, []string{"--keep-going"}}} {
		args := append([]string{"-d", run.out, "-j", "2", "--backend", "native", "--formats", "json,csv,html"}, run.args...)
		if _, stderr, code := attTool(t, nil, append(args, "testdata/sample")...); code != 0 {
			t.Fatalf("att-tool %v: exit %d: %s", run.args, code, stderr)
		}
	}
	if d := folderDiff(t, direct, recs); d != "" {
		t.Errorf("direct and record-file outputs differ: %s", d)
	}
}

// TestAttToolBadInputs feeds the bad inputs of python-layer §6.4 and
// checks message and exit status: one message per problem, and the exit
// code of the step that failed.
func TestAttToolBadInputs(t *testing.T) {
	needTools(t, "llvm-objdump-19")
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
		{"bad formats", []string{"--formats", "jsn,xml,jsn", "testdata/sample"}, "att-tool: Unsupported output format(s): jsn, xml. Expected one or more of: csv, html, json\n", 1},
		{"no formats", []string{"--formats", " , ", "testdata/sample"}, "att-tool: No output formats requested.\n", 1},
		{"no inputs", nil, "att-tool: the following arguments are required: FILE\nRun 'att-tool --help' for usage.\n", 2},
		{"bad option", []string{"--frobnicate", "x"}, "att-tool: unknown flag --frobnicate\nRun 'att-tool --help' for usage.\n", 2},
		{"bad jobs", []string{"-j", "0", "x"}, "att-tool: -j takes a positive whole number, not 0\nRun 'att-tool --help' for usage.\n", 2},
		{"bad backend", []string{"--backend", "gpu", "x"}, "att-tool: --backend must be one of \"auto\",\"native\",\"rocm\" but got \"gpu\"\nRun 'att-tool --help' for usage.\n", 2},
		{"placed object missing", []string{"--code-object", "0=" + filepath.Join(tmp, "nope.hsaco") + "@0x1000", "testdata/sample"}, "att-tool: Input does not exist: " + filepath.Join(tmp, "nope.hsaco") + "\n", 1},
		{"placed object form", []string{"--code-object", "k.hsaco", "testdata/sample"}, "att-tool: --code-object \"k.hsaco\": want ID=PATH or ID=PATH@ADDR with a decimal id\nRun 'att-tool --help' for usage.\n", 2},
		{"unknown group", []string{"--group", "1_2", "testdata/sample"}, "att-tool: --group 1_2: no traces named 1_2_…; the inputs hold 31337_1\n", 2},
		{"library missing", []string{"--backend", "rocm", "--lib", filepath.Join(tmp, "nope.so"), "-d", filepath.Join(tmp, "lib-out"), "testdata/sample"}, "", 4},
	} {
		stdout, stderr, code := attTool(t, nil, tc.args...)
		if tc.msg == "" && code == tc.code && strings.Count(stderr, "att-tool: ") == 1 && strings.HasPrefix(stderr, "att-tool: ") && stdout == "" {
			continue
		}
		if code != tc.code || stderr != tc.msg || stdout != "" {
			t.Errorf("%s: exit %d stderr %q stdout %q; want exit %d stderr %q", tc.name, code, stderr, stdout, tc.code, tc.msg)
		}
	}
	if _, err := os.Stat(filepath.Join(tmp, "lib-out")); !os.IsNotExist(err) {
		t.Errorf("output folder left behind after a missing library: %v", err)
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
	if code != 0 || stderr != "att-tool: stats CSV: "+filepath.Join(tmp, "stats_wout2.csv")+"\n" {
		t.Errorf("ATT_SUPPRESS_WARNING: exit %d stderr %q", code, stderr)
	}
	stdout, _, code := attTool(t, nil, "--help")
	if code != 0 || !strings.HasPrefix(stdout, "Usage: att-tool") || !strings.Contains(stdout, "--code-object") {
		t.Errorf("--help: exit %d %q", code, stdout)
	}
	stdout, _, code = attTool(t, nil, "--version")
	if code != 0 || !strings.HasPrefix(stdout, "att-tool ") {
		t.Errorf("--version: exit %d %q", code, stdout)
	}
	// Not a trace: att-decode's exit code (3) and message, once, naming
	// the trace; nothing left behind.
	cap := filepath.Join(tmp, "cap")
	os.Mkdir(cap, 0o755)
	junk := filepath.Join(cap, "1_1_shader_engine_0_1.att")
	os.WriteFile(junk, []byte("junk\n"), 0o644) // shorter than a header: not a trace
	os.WriteFile(filepath.Join(cap, "1_1_shader_engine_1_1.att"), full, 0o644)
	os.Link("testdata/sample/31337_1_code_object_id_1.hsaco", filepath.Join(cap, "1_1_code_object_id_1.hsaco"))
	dcmd := exec.Command(filepath.Join(binDir, "att-decode"), "--backend", "native", "-o", filepath.Join(tmp, "junk.rec"), junk)
	derr := dcmd.Run()
	var ee *exec.ExitError
	if !errors.As(derr, &ee) {
		t.Fatalf("att-decode on junk: %v", derr)
	}
	_, stderr, code = attTool(t, nil, "--backend", "native", "-j", "2", "-d", filepath.Join(tmp, "out"), cap)
	if code != ee.ExitCode() || !strings.HasPrefix(stderr, "att-tool: "+junk+": not a thread trace") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("corrupt trace: exit %d (att-decode's %d) stderr %q", code, ee.ExitCode(), stderr)
	}
	if _, err := os.Stat(filepath.Join(tmp, "out")); !os.IsNotExist(err) {
		t.Errorf("output folder left behind after a failure: %v", err)
	}
	if h := hiddenEntries(t, tmp); len(h) > 0 {
		t.Errorf("temporaries left behind after a failure: %q", h)
	}
}

// hiddenEntries lists the names starting with "." under dir (temporaries).
func hiddenEntries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".") && p != dir && d.Name() != publish.ManifestName {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// sampleCapture makes a capture of the sample's run 1 as process pid,
// under dir/host (as rocprofv3 writes it).
func sampleCapture(t *testing.T, dir, pid string) string {
	t.Helper()
	host := filepath.Join(dir, "host")
	os.MkdirAll(host, 0o755)
	for from, to := range map[string]string{
		"31337_1_code_object_id_1.hsaco": pid + "_1_code_object_id_1.hsaco",
		"31337_1_shader_engine_0_1.att":  pid + "_1_shader_engine_0_1.att",
		"31337_1_shader_engine_1_1.att":  pid + "_1_shader_engine_1_1.att",
	} {
		if err := os.Link(filepath.Join("testdata/sample", from), filepath.Join(host, to)); err != nil {
			t.Fatal(err)
		}
	}
	return host
}

// snapshotTree reads every file under dir.
func snapshotTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, f := range treeFiles(t, dir) {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		m[f] = string(b)
	}
	return m
}

// TestAttToolRerun: a run into an earlier result refuses without --force
// (touching nothing), and with --force replaces folder and CSV as a whole
// (a wave file of the earlier run does not survive). With one run, a -d
// that holds other files gets the folder inside it.
func TestAttToolRerun(t *testing.T) {
	needTools(t, "llvm-objdump-19")
	tmp := t.TempDir()
	sampleCapture(t, tmp, "7")
	out := filepath.Join(tmp, "res", "ui")
	if _, stderr, code := attTool(t, nil, "--backend", "native", "-d", out, tmp); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	// A stale wave file and CSV row, as an older run would leave them.
	stale := filepath.Join(out, "se9_sm0_sl0_wv0.json")
	os.WriteFile(stale, []byte("{}"), 0o644)
	csv := filepath.Join(tmp, "res", "stats_ui.csv")
	old, _ := os.ReadFile(csv)
	os.WriteFile(csv, append(old, "stale\r\n"...), 0o644)
	before := snapshotTree(t, filepath.Join(tmp, "res"))
	_, stderr, code := attTool(t, nil, "--backend", "native", "-d", out, tmp)
	if code != 1 || stderr != "att-tool: "+out+" is an earlier output of att-tool, but holds files it did not write (se9_sm0_sl0_wv0.json): refusing to replace it; move them away or choose another output folder\n" {
		t.Errorf("re-run without --force: exit %d, stderr %q", code, stderr)
	}
	// --force replaces only what att-tool wrote: the file it did not
	// write is refused.
	_, stderr, code = attTool(t, nil, "--backend", "native", "--force", "-d", out, tmp)
	if code != 1 || !strings.Contains(stderr, "se9_sm0_sl0_wv0.json") || strings.Contains(stderr, "--force") {
		t.Errorf("re-run with --force over a file it did not write: exit %d, stderr %q", code, stderr)
	}
	if after := snapshotTree(t, filepath.Join(tmp, "res")); !maps.Equal(before, after) {
		t.Errorf("a refused re-run changed the earlier result")
	}
	os.Remove(stale)
	_, stderr, code = attTool(t, nil, "--backend", "native", "-d", out, tmp)
	if code != 1 || stderr != "att-tool: "+out+" holds an earlier result of att-tool (use --force to replace it)\n" {
		t.Errorf("re-run without --force: exit %d, stderr %q", code, stderr)
	}
	os.WriteFile(stale, []byte("{}"), 0o644)
	// A stale wave file listed by the mark, as an earlier run of more
	// waves leaves it.
	m, _ := os.ReadFile(filepath.Join(out, publish.ManifestName))
	os.WriteFile(filepath.Join(out, publish.ManifestName), append(m, "file \"se9_sm0_sl0_wv0.json\"\n"...), 0o644)
	if stdout, stderr, code := attTool(t, nil, "--backend", "native", "--force", "-d", out, tmp); code != 0 || stdout != out+"\n" {
		t.Fatalf("re-run with --force: exit %d, %q, %s", code, stdout, stderr)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the earlier run's wave file survived --force: %v", err)
	}
	if b, _ := os.ReadFile(csv); !bytes.Equal(b, old) {
		t.Errorf("stats CSV not replaced")
	}
	if b, err := exec.Command(filepath.Join(binDir, "att-rcv"), "--check", "-d", out).CombinedOutput(); err != nil {
		t.Errorf("att-rcv --check after --force: %v\n%s", err, b)
	}
	if h := hiddenEntries(t, filepath.Join(tmp, "res")); len(h) > 0 {
		t.Errorf("temporaries left: %q", h)
	}
	// -d naming a folder of other files: the run goes inside it.
	mine := filepath.Join(tmp, "mine")
	os.Mkdir(mine, 0o755)
	os.WriteFile(filepath.Join(mine, "notes.txt"), []byte("mine"), 0o644)
	stdout, stderr, code := attTool(t, nil, "--backend", "native", "-d", mine, tmp)
	if want := filepath.Join(mine, "ui_output_host1"); code != 0 || stdout != want+"\n" ||
		!strings.Contains(stderr, "att-tool: warning: "+mine+" holds other files: writing the run's folder inside it\n") {
		t.Errorf("-d with other files: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if got := strings.Join(treeFiles(t, mine)[:2], " "); got != "notes.txt stats_ui_output_host1.csv" {
		t.Errorf("files in the -d folder: %s", got)
	}
}

// TestAttToolGroups: a rocprofv3 output of two processes, one folder level
// down (<out>/<hostname>/…): one output per process and agent, named after
// it, the message says so, and --group picks one. Each group's files are
// the sample's.
func TestAttToolGroups(t *testing.T) {
	needTools(t, "llvm-objdump-19")
	tmp := t.TempDir()
	capture := filepath.Join(tmp, "capture")
	sampleCapture(t, capture, "100")
	sampleCapture(t, capture, "200")
	out := filepath.Join(tmp, "out")
	stdout, stderr, code := attTool(t, nil, "--backend", "native", "-d", out, capture)
	want := out + "/ui_output_host_100_1_1\n" + out + "/ui_output_host_200_1_1\n"
	if code != 0 || stdout != want {
		t.Fatalf("exit %d stdout %q, want %q; stderr %s", code, stdout, want, stderr)
	}
	if !strings.HasPrefix(stderr, "att-tool: warning: the inputs hold the traces of 2 processes or agents: "+
		"100_1 (process 100, agent 1), 200_1 (process 200, agent 1); writing one output per group (--group 100_1 picks one)\n") {
		t.Errorf("stderr %q", stderr)
	}
	golden, _ := os.ReadFile("testdata/golden/att-tool/stats_ui_output_sample1.csv")
	for _, g := range []string{"100", "200"} {
		b, _ := os.ReadFile(filepath.Join(out, "stats_ui_output_host_"+g+"_1_1.csv"))
		if !bytes.Equal(b, golden) {
			t.Errorf("group %s: stats CSV differs from the sample's", g)
		}
	}
	out2 := filepath.Join(tmp, "out2")
	stdout, stderr, code = attTool(t, nil, "--backend", "native", "--group", "200_1", "-d", out2, capture)
	if code != 0 || stdout != out2+"\n" || strings.Contains(stderr, "warning") {
		t.Fatalf("--group: exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(tmp, "stats_out2.csv")); !bytes.Equal(b, golden) {
		t.Errorf("--group 200_1: stats CSV differs from the sample's")
	}
}

// TestAttToolConcurrent runs two att-tool processes at once into one new
// folder. Without --force one wins and the other refuses; with --force
// both succeed, the later replacing the earlier whole. Either way the
// result is complete (the sample's goldens) and no temporary stays.
func TestAttToolConcurrent(t *testing.T) {
	needTools(t, "llvm-objdump-19")
	for _, force := range []bool{false, true} {
		for trial := range 3 {
			out := filepath.Join(t.TempDir(), "out")
			args := []string{"-d", out, "-j", "2", "--backend", "native", "testdata/sample"}
			if force {
				args = append([]string{"--force"}, args...)
			}
			var cmds [2]*exec.Cmd
			var errs [2]bytes.Buffer
			for i := range cmds {
				cmds[i] = exec.Command(filepath.Join(binDir, "att-tool"), args...)
				cmds[i].Dir = repoRoot(t)
				cmds[i].Stderr = &errs[i]
				if err := cmds[i].Start(); err != nil {
					t.Fatal(err)
				}
			}
			ok := 0
			for i, c := range cmds {
				if err := c.Wait(); err == nil {
					ok++
				} else if force || !strings.Contains(errs[i].String(), "holds an earlier result of att-tool (use --force to replace it)") ||
					strings.Count(errs[i].String(), "\n") != 1 {
					t.Errorf("force %v trial %d: run %d: %v: %s", force, trial, i, err, errs[i].String())
				}
			}
			if want := map[bool]int{false: 1, true: 2}[force]; ok != want {
				t.Errorf("force %v trial %d: %d runs succeeded, want %d", force, trial, ok, want)
			}
			checkGolden(t, out)
		}
	}
}

// TestAttToolInterrupted sends SIGINT and SIGTERM to att-tool while it
// decodes (one trace is a pipe the test feeds slowly) a re-run with
// --force over an earlier result: it exits 130 or 143, the earlier result
// is untouched and no temporary stays, beside the output or in $TMPDIR.
func TestAttToolInterrupted(t *testing.T) {
	needTools(t, "llvm-objdump-19")
	tmp := t.TempDir()
	host := sampleCapture(t, tmp, "7")
	res := filepath.Join(tmp, "res")
	out := filepath.Join(res, "ui")
	if _, stderr, code := attTool(t, nil, "--backend", "native", "-d", out, tmp); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	before := snapshotTree(t, res)
	trace := filepath.Join(host, "7_1_shader_engine_1_1.att")
	data, _ := os.ReadFile(trace)
	os.Remove(trace)
	if err := syscall.Mkfifo(trace, 0o644); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	tmpdir := filepath.Join(tmp, "tmpdir")
	os.Mkdir(tmpdir, 0o755)
	// SIGHUP and SIGQUIT too: on 478e79a they left the temporaries and
	// $TMPDIR/att-tool-*.
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT} {
		cmd := exec.Command(filepath.Join(binDir, "att-tool"), "--force", "--backend", "native", "-d", out, tmp)
		cmd.Dir = repoRoot(t)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmpdir)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Feed part of the trace, and keep the pipe open: the decode waits.
		w, err := os.OpenFile(trace, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data[:len(data)/2])
		time.Sleep(200 * time.Millisecond)
		// The outputs' temporaries are made once the traces are decoded;
		// while decoding, the record files are in $TMPDIR.
		if ents, _ := os.ReadDir(tmpdir); len(ents) == 0 {
			t.Errorf("%v: no work folder in $TMPDIR while decoding", sig)
		}
		cmd.Process.Signal(sig)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("%v: att-tool did not stop", sig)
		}
		w.Close()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 128+int(sig) {
			t.Errorf("%v: %v, want exit %d; stderr %q", sig, err, 128+int(sig), stderr.String())
		}
		if !strings.HasSuffix(stderr.String(), "att-tool: interrupted\n") {
			t.Errorf("%v: stderr %q", sig, stderr.String())
		}
		if after := snapshotTree(t, res); !maps.Equal(before, after) {
			t.Errorf("%v: the interrupted run changed the earlier result", sig)
		}
		if h := append(hiddenEntries(t, tmp), treeFiles(t, tmpdir)...); len(h) > 0 {
			t.Errorf("%v: temporaries left: %q", sig, h)
		}
	}
}

// TestAttToolCodeOnly: with code objects and no traces, att-tool writes
// code.json and the source snapshots into the folder and prints it.
func TestAttToolCodeOnly(t *testing.T) {
	needTools(t, "llvm-objdump-19")
	out := filepath.Join(t.TempDir(), "code")
	stdout, stderr, code := attTool(t, nil, "-d", out, "testdata/sample/31337_1_code_object_id_1.hsaco")
	if code != 0 || stdout != out+"\n" {
		t.Fatalf("exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	files := strings.Join(treeFiles(t, out), " ")
	if files != "code.json snapshots.json source_0_kernels.cl source_1_helper.h" {
		t.Errorf("files: %s", files)
	}
	// Again: code.json is there, so without --force it refuses.
	if _, stderr, code := attTool(t, nil, "-d", out, "testdata/sample/31337_1_code_object_id_1.hsaco"); code != 1 ||
		!strings.Contains(stderr, "(use --force to replace it)") {
		t.Errorf("code-only re-run: exit %d stderr %q", code, stderr)
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
