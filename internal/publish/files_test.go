package publish

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	d := NewFiles(dir)
	if err := d.WriteFile("a.json", []byte("first, longer")); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFile("a.json", []byte("second")); err != nil {
		t.Fatalf("writing a file twice: %v", err)
	}
	w, err := d.Create("b.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"one ", "two"} {
		if _, err := w.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err == nil {
		t.Error("second Close: no error")
	}
	for name, want := range map[string]string{"a.json": "second", "b.json": "one two"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
	}
	for _, bad := range []string{"", ".", "..", "sub/c.json", "../c.json"} {
		if err := d.WriteFile(bad, nil); err == nil {
			t.Errorf("WriteFile(%q): no error", bad)
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFile("c.json", nil); err == nil {
		t.Error("write after Close: no error")
	}
	if _, err := os.Stat(filepath.Join(dir, "c.json")); err == nil {
		t.Error("write after Close made the file")
	}
	// A folder that is gone: the error names the file.
	gone := NewFiles(filepath.Join(dir, "gone"))
	if err := gone.WriteFile("d.json", nil); err == nil {
		t.Error("missing folder: no error")
	}
}
