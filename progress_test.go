package attkit_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAttToolProgressPhases: with --progress every phase of a run says
// that it started, in order: indexing, decoding, writing, committing (the
// periodic lines follow each phase's own counters). On 478e79a progress
// covered the decode only.
func TestAttToolProgressPhases(t *testing.T) {
	needTools(t, "llvm-objdump-19")
	out := filepath.Join(t.TempDir(), "out")
	_, stderr, code := attTool(t, nil, "--progress", "--backend", "native", "-d", out, "testdata/sample")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	at := 0
	for _, want := range []string{
		"att-tool: indexing 1 code objects\n",
		"att-tool: decoding 4 traces (20.3 kB), ",
		"att-tool: writing 2 runs\n",
		"att-tool: committing 2 outputs\n",
		"att-tool: stats CSV: ",
	} {
		i := strings.Index(stderr[at:], want)
		if i < 0 {
			t.Fatalf("stderr lacks %q after byte %d:\n%s", want, at, stderr)
		}
		at += i + len(want)
	}
}
