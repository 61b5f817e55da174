package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

// TestSeedStreams keeps testdata/*.rec, the fuzz seeds, in step with the
// writer: they are rewritten by -update and must fold without error.
func TestSeedStreams(t *testing.T) {
	worked := filepath.Join("testdata", "worked.rec")
	runs := filepath.Join("testdata", "runs.rec")
	if testutil.Update() {
		writeStream(t, worked, part{run: 1, waves: []wire.Wave{workedWave(0), workedWave(1)}})
		writeStream(t, runs, part{run: 1, waves: []wire.Wave{workedWave(0)}},
			part{run: 2, se: 1, waves: []wire.Wave{workedWave(2)}})
	}
	r := runTool(t, nil, worked)
	if r.code != 0 || !strings.Contains(r.stdout, "\r\n1,4880,,2,20,20,16,\r\n") {
		t.Errorf("worked.rec: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Without an index: the four PCs, and first, by (code object,
	// address), the unresolved PC, at the line after theirs.
	r = runTool(t, nil, "--merge-runs", "--format", "json", runs)
	if r.code != 0 || strings.Count(r.stdout, "\n") != 5 || !strings.HasPrefix(r.stdout, `{"codeobj":0,"vaddr":0,"line":5,`) {
		t.Errorf("runs.rec: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// FuzzStats feeds arbitrary bytes as the record stream: att-stats must end
// with exit 0 or a message and a documented exit code, never panic.
func FuzzStats(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.rec")
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		for _, args := range [][]string{{"--merge-runs"}, {"--format", "code.json", "--merge-runs"}, {"--format", "pprof", "--run", "1"},
			{"--format", "hidden.csv", "--merge-runs"}, {"--format", "top", "--merge-runs", "-n", "0"},
			{"--by", "line", "--merge-runs"}, {"--by", "kernel", "--format", "json", "--merge-runs"}} {
			r := runTool(t, data, args...)
			switch r.code {
			case 0:
			case 1, 2, 3:
				if !strings.HasPrefix(r.stderr, "att-stats: ") || !strings.HasSuffix(r.stderr, "\n") {
					t.Fatalf("%v: exit %d with stderr %q", args, r.code, r.stderr)
				}
			default:
				t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
			}
		}
	})
}
