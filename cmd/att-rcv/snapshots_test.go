package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/rcv"
	"github.com/attkit/attkit/internal/wire"
)

// A code.json index brings the snapshots of its directory along.
func TestSnapshotsFromCodeJSON(t *testing.T) {
	dir, index, a, _ := sampleInputs(t)
	in := filepath.Dir(index)
	writeFile(t, in, "snapshots.json", []byte(`{"/": {"src": {"k.cl": "source_0_k.cl"}}}`))
	writeFile(t, in, "source_0_k.cl", []byte("kernel void k() {}\n"))
	out := filepath.Join(dir, "ui")
	if code, _, stderr := runCmd(t, nil, "-d", out, "--index", index, a); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range []string{"snapshots.json", "source_0_k.cl"} {
		got, _ := os.ReadFile(filepath.Join(out, f))
		want, _ := os.ReadFile(filepath.Join(in, f))
		if len(want) == 0 || !bytes.Equal(got, want) {
			t.Errorf("%s: got %q, want %q", f, got, want)
		}
	}
	if err := rcv.CheckFolder(out); err != nil {
		t.Error(err)
	}
}

// An index stream brings the source files its rows name.
func TestSnapshotsFromIndexStream(t *testing.T) {
	dir, _, a, _ := sampleInputs(t)
	src := filepath.Join(dir, "src")
	os.Mkdir(src, 0o755)
	kcl := writeFile(t, src, "k.cl", []byte("kernel void k() {}\n"))
	ix := sampleIndex()
	for i := range ix.Rows {
		ix.Rows[i].Source = strings.ReplaceAll(ix.Rows[i].Source, "/src/k.cl", kcl)
	}
	var buf bytes.Buffer
	if err := wire.WriteIndex(&buf, ix); err != nil {
		t.Fatal(err)
	}
	index := writeFile(t, dir, "index.idx", buf.Bytes())
	out := filepath.Join(dir, "ui")
	if code, _, stderr := runCmd(t, nil, "-d", out, "--index", index, a); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got, err := os.ReadFile(filepath.Join(out, "source_0_k.cl"))
	if err != nil || string(got) != "kernel void k() {}\n" {
		t.Errorf("source_0_k.cl: %q, %v", got, err)
	}
	tree, _ := os.ReadFile(filepath.Join(out, "snapshots.json"))
	if !strings.Contains(string(tree), `"k.cl": "source_0_k.cl"`) {
		t.Errorf("snapshots.json: %s", tree)
	}
	if err := rcv.CheckFolder(out); err != nil {
		t.Error(err)
	}
	// The code.json written is the index stream's rows with counters.
	code, err := wire.ReadIndexFile(filepath.Join(out, "code.json"))
	if err != nil {
		t.Fatal(err)
	}
	if code.Rows[1].Hit != 1 || code.Rows[1].Source != kcl+":3" {
		t.Errorf("code.json row 1: %+v", code.Rows[1])
	}
}
