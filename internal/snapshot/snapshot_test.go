package snapshot

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/attkit/attkit/internal/wire"
)

func TestPaths(t *testing.T) {
	ix := &wire.Index{Rows: []wire.Row{
		{Kind: wire.RowFunction, Text: "; _k", Source: "k.cl:1"}, // label rows do not count
		{Text: "s_nop 0", Source: "/src/k.cl:3"},
		{Text: "s_nop 0", Source: "/src/k.cl:3"},
		{Text: "s_nop 0", Source: "/src/./inc/../a.h:12 -> /src/k.cl:40"},
		{Text: "s_nop 0", Source: "./rel/x.hpp:? -> ../up/y-1+2.cpp:7"},
		{Text: "s_nop 0", Source: "/home/my dir/k.cl:3"},
		{Text: "s_nop 0", Source: "noext:3"},
		{Text: "; label_x", Source: "/lab.cl:1"},
		{Text: "s_nop 0", Source: ""},
	}}
	want := []string{"/src/k.cl", "/src/a.h", "rel/x.hpp", "../up/y-1+2.cpp", "dir/k.cl"}
	if got := Paths(ix); !reflect.DeepEqual(got, want) {
		t.Errorf("Paths:\n got %q\nwant %q", got, want)
	}
}

func TestWriteFiles(t *testing.T) {
	src := t.TempDir()
	a := filepath.Join(src, "src", "k.cl")
	b := filepath.Join(src, "inc", "x.h")
	leaf := filepath.Join(src, "src", "k.cl", "deeper.h") // collides with the leaf k.cl: not in the tree
	for _, p := range []string{a, b} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("// "+p+"\n"), 0o644)
	}
	dir := filepath.Join(t.TempDir(), "out")
	n, err := WriteFiles(dir, []string{a, filepath.Join(src, "missing.cl"), b, a, src, leaf}, Options{})
	if err != nil || n != 2 {
		t.Fatalf("WriteFiles: %d, %v", n, err)
	}
	for name, orig := range map[string]string{"source_0_k.cl": a, "source_1_x.h": b} {
		got, _ := os.ReadFile(filepath.Join(dir, name))
		want, _ := os.ReadFile(orig)
		if string(got) != string(want) {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	tree, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	// The tree nests the components of the temporary directory too.
	want := "{\n  \"/\": {"
	if string(tree[:len(want)]) != want || tree[len(tree)-1] != '}' {
		t.Errorf("snapshots.json:\n%s", tree)
	}
	// Only the two leaves, at their paths.
	var walk func(v any, path string)
	leaves := map[string]string{}
	walk = func(v any, path string) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				p := path + "/" + k
				if path == "" && k == "/" {
					p = ""
				}
				walk(c, p)
			}
		case string:
			leaves[path] = x
		}
	}
	var doc any
	if err := jsonUnmarshal(tree, &doc); err != nil {
		t.Fatal(err)
	}
	walk(doc, "")
	if !reflect.DeepEqual(leaves, map[string]string{a: "source_0_k.cl", b: "source_1_x.h"}) {
		t.Errorf("leaves %v", leaves)
	}

	// Nothing to copy: no snapshots.json.
	empty := filepath.Join(t.TempDir(), "none")
	if n, err := WriteFiles(empty, []string{"/no/such/file.cl"}, Options{}); n != 0 || err != nil {
		t.Errorf("WriteFiles of nothing: %d %v", n, err)
	}
	if _, err := os.Stat(empty); !os.IsNotExist(err) {
		t.Errorf("directory created for nothing")
	}
}

func TestInsertCollision(t *testing.T) {
	tree := insert(nil, []string{"a", "b"}, "s0")
	tree = insert(tree, []string{"a", "b", "c"}, "s1") // b is a leaf: abandoned
	tree = insert(tree, []string{"a", "d"}, "s2")
	got := string(marshal(tree))
	want := "{\n  \"a\": {\n    \"b\": \"s0\",\n    \"d\": \"s2\"\n  }\n}"
	if got != want {
		t.Errorf("tree:\n%s\nwant\n%s", got, want)
	}
}

func TestCopy(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "ui")
	old := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, n := range []string{FileName, "source_0_k.cl", "other.txt"} {
		p := filepath.Join(src, n)
		os.WriteFile(p, []byte(n), 0o644)
		os.Chtimes(p, old, old)
	}
	os.Mkdir(filepath.Join(src, "source_dir"), 0o755)
	if err := Copy(src, dst, Options{}); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dst)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !reflect.DeepEqual(names, []string{"snapshots.json", "source_0_k.cl"}) {
		t.Errorf("copied %v", names)
	}
	if st, err := os.Stat(filepath.Join(dst, "source_0_k.cl")); err != nil || !st.ModTime().Equal(old) {
		t.Errorf("modification time not kept: %v %v", st.ModTime(), err)
	}
	if err := Copy(dst, dst, Options{}); err != nil {
		t.Errorf("copy onto itself: %v", err)
	}
}
