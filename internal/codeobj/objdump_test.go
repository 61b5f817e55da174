package codeobj

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func lookIn(dir string) func(string) (string, error) {
	return func(name string) (string, error) {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err != nil {
			return "", exec.ErrNotFound
		}
		return p, nil
	}
}

func touch(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestCandidatesOrder(t *testing.T) {
	d := t.TempDir()
	touch(t, filepath.Join(d, "home/rocm/llvm/bin/llvm-objdump"))
	touch(t, filepath.Join(d, "home/rocm/bin/llvm-objdump"))
	touch(t, filepath.Join(d, "path/bin/llvm-objdump"))
	os.MkdirAll(filepath.Join(d, "path/llvm/bin/llvm-objdump"), 0o755) // a directory: skipped
	touch(t, filepath.Join(d, "venv/lib/python3.12/site-packages/_rocm_sdk_core/lib/llvm/bin/llvm-objdump"))
	touch(t, filepath.Join(d, "bin/llvm-objdump-17"))
	touch(t, filepath.Join(d, "bin/llvm-objdump"))
	touch(t, filepath.Join(d, "bin/llvm-objdump-19"))
	o := &Objdump{
		Getenv: envOf(map[string]string{"HOME": filepath.Join(d, "home"), "ROCM_HOME": "~/rocm",
			"ROCM_PATH": filepath.Join(d, "path"), "VIRTUAL_ENV": filepath.Join(d, "venv")}),
		LookPath: lookIn(filepath.Join(d, "bin")),
	}
	got := o.Candidates()
	var want []string
	for _, p := range []string{"home/rocm/llvm/bin/llvm-objdump", "home/rocm/bin/llvm-objdump", "path/bin/llvm-objdump",
		"venv/lib/python3.12/site-packages/_rocm_sdk_core/lib/llvm/bin/llvm-objdump",
		"bin/llvm-objdump-19", "bin/llvm-objdump-17", "bin/llvm-objdump"} {
		want = append(want, filepath.Join(d, p))
	}
	if _, err := os.Stat("/opt/rocm/bin/llvm-objdump"); err == nil {
		t.Skip("/opt/rocm exists on this machine: the order test assumes it does not")
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Candidates:\n got %q\nwant %q", got, want)
	}
	o.Getenv = envOf(map[string]string{"LLVM_OBJDUMP": "/x/objdump", "ROCM_PATH": filepath.Join(d, "path")})
	if got := o.Candidates(); !reflect.DeepEqual(got, []string{"/x/objdump"}) {
		t.Errorf("with $LLVM_OBJDUMP: %q", got)
	}
	o.Explicit = "/y/objdump"
	if got := o.Candidates(); !reflect.DeepEqual(got, []string{"/y/objdump"}) {
		t.Errorf("with --objdump: %q", got)
	}
}

// TestObjdumpSkipsUnsupported puts Debian's LLVM 14 objdump, which cannot
// open gfx942 objects, first on the search path: it must be skipped for
// the next one, and the index must name the one used.
func TestObjdumpSkipsUnsupported(t *testing.T) {
	v19 := needTool(t, "llvm-objdump-19")
	v14, err := exec.LookPath("llvm-objdump-14")
	if err != nil {
		t.Skip("llvm-objdump-14 not installed: nothing that fails on gfx942 to skip")
	}
	d := t.TempDir()
	os.Symlink(v14, filepath.Join(d, "llvm-objdump-18"))
	os.Symlink(v19, filepath.Join(d, "llvm-objdump"))
	o := &Objdump{Getenv: envOf(nil), LookPath: lookIn(d)}
	if _, err := os.Stat("/opt/rocm"); err == nil {
		t.Skip("/opt/rocm exists: its objdump would be tried first")
	}
	path, _ := filepath.Abs(filepath.Join(kernelsDir, "gfx942", "kernels_code_object_id_1.hsaco"))
	ix, err := Build(context.Background(), []Input{{ID: 1, Path: path}}, Options{Objdump: o})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(d, "llvm-objdump") + " ("; !strings.HasPrefix(ix.Header.Objdump, want) ||
		!strings.Contains(ix.Header.Objdump, "LLVM version 19") {
		t.Errorf("header names %q, want %s…LLVM version 19…", ix.Header.Objdump, want)
	}
	if len(ix.Rows) < 100 {
		t.Errorf("%d rows", len(ix.Rows))
	}

	// Only the old one: a clear error listing the failure.
	os.Remove(filepath.Join(d, "llvm-objdump"))
	os.Symlink(v14, filepath.Join(d, "llvm-objdump"))
	_, err = Build(context.Background(), []Input{{ID: 1, Path: path}}, Options{Objdump: &Objdump{Getenv: envOf(nil), LookPath: lookIn(d)}})
	if err == nil || !strings.Contains(err.Error(), "no llvm-objdump could disassemble") || !strings.Contains(err.Error(), "can't find target") {
		t.Errorf("error %v", err)
	}
}

func TestNoObjdump(t *testing.T) {
	if _, err := os.Stat("/opt/rocm"); err == nil {
		t.Skip("/opt/rocm exists")
	}
	path, _ := filepath.Abs(filepath.Join(kernelsDir, "gfx942", "kernels_code_object_id_1.hsaco"))
	o := &Objdump{Getenv: envOf(nil), LookPath: lookIn(t.TempDir())}
	_, err := Build(context.Background(), []Input{{ID: 1, Path: path}}, Options{Objdump: o})
	if !errors.Is(err, ErrNoObjdump) {
		t.Errorf("error %v, want ErrNoObjdump", err)
	}
	o = &Objdump{Explicit: filepath.Join(t.TempDir(), "missing-objdump")}
	_, err = Build(context.Background(), []Input{{ID: 1, Path: path}}, Options{Objdump: o})
	if err == nil || !strings.Contains(err.Error(), "missing-objdump") {
		t.Errorf("explicit missing tool: %v", err)
	}
}

func TestBadObjects(t *testing.T) {
	good, err := os.ReadFile(filepath.Join(kernelsDir, "gfx942", "kernels_code_object_id_1.hsaco"))
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.ReadFile("/proc/self/exe")
	if err != nil || len(self) < 64 || string(self[:4]) != "\x7fELF" {
		t.Skip("no host ELF executable to test with")
	}
	for name, data := range map[string][]byte{
		"empty":     nil,
		"text":      []byte("hello, world\n"),
		"magic":     []byte("\x7fELF"),
		"truncated": good[:200],
		"x86":       self,
	} {
		_, err := Parse(data, name)
		var fe *FormatError
		if !errors.As(err, &fe) || fe.ExitCode() != 3 || !strings.HasPrefix(err.Error(), name+": ") {
			t.Errorf("%s: error %v, want a FormatError naming the file", name, err)
		}
	}
	// Damage past the header: reading still never panics, and either
	// fails or yields an object.
	for off := 64; off < len(good); off += 97 {
		b := append([]byte(nil), good...)
		for i := off; i < off+16 && i < len(b); i++ {
			b[i] ^= 0xa5
		}
		Parse(b, "damaged")
	}
	if err := normalizePaths([]string{"/nonexistent/x.hsaco"}); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if err := normalizePaths([]string{t.TempDir()}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory: %v", err)
	}
	txt := filepath.Join(t.TempDir(), "k.hsaco")
	os.WriteFile(txt, []byte("not elf"), 0o644)
	var fe *FormatError
	if err := normalizePaths([]string{txt}); !errors.As(err, &fe) || !strings.Contains(err.Error(), "not an ELF code object") {
		t.Errorf("text file: %v", err)
	}
}

func normalizePaths(paths []string) error {
	var in []Input
	for i, p := range paths {
		in = append(in, Input{ID: uint64(i), Path: p})
	}
	_, err := Normalize(in)
	return err
}

// TestMixedTargets indexes objects of two targets in one run: one tool
// serves both, line numbers run on across objects, ids stay apart.
func TestMixedTargets(t *testing.T) {
	od := &Objdump{Explicit: needTool(t, "llvm-objdump-19")}
	in, err := Normalize([]Input{
		{ID: 3, Path: filepath.Join(kernelsDir, "gfx1201", "kernels_code_object_id_1.hsaco")},
		{ID: 1, Path: filepath.Join(kernelsDir, "gfx90a", "kernels_code_object_id_1.hsaco")},
	})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := Build(context.Background(), in, Options{Objdump: od})
	if err != nil {
		t.Fatal(err)
	}
	if len(ix.Objects) != 2 || ix.Objects[0].Target != "gfx1201" || ix.Objects[1].Target != "gfx90a" {
		t.Fatalf("objects %+v", ix.Objects)
	}
	if strings.Contains(ix.Header.Objdump, ";") || !strings.Contains(ix.Header.Objdump, "llvm-objdump-19") {
		t.Errorf("objdump %q", ix.Header.Objdump)
	}
	switched := false
	for i, r := range ix.Rows {
		if r.Line != int64(i+1) {
			t.Fatalf("row %d has line %d", i, r.Line)
		}
		if i > 0 && ix.Rows[i-1].CodeObj == 3 && r.CodeObj == 1 {
			switched = true
		} else if i > 0 && r.CodeObj != ix.Rows[i-1].CodeObj {
			t.Fatalf("rows of the objects interleave at %d", i)
		}
	}
	if !switched || ix.Kernels[0].CodeObj != 3 || ix.Kernels[len(ix.Kernels)-1].CodeObj != 1 {
		t.Errorf("object order lost")
	}
}

// TestObjdumpSkipsSilentTool: a tool that succeeds without printing a
// single instruction for an object with code is skipped too.
func TestObjdumpSkipsSilentTool(t *testing.T) {
	v19 := needTool(t, "llvm-objdump-19")
	if _, err := os.Stat("/opt/rocm"); err == nil {
		t.Skip("/opt/rocm exists: its objdump would be tried first")
	}
	d := t.TempDir()
	if err := os.WriteFile(filepath.Join(d, "llvm-objdump-19"), []byte("#!/bin/sh\necho 'file format elf64-amdgpu'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Symlink(v19, filepath.Join(d, "llvm-objdump"))
	o := &Objdump{Getenv: envOf(nil), LookPath: lookIn(d)}
	path, _ := filepath.Abs(filepath.Join(kernelsDir, "gfx90a", "kernels_code_object_id_1.hsaco"))
	ix, err := Build(context.Background(), []Input{{ID: 1, Path: path}}, Options{Objdump: o})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ix.Header.Objdump, filepath.Join(d, "llvm-objdump")+" (") || len(ix.Rows) < 100 {
		t.Errorf("header %q, %d rows", ix.Header.Objdump, len(ix.Rows))
	}
}

// TestObjdumpFallsBackForGfx950: with Debian's llvm-objdump-19 and -22 on
// the search path, one search keeps 19 for gfx942 (its rows are those of
// 19 alone, so indexes stay byte-identical) and falls back to 22 for
// gfx950, which 19 aborts on; the header names both.
func TestObjdumpFallsBackForGfx950(t *testing.T) {
	v19 := needTool(t, "llvm-objdump-19")
	v22, err := exec.LookPath("llvm-objdump-22")
	if err != nil {
		t.Fatal("llvm-objdump-22 not found: LLVM 19 cannot disassemble gfx950 (MI350); run scripts/install-deps (Debian's llvm-22)")
	}
	if _, err := os.Stat("/opt/rocm"); err == nil {
		t.Skip("/opt/rocm exists: its objdump would be tried first")
	}
	d := t.TempDir()
	os.Symlink(v19, filepath.Join(d, "llvm-objdump-19"))
	os.Symlink(v22, filepath.Join(d, "llvm-objdump-22"))
	o := &Objdump{Getenv: envOf(nil), LookPath: lookIn(d)}
	p942, _ := filepath.Abs(filepath.Join(kernelsDir, "gfx942", "kernels_code_object_id_1.hsaco"))
	p950, _ := filepath.Abs(filepath.Join(kernelsDir, "gfx950", "gfx950_code_object_id_7.hsaco"))
	ix, err := Build(context.Background(), []Input{{ID: 1, Path: p942}, {ID: 7, Path: p950}}, Options{Objdump: o})
	if err != nil {
		t.Fatal(err)
	}
	tools := strings.Split(ix.Header.Objdump, "; ")
	if len(tools) != 2 || !strings.HasPrefix(tools[0], filepath.Join(d, "llvm-objdump-19")+" (") ||
		!strings.Contains(tools[0], "LLVM version 19") || !strings.HasPrefix(tools[1], filepath.Join(d, "llvm-objdump-22")+" (") ||
		!strings.Contains(tools[1], "LLVM version 22") {
		t.Errorf("header names %q, want llvm-objdump-19 (gfx942) then llvm-objdump-22 (gfx950)", ix.Header.Objdump)
	}
	alone := buildOne(t, p942, 1)
	var rows942 []wire.Row
	prng := 0
	for _, r := range ix.Rows {
		if r.CodeObj == 1 {
			rows942 = append(rows942, r)
		} else if strings.HasPrefix(r.Text, "v_prng_b32") {
			prng++
		}
	}
	if !reflect.DeepEqual(rows942, alone.Rows) {
		t.Errorf("gfx942 rows differ from those of llvm-objdump-19 alone")
	}
	if prng != 2 {
		t.Errorf("%d v_prng_b32 rows in the gfx950 object, want 2 (prng_chain and its callable copy)", prng)
	}
}
