// Package attkit_test holds the tests that run attkit as a user does: the
// README's commands and the att-tool pipeline, with the binaries built from
// this checkout.
package attkit_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/testutil"
)

// binDir holds the attkit binaries built for these tests.
var binDir string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "attkit-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	build := exec.Command("go", "build", "-o", dir+"/", "./cmd/...")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the tools:", err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

// toolEnv is the environment with the built tools first on PATH.
func toolEnv(extra ...string) []string {
	env := append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return append(env, extra...)
}

// copySample copies the files names of testdata/sample into the folder
// dir, making it if need be: a capture of the sample's a test can change.
func copySample(t *testing.T, dir string, names ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("testdata", "sample", n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o666); err != nil {
			t.Fatal(err)
		}
	}
}

func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not on PATH (scripts/install-deps installs it)", tool)
		}
	}
}

// readmeBlocks returns the fenced code blocks of README.md after heading.
func readmeBlocks(t *testing.T, from, to string) []string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, from)
	if i < 0 {
		t.Fatalf("README.md has no %q", from)
	}
	s = s[i:]
	if to != "" {
		if j := strings.Index(s, to); j >= 0 {
			s = s[:j]
		}
	}
	var cmds []string
	for _, m := range regexp.MustCompile("(?s)```\n(.*?)```").FindAllStringSubmatch(s, -1) {
		cmds = append(cmds, strings.Split(strings.TrimSpace(m[1]), "\n")...)
	}
	return cmds
}

