package wire

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLayoutGenerated: layout_gen.go is what internal/gen makes from
// layout.txt, so the table stays the one definition of the layout: edit
// layout.txt and run `go generate ./internal/wire/`.
func TestLayoutGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the generator")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to run the generator:", err)
	}
	out := filepath.Join(t.TempDir(), "layout_gen.go")
	cmd := exec.Command(gobin, "run", "./internal/gen", "-in", "layout.txt", "-out", out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run ./internal/gen: %v\n%s", err, msg)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("layout_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("layout_gen.go is not what layout.txt makes: run go generate ./internal/wire/")
	}
	if !strings.HasPrefix(string(got), "// Code generated") {
		t.Fatalf("layout_gen.go does not say it is generated")
	}
}
