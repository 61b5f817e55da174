package attkit_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/testutil"
)

// crossBuild builds the commands pkgs for goos/goarch without cgo into a
// temporary directory and returns it.
func crossBuild(t *testing.T, goos, goarch string, pkgs ...string) string {
	t.Helper()
	dir := t.TempDir()
	args := append([]string{"build", "-o", dir + string(os.PathSeparator)}, pkgs...)
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=%s GOARCH=%s go build %s: %v\n%s", goos, goarch, strings.Join(pkgs, " "), err, out)
	}
	return dir
}

// output runs cmd and returns its standard output, failing the test on a
// non-zero exit.
func output(t *testing.T, cmd *exec.Cmd) []byte {
	t.Helper()
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, e.String())
	}
	return o.Bytes()
}

// TestArm64Decode runs the linux/arm64 att-decode under qemu-aarch64-static
// on the sample's traces and on one shader engine of every real capture:
// its records must be those of this machine's build, byte for byte.
func TestArm64Decode(t *testing.T) {
	qemu, err := exec.LookPath("qemu-aarch64-static")
	if err != nil {
		t.Skip("qemu-aarch64-static not on PATH: install Debian's qemu-user-static (scripts/install-deps --test)")
	}
	arm := crossBuild(t, "linux", "arm64", "./cmd/att-decode")
	type input struct{ trace, index string }
	var inputs []input
	for _, se := range []string{"0_1", "1_2"} {
		inputs = append(inputs, input{trace: "testdata/sample/31337_1_shader_engine_" + se + ".att"})
	}
	if testutil.RealDir() != "" {
		for _, c := range testutil.RealCorpus(t) {
			inputs = append(inputs, input{trace: c.Traces[0].File, index: c.CodeJSON})
		}
	} else {
		t.Log("../shared/real is absent: checking the sample only")
	}
	for _, in := range inputs {
		args := []string{"--backend", "native", "--quiet"}
		if in.index != "" {
			args = append(args, "--index", in.index)
		}
		args = append(args, in.trace)
		want := output(t, exec.Command(filepath.Join(binDir, "att-decode"), args...))
		got := output(t, exec.Command(qemu, append([]string{filepath.Join(arm, "att-decode")}, args...)...))
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the arm64 build's records differ from this machine's (%d bytes against %d)", in.trace, len(got), len(want))
		}
		if len(want) == 0 {
			t.Errorf("%s: no records", in.trace)
		}
	}
}

// TestWindowsTool runs the windows/amd64 att-tool under wine on the sample
// (its traces with the code.json co-index makes of its code object: wine
// cannot run the Linux llvm-objdump for a Windows process) and on a real
// capture, and compares the trees it writes with those of this machine's
// att-tool on the same inputs: the same files, the same bytes.
func TestWindowsTool(t *testing.T) {
	wine := testutil.NewWine(t)
	win := crossBuild(t, "windows", "amd64", "./cmd/att-tool")
	exe := filepath.Join(win, "att-tool.exe")

	type capture struct{ name, dir string }
	sample := filepath.Join(t.TempDir(), "sample")
	copySample(t, sample, "31337_1_shader_engine_0_1.att", "31337_1_shader_engine_0_2.att",
		"31337_1_shader_engine_1_1.att", "31337_1_shader_engine_1_2.att")
	needTools(t, "llvm-objdump-19")
	output(t, exec.Command(filepath.Join(binDir, "co-index"), "--format", "code.json", "-o",
		filepath.Join(sample, "code.json"), "testdata/sample/31337_1_code_object_id_1.hsaco"))
	captures := []capture{{"sample", sample}}
	if testutil.RealDir() != "" {
		for _, c := range testutil.RealCorpus(t) {
			if c.Name == "gfx1100_gemm_0" {
				captures = append(captures, capture{c.Name, filepath.Dir(c.CodeJSON)})
			}
		}
	} else {
		t.Log("../shared/real is absent: checking the sample only")
	}
	for _, c := range captures {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			linux, windows := filepath.Join(out, "linux"), filepath.Join(out, "windows")
			here := output(t, exec.Command(filepath.Join(binDir, "att-tool"), "--backend", "native", "-j", "2", "-d", linux, c.dir))
			got := output(t, wine.Command(exe, "--backend", "native", "-j", "2", "-d", windows, c.dir))
			// It names the same folders, as Windows paths (wine's Z: is /).
			var want []string
			for _, l := range strings.Fields(string(here)) {
				want = append(want, "Z:"+strings.ReplaceAll(strings.Replace(l, linux, windows, 1), "/", `\`))
			}
			if g := strings.Fields(string(got)); strings.Join(g, "\n") != strings.Join(want, "\n") {
				t.Errorf("stdout %q, want %q", g, want)
			}
			lf, wf := treeFiles(t, linux), treeFiles(t, windows)
			if strings.Join(lf, "\n") != strings.Join(wf, "\n") {
				t.Fatalf("the Windows build wrote other files:\n%s\nthan this machine's:\n%s", strings.Join(wf, "\n"), strings.Join(lf, "\n"))
			}
			if len(lf) == 0 {
				t.Fatal("no files written")
			}
			for _, f := range lf {
				a, err := os.ReadFile(filepath.Join(linux, f))
				if err != nil {
					t.Fatal(err)
				}
				b, err := os.ReadFile(filepath.Join(windows, f))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(a, b) {
					t.Errorf("%s differs (%d bytes on Windows, %d here)", f, len(b), len(a))
				}
			}
		})
	}
}
