package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

const kernels = "../../testdata/kernels"

func needObjdump(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("llvm-objdump-19"); err != nil {
		t.Skip("llvm-objdump-19 not found: install the Debian package llvm-19")
	}
}

// co runs co-index in-process with the default tool search narrowed to
// llvm-objdump-19 (through $LLVM_OBJDUMP) unless the args name one.
func co(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	if os.Getenv("LLVM_OBJDUMP") == "" {
		if p, err := exec.LookPath("llvm-objdump-19"); err == nil {
			t.Setenv("LLVM_OBJDUMP", p)
		}
	}
	var stdout, stderr bytes.Buffer
	code := run(args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// golden compares got with testdata/name (testutil.Golden). The checkout's
// absolute path is replaced by $ROOT so that the files do not depend on
// where the repository lives.
func golden(t *testing.T, name, got string) {
	t.Helper()
	testutil.Golden(t, name, []byte(strings.ReplaceAll(got, repoRoot(t), "$ROOT")))
}

func TestCodeJSONGolden(t *testing.T) {
	needObjdump(t)
	for _, c := range []struct {
		golden string
		args   []string
	}{
		{"gfx942-kernels-nodebug.code.json", []string{"--format", "code.json",
			kernels + "/gfx942/kernels_code_object_id_1.hsaco", kernels + "/gfx942/nodebug_code_object_id_3.hsaco"}},
		{"gfx1201-kernels.code.json", []string{"--format=code.json", "--code-object", "9=" + kernels + "/gfx1201/kernels_code_object_id_1.hsaco"}},
	} {
		t.Run(c.golden, func(t *testing.T) {
			code, stdout, stderr := co(t, c.args...)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.HasPrefix(stdout, "{\n  \"code\": [\n    [\n") || strings.HasSuffix(stdout, "\n") {
				t.Errorf("not the §5.1 layout: %.40q … %q", stdout, stdout[len(stdout)-10:])
			}
			golden(t, c.golden, stdout)
			pythonRoundTrip(t, stdout)
		})
	}
}

// pythonRoundTrip checks the §5.1 byte format against Python itself when
// python3 is installed: json.dumps(json.loads(x), indent=2) == x.
func pythonRoundTrip(t *testing.T, doc string) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Log("python3 not installed: byte format checked by the golden file only")
		return
	}
	cmd := exec.Command(py, "-c", "import json,sys; sys.stdout.write(json.dumps(json.loads(sys.stdin.read()), indent=2))")
	cmd.Stdin = strings.NewReader(doc)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	if string(out) != doc {
		t.Errorf("Python writes the document differently")
	}
}

func TestFormatsAgree(t *testing.T) {
	needObjdump(t)
	obj := kernels + "/gfx1100/kernels_code_object_id_1.hsaco"
	_, cj, _ := co(t, "--format", "code.json", obj)
	code, mp, stderr := co(t, obj)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	ix, err := wire.ReadIndex(strings.NewReader(mp), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ix.Header.Objdump, "llvm-objdump-19") || !strings.HasPrefix(ix.Header.Producer, "co-index ") {
		t.Errorf("header %+v", ix.Header)
	}
	if len(ix.Objects) != 1 || ix.Objects[0].Target != "gfx1100" || ix.Objects[0].ID != 1 || len(ix.Objects[0].Ranges) == 0 {
		t.Errorf("objects %+v", ix.Objects)
	}
	if got := string(ix.CodeJSON()); got != cj {
		t.Errorf("code.json of the index stream differs from --format code.json")
	}
	for i := range ix.Rows {
		if r := ix.Rows[i]; r.Kind == wire.RowInstruction && r.Size == 0 {
			t.Fatalf("row %d without size", i)
		}
	}

	code, js, _ := co(t, "--format", "json", obj)
	if code != 0 {
		t.Fatal(code)
	}
	types := map[string]int{}
	lines := strings.Split(strings.TrimSuffix(js, "\n"), "\n")
	for i, l := range lines {
		var v struct {
			Type, Kind, Text string
			Vaddr, Size      uint64
			Line             int64
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		types[v.Type]++
		if v.Type == "row" {
			r := ix.Rows[types["row"]-1]
			if v.Text != r.Text || v.Vaddr != r.Vaddr || v.Size != r.Size || v.Line != r.Line {
				t.Fatalf("json row %+v, index row %+v", v, r)
			}
		}
	}
	if types["header"] != 1 || types["object"] != 1 || types["row"] != len(ix.Rows) || types["kernel"] != len(ix.Kernels) {
		t.Errorf("json lines by type: %v", types)
	}
}

func TestDirectoryInput(t *testing.T) {
	needObjdump(t)
	code, stdout, stderr := co(t, "--format", "json", kernels+"/gfx1030")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var objs []string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, `{"type":"object"`) {
			objs = append(objs, l)
		}
	}
	if len(objs) != 2 || !strings.Contains(objs[0], `"id":2,`) || !strings.Contains(objs[0], "big_code_object_id_2.hsaco") ||
		!strings.Contains(objs[1], `"id":1,`) || !strings.Contains(objs[1], `"target":"gfx1030"`) {
		t.Errorf("objects of the directory:\n%s", strings.Join(objs, "\n"))
	}
	code, _, stderr = co(t, t.TempDir())
	if code != 1 || !strings.Contains(stderr, "no .hsaco/.out/.co/.o code objects") {
		t.Errorf("empty directory: exit %d %q", code, stderr)
	}
}

