package publish

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOwnership: --force (a Set that replaces) replaces a folder only when
// it carries our mark and holds nothing else, and a file beside it only
// when the mark lists it; every other refusal says what was found and
// never suggests --force.
func TestOwnership(t *testing.T) {
	root := t.TempDir()
	ui := filepath.Join(root, "ui")

	// A folder no tool of ours wrote (a capture): refused, even with replace.
	os.Mkdir(ui, 0o777)
	write(t, filepath.Join(ui, "trace.att"), "input")
	write(t, filepath.Join(ui, "code.json"), "input")
	s := newResult(t, true, root, "one")
	err := s.Commit()
	if !errors.Is(err, ErrNotOurs) || errors.Is(err, ErrExists) || strings.Contains(err.Error(), "--force") ||
		!strings.Contains(err.Error(), "code.json") {
		t.Errorf("replacing a folder without the mark: %v", err)
	}
	if got := entries(t, ui); got != "code.json trace.att" {
		t.Errorf("the folder changed: %s", got)
	}
	if Owned(ui) {
		t.Error("Owned of a folder without the mark")
	}
	os.RemoveAll(ui)

	// Our folder: without replace, refused with --force suggested; with
	// replace, replaced.
	if err := newResult(t, false, root, "one").Commit(); err != nil {
		t.Fatal(err)
	}
	if !Owned(ui) {
		t.Fatal("not Owned after a commit")
	}
	m := readManifest(ui)
	if m == nil || m.tool == "" || strings.Join(m.files, " ") != "wave.json" || strings.Join(m.siblings, " ") != "stats_ui.csv" {
		t.Fatalf("manifest %+v", m)
	}
	s = newResult(t, false, root, "two")
	if err := s.Check(); !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "--force") {
		t.Errorf("our folder without replace: %v", err)
	}
	s.Abort()

	// A file the user added to our folder: refused, naming it.
	write(t, filepath.Join(ui, "notes.txt"), "mine")
	err = newResult(t, true, root, "two").Commit()
	if !errors.Is(err, ErrNotOurs) || !strings.Contains(err.Error(), "notes.txt") || strings.Contains(err.Error(), "--force") {
		t.Errorf("our folder with a file of the user's: %v", err)
	}
	if read(t, filepath.Join(ui, "notes.txt")) != "mine" {
		t.Error("the user's file is gone")
	}
	os.Remove(filepath.Join(ui, "notes.txt"))

	// A CSV beside our folder that no run of ours wrote: refused.
	if err := newResult(t, true, root, "two").Commit(); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(root, "stats_ui.csv"))
	write(t, filepath.Join(root, "stats_ui.csv"), "the user's")
	s = NewSet(true)
	d, _ := s.Dir(filepath.Join(root, "ui2"))
	write(t, filepath.Join(d, "wave.json"), "x")
	s.File(filepath.Join(root, "stats_ui.csv"))
	if err := s.Commit(); !errors.Is(err, ErrNotOurs) || strings.Contains(err.Error(), "--force") {
		t.Errorf("replacing an unlisted CSV: %v", err)
	}
	if read(t, filepath.Join(root, "stats_ui.csv")) != "the user's" || entries(t, root) != "stats_ui.csv ui" {
		t.Errorf("after the refusal: %s", entries(t, root))
	}
}

// TestNotInput: no output is, or holds, an input: the same name, a
// symbolic link, a hard link, a folder above it.
func TestNotInput(t *testing.T) {
	root := t.TempDir()
	in := filepath.Join(root, "x.att")
	write(t, in, "trace")
	os.Symlink("x.att", filepath.Join(root, "sym.att"))
	if err := os.Link(in, filepath.Join(root, "hard.att")); err != nil {
		t.Skip("no hard links:", err)
	}
	Input(in)
	defer ResetInputs()
	for _, out := range []string{"x.att", "sym.att", "hard.att"} {
		err := WriteFile(filepath.Join(root, out), func(w io.Writer) error { _, err := io.WriteString(w, "output"); return err })
		if !errors.Is(err, ErrNotOurs) || !strings.Contains(err.Error(), "input") {
			t.Errorf("-o %s: %v", out, err)
		}
	}
	if read(t, in) != "trace" || entries(t, root) != "hard.att sym.att x.att" {
		t.Errorf("after the refusals: %s, %q", entries(t, root), read(t, in))
	}
	// A folder holding the input, even one with our mark.
	sub := filepath.Join(root, "ui")
	os.Mkdir(sub, 0o777)
	s := NewSet(true)
	s.Dir(sub)
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(sub, "y.att"), "trace")
	m := readManifest(sub)
	m.files = append(m.files, "y.att")
	os.WriteFile(filepath.Join(sub, ManifestName), m.encode(), 0o666)
	Input(filepath.Join(sub, "y.att"))
	s = NewSet(true)
	s.Dir(sub)
	if err := s.Commit(); !errors.Is(err, ErrNotOurs) || !strings.Contains(err.Error(), "holds an input") {
		t.Errorf("replacing a folder holding an input: %v", err)
	}
	if read(t, filepath.Join(sub, "y.att")) != "trace" {
		t.Error("the input is gone")
	}
}

// TestRollbackAside: the portable path (no atomic exchange, the old folder
// renamed aside) also puts the old result back when a later target fails.
func TestRollbackAside(t *testing.T) {
	noExchange = true
	defer func() { noExchange = false }()
	TestCommitRollback(t)
	TestCommitNewReplaceRefuse(t)
}

// TestListFiles: the mark lists a folder's files in filepath.WalkDir's
// order, subfolders included, the mark left out.
func TestListFiles(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a.json", "a/b.json", "a/c/d", "a-b", "se1_wv2.json", "se1_wv10.json", ManifestName, "z/" + ManifestName} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), nil, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, p)
		if err == nil && !d.IsDir() && rel != ManifestName {
			want = append(want, filepath.ToSlash(rel))
		}
		return nil
	})
	got, err := listFiles(dir, "", nil)
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("listFiles = %q, %v; want %q", got, err, want)
	}
}
