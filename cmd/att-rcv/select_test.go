package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSelect: --kernel and --dispatch write the waves of those kernels
// only, every other file but filenames.json (which lists the wave files)
// and the counters (code.json, the CSV) byte-identical; a selection that
// matches nothing writes nothing (exit 1).
func TestSelect(t *testing.T) {
	dir, index, a, b := sampleInputs(t)
	all := filepath.Join(dir, "all", "ui_output_sample1")
	if code, _, stderr := runCmd(t, nil, "-d", all, "--index", index, a, b); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	waveFiles := func(d string) (waves, others []string) {
		for _, n := range listTree(t, d) {
			if strings.HasPrefix(n, "se") && strings.Contains(n, "_wv") {
				waves = append(waves, n)
			} else if n != "filenames.json" && n != "code.json" && n != ".attkit-output" {
				others = append(others, n)
			}
		}
		return waves, others
	}
	allWaves, allOthers := waveFiles(all)
	both := 0
	for _, k := range []string{"mykernel", "scale*", "_Z5*"} {
		out := filepath.Join(dir, "k"+k[:2], "ui_output_sample1")
		code, _, stderr := runCmd(t, nil, "-d", out, "--index", index, "--kernel", k, a, b)
		if code != 0 {
			t.Fatalf("--kernel %s: exit %d: %s", k, code, stderr)
		}
		waves, others := waveFiles(out)
		if len(waves) == 0 || len(waves) >= len(allWaves) || strings.Join(others, " ") != strings.Join(allOthers, " ") {
			t.Errorf("--kernel %s: wave files %v of %v; other files %v, want %v", k, waves, allWaves, others, allOthers)
		}
		for _, n := range others {
			x, _ := os.ReadFile(filepath.Join(all, n))
			y, _ := os.ReadFile(filepath.Join(out, n))
			if !bytes.Equal(x, y) {
				t.Errorf("--kernel %s: %s differs", k, n)
			}
		}
		if k == "_Z5*" {
			continue // scale* by its symbol
		}
		both += len(waves)
	}
	if both > len(allWaves) {
		t.Errorf("the two kernels' waves: %d files, all: %d", both, len(allWaves))
	}
	none := filepath.Join(dir, "none", "ui_output_sample1")
	code, _, stderr := runCmd(t, nil, "-d", none, "--index", index, "--kernel", "nothing", a, b)
	if code != 1 || !strings.Contains(stderr, `--kernel "nothing" matched no wave; the input's`) {
		t.Errorf("--kernel nothing: exit %d %q", code, stderr)
	}
	if _, err := os.Stat(none); !os.IsNotExist(err) {
		t.Errorf("--kernel nothing left %s: %v", none, err)
	}
	if code, _, stderr := runCmd(t, nil, "-d", none, "--dispatch", "x", a); code != 2 {
		t.Errorf("--dispatch x: exit %d %q", code, stderr)
	}
}