func TestOutputFile(t *testing.T) {
	needObjdump(t)
	out := filepath.Join(t.TempDir(), "k.code.json")
	code, stdout, stderr := co(t, "--format", "code.json", "-o", out, kernels+"/gfx90a/kernels_code_object_id_1.hsaco")
	if code != 0 || stdout != "" || stderr != "" {
		t.Fatalf("exit %d, stdout %d bytes, stderr %q", code, len(stdout), stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil || !bytes.Contains(b, []byte(`"hsaco": [`)) {
		t.Errorf("output file: %v", err)
	}
	ents, _ := os.ReadDir(filepath.Dir(out))
	if len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
}

func TestSnapshots(t *testing.T) {
	needObjdump(t)
	dir := t.TempDir()
	t.Chdir(repoRoot(t)) // the objects' DWARF paths are relative to the repository root
	code, _, stderr := co(t, "--snapshots", dir, "-o", filepath.Join(dir, "index"), "testdata/kernels/gfx942/kernels_code_object_id_1.hsaco")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	tree, err := os.ReadFile(filepath.Join(dir, "snapshots.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "testdata": {
    "kernels": {
      "src": {
        "kernels.cl": "source_0_kernels.cl",
        "helper.h": "source_1_helper.h"
      }
    }
  }
}`
	if string(tree) != want {
		t.Errorf("snapshots.json:\n%s\nwant\n%s", tree, want)
	}
	for copyName, orig := range map[string]string{"source_0_kernels.cl": "testdata/kernels/src/kernels.cl", "source_1_helper.h": "testdata/kernels/src/helper.h"} {
		a, err1 := os.ReadFile(filepath.Join(dir, copyName))
		b, err2 := os.ReadFile(orig)
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("%s is not a copy of %s: %v %v", copyName, orig, err1, err2)
		}
	}
}

func TestErrors(t *testing.T) {
	tmp := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good, err := os.ReadFile(kernels + "/gfx942/kernels_code_object_id_1.hsaco")
	if err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	text := write("text_code_object_id_1.hsaco", []byte("not an object\n"))
	trunc := write("trunc_code_object_id_1.hsaco", good[:300])
	for _, c := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no inputs", nil, 2, "no code objects given"},
		{"bad format", []string{"--format", "yaml", text}, 2, "--format"},
		{"bad pair", []string{"--code-object", "x=" + text}, 2, "want ID=PATH"},
		{"unnamed", []string{"a.hsaco", "b.hsaco"}, 2, "Cannot infer code object IDs for multiple unnamed inputs: a.hsaco, b.hsaco"},
		{"duplicate", []string{"--code-object", "1=" + text, "k_1.hsaco"}, 2, "Code object id 1 is used by both k_1.hsaco and " + text + "."},
		{"placed and unplaced share an id", []string{"--code-object", "1=" + text + "@0x1000", "k_1.hsaco"}, 2, "Code object id 1 is used by both k_1.hsaco and " + text + "."},
		{"no path before @", []string{"--code-object", "0=@0x1000"}, 2, "no PATH before @ADDR"},
		{"placed objects overlap", []string{"--code-object", "0=" + kernels + "/gfx942/kernels_code_object_id_1.hsaco@0x100000",
			"--code-object", "0=" + kernels + "/gfx942/nodebug_code_object_id_3.hsaco@0x101000"}, 2, "overlaps"},
		{"placed beyond 2^64", []string{"--code-object", "0=" + kernels + "/gfx942/kernels_code_object_id_1.hsaco@0xffffffffffffff00"}, 2,
			"beyond the 64-bit address space"},
		{"not ELF", []string{text}, 3, text + ": not an ELF code object"},
		{"x86 ELF", []string{"--code-object", "4=" + self}, 3, "not an AMDGPU code object (ELF machine EM_X86_64)"},
		{"truncated", []string{trunc}, 3, trunc + ": unreadable ELF file"},
		{"missing", []string{filepath.Join(tmp, "gone_1.hsaco")}, 1, "gone_1.hsaco: no such file or directory"},
		{"relocatable", []string{kernels + "/gfx942/relocatable_code_object_id_4.o"}, 1,
			"relocatable_code_object_id_4.o: reading DWARF: cannot relocate the debug sections of this ET_REL object"},
		{"no objdump", []string{"--objdump", filepath.Join(tmp, "no-such-objdump"), kernels + "/gfx942/kernels_code_object_id_1.hsaco"}, 1, "no-such-objdump"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(tmp, "out-"+strings.ReplaceAll(c.name, " ", "-"))
			args := append([]string{"-o", out}, c.args...)
			code, stdout, stderr := co(t, args...)
			if code != c.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, c.code, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q", stdout)
			}
			if !strings.HasPrefix(stderr, "co-index: ") || !strings.Contains(stderr, c.msg) {
				t.Errorf("stderr %q, want co-index: …%s…", stderr, c.msg)
			}
			if c.code != 2 && strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr is not one line: %q", stderr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("output file written on failure")
			}
		})
	}
}

func TestHelpAndVersion(t *testing.T) {
	code, stdout, _ := co(t, "--help")
	if code != 0 || !strings.Contains(stdout, "--code-object=ID=PATH") || !strings.Contains(stdout, "--snapshots=DIR") {
		t.Errorf("help: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = co(t, "--version")
	if code != 0 || !strings.HasPrefix(stdout, "co-index ") {
		t.Errorf("version: exit %d %q", code, stdout)
	}
}

// TestPlacedCodeObjects: --code-object ID=PATH@ADDR indexes the object at
// its load address, every address ADDR + ELF vaddr in code object ID; placed
// objects may share an id side by side.
func TestPlacedCodeObjects(t *testing.T) {
	needObjdump(t)
	const load = 0x7f3a00001000
	obj := kernels + "/gfx942/kernels_code_object_id_1.hsaco"
	other := kernels + "/gfx942/dwarf4_code_object_id_6.hsaco"
	index := func(args ...string) *wire.Index {
		t.Helper()
		code, stdout, stderr := co(t, args...)
		if code != 0 || stderr != "" {
			t.Fatalf("co-index %v: exit %d: %s", args, code, stderr)
		}
		ix, err := wire.ReadIndex(strings.NewReader(stdout), "index")
		if err != nil {
			t.Fatal(err)
		}
		return ix
	}
	plain := index(obj)
	for _, arg := range []string{fmt.Sprintf("0=%s@%#x", obj, load), fmt.Sprintf("0=%s@%d", obj, load)} {
		placed := index("--code-object", arg)
		if len(placed.Rows) != len(plain.Rows) || len(placed.Rows) < 50 {
			t.Fatalf("%s: %d rows, the object has %d", arg, len(placed.Rows), len(plain.Rows))
		}
		for i, r := range plain.Rows {
			want := r
			want.CodeObj, want.Vaddr = 0, load+r.Vaddr
			if got := placed.Rows[i]; !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: row %d = %+v, want %+v", arg, i, got, want)
			}
		}
		if len(placed.Kernels) != len(plain.Kernels) || len(plain.Kernels) == 0 {
			t.Fatalf("%s: kernels %v, want %v", arg, placed.Kernels, plain.Kernels)
		}
		for i, k := range plain.Kernels {
			if g := placed.Kernels[i]; g.Address != load+k.Address || g.CodeObj != 0 || g.Name != k.Name {
				t.Errorf("%s: kernel %+v, want %s at %#x", arg, g, k.Name, load+k.Address)
			}
		}
		o, p := placed.Objects[0], plain.Objects[0]
		if o.ID != 0 || len(o.Ranges) != len(p.Ranges) || o.Ranges[0].Begin != load+p.Ranges[0].Begin || o.Ranges[0].End != load+p.Ranges[0].End {
			t.Errorf("%s: object %+v, want the ranges of %+v moved by %#x", arg, o, p, load)
		}
	}
	// Two objects in code object 0, 4 GiB apart; a path with '@' in it.
	dir := t.TempDir()
	at := filepath.Join(dir, "k@v2.hsaco")
	data, err := os.ReadFile(other)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(at, data, 0o644)
	both := index("--code-object", fmt.Sprintf("0=%s@%#x", obj, load), "--code-object", fmt.Sprintf("0=%s@%#x", at, load+1<<32))
	two := index("--code-object", "0="+at)
	if n := len(plain.Rows) + len(two.Rows); len(both.Rows) != n {
		t.Fatalf("two placed objects: %d rows, want %d", len(both.Rows), n)
	}
	second := both.Rows[len(plain.Rows)]
	if second.CodeObj != 0 || second.Vaddr != load+1<<32+two.Rows[0].Vaddr || second.Text != two.Rows[0].Text {
		t.Errorf("first row of the second object = %+v, want %+v at %#x", second, two.Rows[0], load+1<<32)
	}
	if both.Objects[1].Path != at {
		t.Errorf("second object's path %q, want %q", both.Objects[1].Path, at)
	}
}

// coStdin runs co-index with stdin as standard input (a plain reader, no
// file: no Seek, no Stat).
func coStdin(t *testing.T, stdin []byte, args ...string) (int, string, string) {
	t.Helper()
	if p, err := exec.LookPath("llvm-objdump-19"); err == nil && os.Getenv("LLVM_OBJDUMP") == "" {
		t.Setenv("LLVM_OBJDUMP", p)
	}
	var stdout, stderr bytes.Buffer
	code := run(args, iotest.HalfReader(bytes.NewReader(stdin)), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestStdin: "-" reads the code object from standard input, as a path or
// as the PATH of --code-object; the index is the file's, but for the name
// "<stdin>", which is also the name errors use.
func TestStdin(t *testing.T) {
	needObjdump(t)
	obj := kernels + "/gfx942/kernels_code_object_id_1.hsaco"
	data, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(obj)
	code, fromFile, stderr := co(t, "--format", "json", obj)
	if code != 0 {
		t.Fatalf("file: exit %d: %s", code, stderr)
	}
	want := strings.ReplaceAll(fromFile, abs, "<stdin>")
	for _, args := range [][]string{{"--format", "json", "--code-object", "1=-"}, {"--format", "json", "-o", "-", "--code-object", "1=-"}} {
		code, got, stderr := coStdin(t, data, args...)
		if code != 0 || stderr != "" {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
		if got != want {
			t.Errorf("%q: index of standard input differs from the file's:\n%s", args, got)
		}
	}
	// A positional "-" is untagged: id 0.
	code, got, stderr := coStdin(t, data, "--format", "json", "-")
	if code != 0 || !strings.Contains(got, `{"type":"object","id":0,"path":"<stdin>","target":"gfx942"`) {
		t.Errorf("positional -: exit %d %q\n%.300s", code, stderr, got)
	}

	for _, c := range []struct {
		name  string
		stdin []byte
		args  []string
		code  int
		msg   string
	}{
		{"text", []byte("not an object\n"), []string{"-"}, 3, "co-index: <stdin>: not an ELF code object\n"},
		{"empty", nil, []string{"-"}, 3, "co-index: <stdin>: not an ELF code object\n"},
		{"truncated", data[:300], []string{"-"}, 3, "co-index: <stdin>: unreadable ELF file"},
		{"twice", data, []string{"--code-object", "1=-", "--code-object", "2=-"}, 2, "co-index: standard input (-) given twice\n"},
	} {
		code, stdout, stderr := coStdin(t, c.stdin, c.args...)
		if code != c.code || stdout != "" || !strings.HasPrefix(stderr, c.msg) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stdout %d bytes, stderr %q; want exit %d, %q", c.name, code, len(stdout), stderr, c.code, c.msg)
		}
	}
}
