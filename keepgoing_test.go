package attkit_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttToolKeepGoing: with --keep-going a corrupt trace of one shader
// engine is reported and left out, the other traces and runs are still
// written, and the run ends with exit 1 and a summary naming what was
// skipped; a run whose traces all failed is not written. Without it the
// first failure ends the run (TestAttToolBadInputs).
func TestAttToolKeepGoing(t *testing.T) {
	needTools(t, "llvm-objdump-19")
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cap := filepath.Join(tmp, "cap")
	copySample(t, cap, "31337_1_code_object_id_1.hsaco", "31337_1_shader_engine_0_1.att", "31337_1_shader_engine_1_1.att",
		"31337_1_shader_engine_0_2.att", "31337_1_shader_engine_1_2.att")
	bad := filepath.Join(cap, "31337_1_shader_engine_1_1.att")
	os.WriteFile(bad, make([]byte, 64), 0o644) // not a thread trace

	out := filepath.Join(tmp, "out")
	stdout, stderr, code := attTool(t, nil, "--keep-going", "--backend", "native", "--base-name", "x", "-d", out, cap)
	summary := "att-tool: --keep-going: 1 of 4 traces skipped: " + bad + "; 2 of 2 runs written\n"
	if code != 1 || !strings.Contains(stderr, "att-tool: "+bad+": not a thread trace") || !strings.HasSuffix(stderr, summary) {
		t.Fatalf("exit %d, stderr %q; want 1 and the summary %q", code, stderr, summary)
	}
	if want := filepath.Join(out, "ui_output_x1") + "\n" + filepath.Join(out, "ui_output_x2") + "\n"; stdout != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
	for name, want := range map[string]bool{
		"ui_output_x1/se0_perfcounter.json": true, "ui_output_x1/se1_perfcounter.json": false,
		"ui_output_x2/se0_perfcounter.json": true, "ui_output_x2/se1_perfcounter.json": true,
		"stats_ui_output_x1.csv": true, "stats_ui_output_x2.csv": true,
	} {
		if _, err := os.Stat(filepath.Join(out, name)); (err == nil) != want {
			t.Errorf("%s: present %v, want %v", name, err == nil, want)
		}
	}
	if h := hiddenEntries(t, tmp); len(h) > 0 {
		t.Errorf("temporaries left: %q", h)
	}

	// A run whose traces all fail is not written; the other is.
	os.WriteFile(filepath.Join(cap, "31337_1_shader_engine_0_1.att"), []byte("junk\n"), 0o644)
	out2 := filepath.Join(tmp, "out2")
	stdout, stderr, code = attTool(t, nil, "--keep-going", "--backend", "native", "--base-name", "x", "-d", out2, cap)
	if code != 1 || stdout != filepath.Join(out2, "ui_output_x2")+"\n" ||
		!strings.Contains(stderr, "2 of 4 traces skipped") || !strings.Contains(stderr, "1 of 2 runs written, not written: "+filepath.Join(out2, "ui_output_x1")+" (all its traces failed)") {
		t.Errorf("exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(out2, "ui_output_x1")); !os.IsNotExist(err) {
		t.Errorf("the run of failed traces was written (%v)", err)
	}
}
