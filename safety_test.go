package attkit_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// copyFiles copies the regular files of dir src (not its folders) into dst
// and returns their names.
func copyFiles(t *testing.T, src, dst string) []string {
	t.Helper()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, e.Name())
	}
	return names
}

// sameFiles fails the test unless every name in dir holds what it holds in
// src.
func sameFiles(t *testing.T, label, src, dir string, names []string) {
	t.Helper()
	for _, n := range names {
		a, _ := os.ReadFile(filepath.Join(src, n))
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: input %s changed or gone: %v", label, n, err)
		}
	}
}

func runIn(t *testing.T, dir, tool string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, tool), args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stderr.String(), code
}

// TestForceNeverTouchesInputs: in a real capture, att-tool --force -d . .
// deleted every input on 478e79a (the capture holds a code.json, so it was
// taken for an earlier viewer folder); now the run's folder goes inside
// it and every input stays. att-rcv --force -d . in a folder of other files
// deleted them, its own input too; now it refuses, without suggesting
// --force.
func TestForceNeverTouchesInputs(t *testing.T) {
	needTools(t, "llvm-objdump-19")
	src := filepath.Join(repoRoot(t), "..", "shared", "real", "gfx950_gemm_0")
	if _, err := os.Stat(src); err != nil {
		t.Skipf("no real capture at %s (../shared/real absent)", src)
	}
	capDir := t.TempDir()
	names := copyFiles(t, src, capDir)
	if len(names) < 30 {
		t.Fatalf("the capture has %d files", len(names))
	}
	for _, force := range []bool{true, false} {
		args := []string{"--backend", "native", "-d", ".", "."}
		if force {
			args = append([]string{"--force"}, args...)
		}
		stderr, code := runIn(t, capDir, "att-tool", args...)
		sameFiles(t, "att-tool -d .", src, capDir, names)
		if force && code != 0 {
			t.Errorf("att-tool --force -d . .: exit %d: %s", code, stderr)
		}
		if !force && (code != 1 || !strings.Contains(stderr, "use --force")) {
			// The second run finds the first's folder inside: ours.
			t.Errorf("att-tool -d . . again: exit %d: %s", code, stderr)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(capDir, "ui_output_*", "filenames.json")); len(m) != 1 {
		t.Errorf("no viewer folder inside the capture: %v", m)
	}

	// att-rcv --force -d . among other files, its input one of them.
	dir := t.TempDir()
	rec := filepath.Join(dir, "se0.rec")
	if _, code := runIn(t, dir, "att-decode", "--backend", "native", "--index", filepath.Join(src, "code.json"), "-o", rec,
		filepath.Join(src, "1_1_shader_engine_0_1.att")); code != 0 {
		t.Fatal("att-decode failed")
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
	recData, _ := os.ReadFile(rec)
	for _, args := range [][]string{{"--force", "-d", ".", "se0.rec"}, {"-d", ".", "se0.rec"}} {
		stderr, code := runIn(t, dir, "att-rcv", args...)
		if code != 1 || strings.Contains(stderr, "--force") || !strings.Contains(stderr, "no attkit tool wrote") {
			t.Errorf("att-rcv %v: exit %d: %q", args, code, stderr)
		}
		if b, _ := os.ReadFile(rec); !bytes.Equal(b, recData) {
			t.Errorf("att-rcv %v: its input changed", args)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != "mine" {
			t.Errorf("att-rcv %v: the other file is gone", args)
		}
	}
}

// TestOutputIsInput: -o naming the input (by its name, a symbolic link or
// a hard link) replaced the input on 478e79a; now it is refused and the
// input stays.
func TestOutputIsInput(t *testing.T) {
	needTools(t, "llvm-objdump-19")
	dir := t.TempDir()
	sample := filepath.Join(repoRoot(t), "testdata", "sample")
	for _, n := range []string{"31337_1_shader_engine_0_1.att", "31337_1_code_object_id_1.hsaco"} {
		b, _ := os.ReadFile(filepath.Join(sample, n))
		os.WriteFile(filepath.Join(dir, n), b, 0o644)
	}
	trace, object := "31337_1_shader_engine_0_1.att", "31337_1_code_object_id_1.hsaco"
	if _, code := runIn(t, dir, "co-index", "-o", "x.idx", object); code != 0 {
		t.Fatal("co-index failed")
	}
	if _, code := runIn(t, dir, "att-decode", "--backend", "native", "--index", "x.idx", "-o", "x.rec", trace); code != 0 {
		t.Fatal("att-decode failed")
	}
	os.Symlink(trace, filepath.Join(dir, "link.att"))
	os.Link(filepath.Join(dir, "x.rec"), filepath.Join(dir, "hard.rec"))
	for _, c := range []struct {
		tool  string
		args  []string
		input string
	}{
		{"att-decode", []string{"--backend", "native", "--index", "x.idx", "-o", trace, trace}, trace},
		{"att-decode", []string{"--backend", "native", "--index", "x.idx", "-o", "link.att", trace}, trace},
		{"att-decode", []string{"--backend", "native", "--index", "x.idx", "-o", "x.idx", trace}, "x.idx"},
		{"att-stats", []string{"--index", "x.idx", "-o", "x.rec", "x.rec"}, "x.rec"},
		{"att-stats", []string{"--index", "x.idx", "-o", "hard.rec", "x.rec"}, "x.rec"},
		{"att-timeline", []string{"--index", "x.idx", "-o", "x.rec", "x.rec"}, "x.rec"},
		{"co-index", []string{"-o", object, object}, object},
	} {
		before, _ := os.ReadFile(filepath.Join(dir, c.input))
		stderr, code := runIn(t, dir, c.tool, c.args...)
		if code != 1 || !strings.Contains(stderr, "input") {
			t.Errorf("%s %v: exit %d: %q", c.tool, c.args, code, stderr)
		}
		if after, _ := os.ReadFile(filepath.Join(dir, c.input)); !bytes.Equal(before, after) {
			t.Errorf("%s %v: the input %s changed", c.tool, c.args, c.input)
		}
	}
	if h := hiddenEntries(t, dir); len(h) > 0 {
		t.Errorf("temporaries left: %q", h)
	}
}

// TestOutputModes: outputs were 0644 whatever the umask on 478e79a, and an
// earlier 0600 CSV was widened; now files are 0666 and folders 0777 less
// the umask, and a replaced output keeps its mode.
func TestOutputModes(t *testing.T) {
	needTools(t, "llvm-objdump-19", "sh")
	sample := filepath.Join(repoRoot(t), "testdata", "sample")
	for _, umask := range []string{"077", "022"} {
		out := filepath.Join(t.TempDir(), "ui")
		attToolUmask := func(args ...string) {
			t.Helper()
			cmd := exec.Command("sh", append([]string{"-c", "umask " + umask + " && exec \"$0\" \"$@\"", filepath.Join(binDir, "att-tool")}, args...)...)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("umask %s: att-tool %v: %v\n%s", umask, args, err, b)
			}
		}
		run1 := []string{filepath.Join(sample, "31337_1_code_object_id_1.hsaco"), filepath.Join(sample, "31337_1_shader_engine_0_1.att"),
			filepath.Join(sample, "31337_1_shader_engine_1_1.att")}
		attToolUmask(append([]string{"--backend", "native", "-d", out}, run1...)...)
		csv := filepath.Join(filepath.Dir(out), "stats_ui.csv")
		wantFile, wantDir := os.FileMode(0o600), os.FileMode(0o700)
		if umask == "022" {
			wantFile, wantDir = 0o644, 0o755
		}
		for p, want := range map[string]os.FileMode{out: wantDir, csv: wantFile, filepath.Join(out, "code.json"): wantFile,
			filepath.Join(out, "filenames.json"): wantFile} {
			if st, err := os.Stat(p); err != nil || st.Mode().Perm() != want {
				t.Errorf("umask %s: %s: mode %v, want %v (%v)", umask, p, st.Mode().Perm(), want, err)
			}
		}
		// An earlier CSV of mode 0600 stays 0600 when replaced.
		os.Chmod(csv, 0o600)
		attToolUmask(append([]string{"--force", "--backend", "native", "-d", out}, run1...)...)
		if st, _ := os.Stat(csv); st.Mode().Perm() != 0o600 {
			t.Errorf("umask %s: the replaced CSV is %v, not 0600", umask, st.Mode().Perm())
		}
	}
}
