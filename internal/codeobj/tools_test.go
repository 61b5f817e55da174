package codeobj

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

const kernelsDir = "../../testdata/kernels"

// needTool returns the path of a versioned LLVM tool ("llvm-objdump-19")
// or skips the test.
func needTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not found: install the Debian package llvm-%s", name, name[strings.LastIndexByte(name, '-')+1:])
	}
	return p
}

// llvmFor returns the LLVM version whose tools the tests run on the
// committed object at path: 19, which the outputs are pinned to, except
// for the gfx950 (MI350) objects, which clang-22 builds and LLVM 19 cannot
// disassemble.
func llvmFor(path string) string {
	if filepath.Base(filepath.Dir(path)) == "gfx950" {
		return "22"
	}
	return "19"
}

// toolFor returns the path of the LLVM tool (name without its version)
// for the committed object at path, or skips the test.
func toolFor(t testing.TB, name, path string) string {
	t.Helper()
	return needTool(t, name+"-"+llvmFor(path))
}

// committedObjects returns the committed test code objects.
func committedObjects(t testing.TB) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(kernelsDir, "*", "*.hsaco"))
	if err != nil || len(m) < 9 {
		t.Fatalf("committed code objects missing under %s: %v %v", kernelsDir, m, err)
	}
	sort.Strings(m)
	return m
}

// buildOne indexes one object with llvm-objdump-19 (-22 for gfx950).
func buildOne(t testing.TB, path string, id uint64) *wire.Index {
	t.Helper()
	od := &Objdump{Explicit: toolFor(t, "llvm-objdump", path)}
	in, err := Normalize([]Input{{ID: id, Path: path}})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := Build(context.Background(), in, Options{Objdump: od, Producer: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// runTool runs a command and returns its standard output.
func runTool(t testing.TB, name string, args ...string) []byte {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v: %s", name, args, err, stderr.String())
	}
	return out
}
