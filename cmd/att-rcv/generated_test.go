package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/attkit/attkit/internal/rcv"
	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

// Generated traces: internal/sqttgen writes gfx9 traces of the real test
// kernels (testdata/gfx942.index, an index of
// testdata/kernels/gfx942/kernels_code_object_id_1.hsaco), the native
// decoder decodes them, and the record streams are kept in testdata as
// gen_se<N>.rec, so that the folder goldens change only when att-rcv does
// (and this package's tests do not break while those packages are being
// edited). Regenerate them with
//
//	go test -tags gen ./cmd/att-rcv -run Generated -update

const genIndex = "testdata/gfx942.index"

// regenerate, set by gen_test.go (build tag gen), makes the stream of a
// shader engine and writes it to testdata.
var regenerate func(t *testing.T, ix *wire.Index, se uint8) []byte

// genStream returns the record stream of shader engine se from testdata,
// or with -update (and the gen tag) a new one.
func genStream(t *testing.T, ix *wire.Index, se uint8) []byte {
	t.Helper()
	if testutil.Update() && regenerate != nil {
		return regenerate(t, ix, se)
	}
	data, err := os.ReadFile(filepath.Join("testdata", fmt.Sprintf("gen_se%d.rec", se)))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestGoldenGenerated(t *testing.T) {
	ix, err := wire.ReadIndexFile(genIndex)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// The index as a code.json, as a user of upstream's att_tool.py has it.
	index := writeFile(t, dir, "code.json", ix.CodeJSON())
	s0 := writeFile(t, dir, "se0.rec", genStream(t, ix, 0))
	s1 := writeFile(t, dir, "se1.rec", genStream(t, ix, 1))
	out := filepath.Join(dir, "out", "ui_output_gen1")
	if code, _, stderr := runCmd(t, nil, "-d", out, "--index", index, s0, s1); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if err := rcv.CheckFolder(out); err != nil {
		t.Errorf("the viewer would not load the folder completely:\n%v", err)
	}
	testutil.GoldenDir(t, "golden/generated", filepath.Join(dir, "out"))
	// The folder is what an independent reading of §5 derives from the
	// same records.
	checkReference(t, out, []string{s0, s1}, ix)
}