// TestReadmeSetup runs the README's first set-up command (with the output
// folder moved to a temporary one) and checks it printed a viewer folder per
// run of the sample and wrote the stats CSVs. The second set-up command
// (scripts/test) is the command that runs this test.
func TestReadmeSetup(t *testing.T) {
	needTools(t, "llvm-objdump-19", "bash")
	cmds := readmeBlocks(t, "## Set up on a fresh Debian machine", "## A short tour")
	if len(cmds) != 2 {
		t.Fatalf("README has %d set-up commands, want exactly 2: %q", len(cmds), cmds)
	}
	if cmds[1] != "scripts/test" || !strings.Contains(cmds[0], "/tmp/attkit-sample") {
		t.Fatalf("unexpected set-up commands %q", cmds)
	}
	out := t.TempDir()
	cmd := exec.Command("bash", "-c", strings.ReplaceAll(cmds[0], "/tmp/attkit-sample", out))
	cmd.Dir = repoRoot(t)
	cmd.Env = toolEnv("GOBIN=" + binDir)
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cmds[0], err, stderrOf(err))
	}
	want := filepath.Join(out, "ui_output_sample1") + "\n" + filepath.Join(out, "ui_output_sample2") + "\n"
	if string(stdout) != want {
		t.Errorf("printed %q, want %q", stdout, want)
	}
	for _, f := range []string{"ui_output_sample1/filenames.json", "ui_output_sample2/code.json",
		"stats_ui_output_sample1.csv", "stats_ui_output_sample2.csv"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
		}
	}
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// TestReadmeTour runs every command of the README's tour, in order, in a
// temporary folder holding a link to the repository's testdata, and checks
// each exits 0 and produces what the README says.
func TestReadmeTour(t *testing.T) {
	needTools(t, "llvm-objdump-19", "jq", "bash", "go")
	cmds := readmeBlocks(t, "## A short tour", "## The tools")
	if len(cmds) < 10 {
		t.Fatalf("only %d tour commands found", len(cmds))
	}
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(repoRoot(t), "testdata"), filepath.Join(dir, "testdata")); err != nil {
		t.Fatal(err)
	}
	// ../shared/real beside the repository, where the real captures are.
	real := testutil.RealDir()
	if real != "" {
		if err := os.Symlink(filepath.Dir(real), filepath.Join(filepath.Dir(dir), "shared")); err != nil {
			t.Fatal(err)
		}
	}
	outputs := map[string][]byte{}
	for _, c := range cmds {
		if strings.Contains(c, "../shared/real") && real == "" {
			t.Logf("%s: skipped, the real-hardware corpus ../shared/real is absent", c)
			continue
		}
		cmd := exec.Command("bash", "-c", c)
		cmd.Dir = dir
		cmd.Env = toolEnv()
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", c, err, stderr.String())
		}
		if stderr.Len() > 0 && !strings.Contains(c, "pprof") {
			t.Errorf("%s wrote to stderr: %s", c, stderr.String())
		}
		outputs[c] = stdout.Bytes()
	}
	// What the README says the commands produce.
	for _, f := range []string{"sample.idx", "code.json", "se0.rec", "se1.rec", "stats.csv",
		"stats-simd0.csv", "sample.pb.gz", "ui_output_run1/filenames.json", "ui_output_run1/code.json", "timeline.json", "report.html"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
		}
	}
	var jqOut, gojqOut []byte
	for c, out := range outputs {
		switch {
		case strings.Contains(c, "--jq 'select(.type == \"wave\")"):
			gojqOut = out
		case strings.Contains(c, "| jq -c"):
			jqOut = out
		case strings.HasPrefix(c, "go tool pprof -top"):
			if !bytes.Contains(out, []byte("flat%")) || !bytes.Contains(out, []byte(" lds_reduce\n")) {
				t.Errorf("pprof -top shows no kernels:\n%s", out)
			}
		case strings.HasPrefix(c, "go tool pprof -sample_index=exposed"):
			if !bytes.Contains(out, []byte("Type: exposed")) || !regexp.MustCompile(`(?m)^ *[0-9]+cycles .* [0-9a-f]{16} lds_reduce `).Match(out) {
				t.Errorf("pprof exposed view shows no instructions:\n%s", out)
			}
		case strings.Contains(c, "--by line"):
			if !bytes.HasPrefix(out, []byte("Source,Hitcount,Latency,Stall,Idle,HiddenIdle,HiddenStall,HiddenIssue,Hidden,Exposed,PCs\r\n")) ||
				!regexp.MustCompile(`\ntestdata/kernels/src/helper\.h:8,[1-9]`).Match(out) {
				t.Errorf("att-stats --by line: no header or no executed helper.h line:\n%s", out)
			}
		case strings.HasPrefix(c, "go tool pprof -peek"):
			if !regexp.MustCompile(`(?m)\|\s+loop_sum \(inline\)\n(.*\n)*.*\| mix$`).Match(out) {
				t.Errorf("pprof -peek mix does not show loop_sum inlining it:\n%s", out)
			}
		case strings.Contains(c, "--format top"):
			lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			if len(lines) != 6 || !strings.HasPrefix(lines[0], "Rank NonHidden Total Hidden Hits CodeObj Vaddr") ||
				!regexp.MustCompile(`^ +1 +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +1 0x[0-9a-f]{10}  \S`).MatchString(lines[1]) {
				t.Errorf("att-stats --format top: want a header and 5 ranked PCs:\n%s", out)
			}
		case strings.HasPrefix(c, "att-info testdata/sample"):
			if !bytes.Contains(out, []byte("shader engines: SE 0, 1 of 2 carried instructions")) ||
				!bytes.Contains(out, []byte("verdict: something to analyse")) {
				t.Errorf("att-info on the sample:\n%s", out)
			}
		case strings.HasPrefix(c, "att-info ../shared/real/gfx1100_gemm_0"):
			if !bytes.Contains(out, []byte("shader engines: SE 0, 1 of 6 carried instructions")) ||
				!bytes.Contains(out, []byte("verdict: something to analyse")) {
				t.Errorf("att-info on gfx1100_gemm_0:\n%s", out)
			}
		case strings.HasPrefix(c, "att-name"):
			if !bytes.Contains(out, []byte("31337_1_shader_engine_1_2.att\t1\t2\n")) {
				t.Errorf("att-name: %s", out)
			}
		case strings.Contains(c, "--format json testdata") && strings.HasSuffix(c, "| head -2"):
			if !bytes.HasPrefix(out, []byte(`{"gfxip":9,`)) {
				t.Errorf("first record is not the gfxip: %s", out)
			}
		}
	}
	if len(gojqOut) == 0 || !bytes.Equal(jqOut, gojqOut) {
		t.Errorf("--jq and jq differ:\n--jq: %s\n  jq: %s", gojqOut, jqOut)
	}
	// The tools composed by hand with a pipe make the files att-tool makes
	// (code.json names the code object by the path given, so it differs).
	// att-tool runs here with the tour's environment: where AMD's library
	// is found (ROCPROF_TRACE_DECODER_LIB, a ROCm install), auto decodes
	// with it in both, and its 0.1.6 records are not the native goldens'.
	tool := t.TempDir()
	cmd := exec.Command(filepath.Join(binDir, "att-tool"), "-d", tool, "testdata/sample")
	cmd.Dir, cmd.Env = dir, toolEnv()
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("att-tool on the sample: %v\n%s", err, b)
	}
	golden := filepath.Join(repoRoot(t), "testdata", "golden", "att-tool")
	files := treeFiles(t, filepath.Join(tool, "ui_output_sample2"))
	if want := treeFiles(t, filepath.Join(golden, "ui_output_sample2")); len(files) != len(want) {
		t.Fatalf("att-tool wrote %d files in ui_output_sample2, the golden has %d", len(files), len(want))
	}
	for _, f := range files {
		if f == "code.json" {
			continue
		}
		g, err := os.ReadFile(filepath.Join(dir, "ui_output_run2", f))
		w, _ := os.ReadFile(filepath.Join(tool, "ui_output_sample2", f))
		if err != nil || !bytes.Equal(g, w) {
			t.Errorf("ui_output_run2/%s (by hand) differs from att-tool's ui_output_sample2/%s: %v", f, f, err)
		}
	}
	g, _ := os.ReadFile(filepath.Join(dir, "stats_ui_output_run2.csv"))
	w, _ := os.ReadFile(filepath.Join(tool, "stats_ui_output_sample2.csv"))
	if len(w) == 0 || !bytes.Equal(g, w) {
		t.Error("stats_ui_output_run2.csv (by hand) differs from att-tool's stats_ui_output_sample2.csv")
	}
	stats, _ := os.ReadFile(filepath.Join(dir, "stats.csv"))
	if !bytes.HasPrefix(stats, []byte("CodeObj,Vaddr,Instruction,Hitcount,Latency,Stall,Idle,Source\r\n")) {
		t.Errorf("stats.csv header: %.80q", stats)
	}
	simd0, _ := os.ReadFile(filepath.Join(dir, "stats-simd0.csv"))
	if bytes.Equal(simd0, stats) {
		t.Error("--jq selection of SIMD 0 changed nothing")
	}
}
