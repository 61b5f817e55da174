package wire

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLayoutGenerated: layout_gen.go and internal/cdec's convert_gen.go
// are what internal/gen makes from layout.txt, so the table stays the one
// definition of the layout: edit layout.txt and run
// `go generate ./internal/wire/`.
func TestLayoutGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the generator")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to run the generator:", err)
	}
	dir := t.TempDir()
	out, cdec := filepath.Join(dir, "layout_gen.go"), filepath.Join(dir, "convert_gen.go")
	cmd := exec.Command(gobin, "run", "./internal/gen", "-in", "layout.txt", "-out", out, "-cdec", cdec)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run ./internal/gen: %v\n%s", err, msg)
	}
	for _, f := range []struct{ made, committed string }{{out, "layout_gen.go"}, {cdec, "../cdec/convert_gen.go"}} {
		want, err := os.ReadFile(f.made)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(f.committed)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what layout.txt makes: run go generate ./internal/wire/", f.committed)
		}
		if !strings.HasPrefix(string(got), "// Code generated") {
			t.Errorf("%s does not say it is generated", f.committed)
		}
	}
}
