package publish

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// entries lists dir's names, hidden ones (temporaries) included.
func entries(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}

// newResult makes a Set of a folder holding name=data and a CSV beside it.
func newResult(t *testing.T, replace bool, root, data string) *Set {
	t.Helper()
	s := NewSet(replace)
	d, err := s.Dir(filepath.Join(root, "ui"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(d, "wave.json"), data)
	f, err := s.File(filepath.Join(root, "stats_ui.csv"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, f, data)
	return s
}

func TestCommitNewReplaceRefuse(t *testing.T) {
	root := t.TempDir()
	if err := newResult(t, false, root, "one").Commit(); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, root) + "|" + read(t, filepath.Join(root, "ui", "wave.json")); got != "stats_ui.csv ui|one" {
		t.Fatalf("after the first commit: %s", got)
	}
	// Without replace: refused by Check and by Commit, nothing changes.
	s := newResult(t, false, root, "two")
	var ee *ExistsError
	if err := s.Check(); !errors.As(err, &ee) || ee.Path != filepath.Join(root, "ui") || !errors.Is(err, ErrExists) {
		t.Errorf("Check: %v", err)
	}
	if err := s.Commit(); !errors.Is(err, ErrExists) {
		t.Errorf("Commit without replace: %v", err)
	}
	if got := entries(t, root) + "|" + read(t, filepath.Join(root, "stats_ui.csv")) + "|" + entries(t, filepath.Join(root, "ui")); got != "stats_ui.csv ui|one|.attkit-output wave.json" {
		t.Errorf("after a refused commit: %s", got)
	}

	// With replace: the folder is replaced whole, the CSV too.
	if err := newResult(t, true, root, "three").Commit(); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, root) + "|" + read(t, filepath.Join(root, "stats_ui.csv")) + "|" + entries(t, filepath.Join(root, "ui")); got != "stats_ui.csv ui|three|.attkit-output wave.json" {
		t.Errorf("after replacing: %s", got)
	}
}

// TestCommitRollback: when the second target cannot be written, the first
// is put back as it was.
func TestCommitRollback(t *testing.T) {
	root := t.TempDir()
	if err := newResult(t, false, root, "one").Commit(); err != nil {
		t.Fatal(err)
	}
	s := newResult(t, true, root, "two")
	// A directory where the CSV goes: rename(2) cannot put a file there.
	os.Remove(filepath.Join(root, "stats_ui.csv"))
	os.Mkdir(filepath.Join(root, "stats_ui.csv"), 0o755)
	write(t, filepath.Join(root, "stats_ui.csv", "x"), "x")
	if err := s.Commit(); err == nil {
		t.Fatal("commit over a non-empty directory succeeded")
	}
	if got := entries(t, root) + "|" + read(t, filepath.Join(root, "ui", "wave.json")); got != "stats_ui.csv ui|one" {
		t.Errorf("after a failed commit: %s", got)
	}
}

func TestAbortAndRemoveTemporaries(t *testing.T) {
	root := t.TempDir()
	s := newResult(t, false, root, "one")
	if entries(t, root) == "" {
		t.Fatal("no temporaries")
	}
	s.Abort()
	if got := entries(t, root); got != "" {
		t.Errorf("after Abort: %q", got)
	}
	newResult(t, false, root, "two")
	RemoveTemporaries()
	if got := entries(t, root); got != "" {
		t.Errorf("after RemoveTemporaries: %q", got)
	}
}

func TestWriteFile(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "out.csv")
	write(t, p, "old")
	if err := WriteFile(p, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := WriteFile(p, func(w io.Writer) error { io.WriteString(w, "partial"); return boom }); !errors.Is(err, boom) {
		t.Errorf("failing write: %v", err)
	}
	if got := entries(t, root) + "|" + read(t, p); got != "out.csv|new" {
		t.Errorf("after a failed write: %s", got)
	}
	// A link is followed: its target is replaced, the link stays.
	link := filepath.Join(root, "link.csv")
	os.Symlink("out.csv", link)
	if err := WriteFile(link, func(w io.Writer) error { _, err := io.WriteString(w, "via link"); return err }); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 || read(t, p) != "via link" {
		t.Errorf("link not followed")
	}
	if err := WriteFile(os.DevNull, func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }); err != nil {
		t.Errorf("/dev/null: %v", err)
	}
}
