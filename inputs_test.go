package attkit_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttToolInputsOnce: a trace given twice (twice on the command line, a
// folder and a file in it, a symbolic link, a hard link) is counted once,
// with a warning; a copy of its bytes under another name too, unless
// --allow-duplicates. On 478e79a each was counted twice with exit 0
// (Hitcount 3 -> 6).
func TestAttToolInputsOnce(t *testing.T) {
	needTools(t, "llvm-objdump-19")
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cap := filepath.Join(tmp, "cap")
	copySample(t, cap, "31337_1_code_object_id_1.hsaco", "31337_1_shader_engine_0_1.att", "31337_1_shader_engine_1_1.att")
	se0 := filepath.Join(cap, "31337_1_shader_engine_0_1.att")
	csvOf := func(t *testing.T, name string, args ...string) (string, string) {
		t.Helper()
		out := filepath.Join(tmp, name)
		args = append([]string{"--backend", "native", "--formats", "csv", "--base-name", "x", "-d", out}, args...)
		_, stderr, code := attTool(t, nil, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		b, err := os.ReadFile(filepath.Join(tmp, "stats_"+name+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b), stderr
	}
	want, stderr := csvOf(t, "once", cap)
	if strings.Contains(stderr, "counted") {
		t.Errorf("a warning without duplicates: %q", stderr)
	}

	link := filepath.Join(tmp, "link.att")
	os.Symlink(se0, link)
	hard := filepath.Join(tmp, "hard", "31337_1_shader_engine_0_1.att")
	os.Mkdir(filepath.Dir(hard), 0o755)
	if err := os.Link(se0, hard); err != nil {
		t.Fatal(err)
	}
	inner := filepath.Join(tmp, "inner")
	os.Mkdir(inner, 0o755)
	os.Symlink(cap, filepath.Join(inner, "cap-link"))
	os.Symlink(se0, filepath.Join(inner, "31337_1_shader_engine_0_1.att"))
	for _, tc := range []struct {
		name string
		args []string
		warn string
	}{
		{"twice", []string{cap, cap}, " given twice: counted once"},
		{"folder-and-file", []string{cap, se0}, se0 + " given twice: counted once"},
		{"symlink", []string{cap, link}, se0 + " given twice: counted once"},
		{"symlink-in-folder", []string{cap, inner}, se0 + " and " + filepath.Join(inner, "31337_1_shader_engine_0_1.att") + " are the same file: counted once"},
		{"hard-link", []string{cap, hard}, se0 + " and " + hard + " are the same file: counted once"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, stderr := csvOf(t, tc.name, tc.args...)
			if got != want {
				t.Errorf("stats CSV differs from one trace's")
			}
			if !strings.Contains(stderr, "att-tool: warning: ") || !strings.Contains(stderr, tc.warn) {
				t.Errorf("stderr %q lacks %q", stderr, tc.warn)
			}
		})
	}

	// The same bytes under another name: counted once, unless
	// --allow-duplicates.
	cp := filepath.Join(tmp, "dup", "31337_1_shader_engine_0_1.att")
	os.Mkdir(filepath.Dir(cp), 0o755)
	b, _ := os.ReadFile(se0)
	os.WriteFile(cp, b, 0o644)
	got, stderr := csvOf(t, "copy", cap, cp)
	if got != want || !strings.Contains(stderr, cp+" has the same content as "+se0+": counted once (--allow-duplicates counts both)") {
		t.Errorf("a copy: CSV same %v, stderr %q", got == want, stderr)
	}
	got, stderr = csvOf(t, "allowed", "--allow-duplicates", cap, cp)
	if got == want || !strings.Contains(stderr, "counted twice (--allow-duplicates)") {
		t.Errorf("--allow-duplicates: CSV changed %v, stderr %q", got != want, stderr)
	}
}
