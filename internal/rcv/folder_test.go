package rcv

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestFolderCommitAndSibling(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "a", "b", "ui")
	f, err := NewFolder(dir, FolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.WriteFile("x.json", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if err := f.WriteSibling("stats_ui.csv", func(w io.Writer) error { _, err := io.WriteString(w, "csv"); return err }); err != nil {
		t.Fatal(err)
	}
	// Nothing visible before Commit.
	if _, err := os.Stat(dir); err == nil {
		t.Error("folder visible before Commit")
	}
	if _, err := os.Stat(filepath.Join(base, "a", "b", "stats_ui.csv")); err == nil {
		t.Error("sibling visible before Commit")
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "x.json")); string(data) != "{}" {
		t.Errorf("x.json: %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(base, "a", "b", "stats_ui.csv")); string(data) != "csv" {
		t.Errorf("sibling: %q", data)
	}
	umask := syscall.Umask(0)
	syscall.Umask(umask)
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o777&^os.FileMode(umask) {
		t.Errorf("folder mode %v with umask %#o", st.Mode(), umask)
	}
	if st, _ := os.Stat(filepath.Join(dir, "x.json")); st.Mode().Perm() != 0o666&^os.FileMode(umask) {
		t.Errorf("file mode %v with umask %#o", st.Mode(), umask)
	}
	entries, _ := os.ReadDir(filepath.Join(base, "a", "b"))
	if len(entries) != 2 {
		t.Errorf("leftovers: %v", entries)
	}
	if err := f.Commit(); err == nil {
		t.Error("second Commit accepted")
	}
}

func TestFolderAbort(t *testing.T) {
	base := t.TempDir()
	os.Mkdir(filepath.Join(base, "keep"), 0o755)
	dir := filepath.Join(base, "keep", "new1", "new2", "ui")
	f, err := NewFolder(dir, FolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.WriteFile("x.json", []byte("{}"))
	f.WriteSibling("s.csv", func(w io.Writer) error { return nil })
	f.Abort()
	f.Abort()
	entries, _ := os.ReadDir(filepath.Join(base, "keep"))
	if len(entries) != 0 {
		t.Errorf("Abort left %v", entries)
	}
}

func TestFolderRefusals(t *testing.T) {
	base := t.TempDir()
	os.WriteFile(filepath.Join(base, "file"), []byte("x"), 0o644)
	os.Mkdir(filepath.Join(base, "full"), 0o755)
	os.WriteFile(filepath.Join(base, "full", "a"), []byte("x"), 0o644)
	for _, tc := range []struct {
		dir  string
		opt  FolderOptions
		want string
	}{
		{"file", FolderOptions{}, "exists and is not a directory"},
		{"file/ui", FolderOptions{}, "not a directory"},
		// A folder no tool of ours wrote: refused, --force or not, and
		// --force is not suggested.
		{"full", FolderOptions{}, "holds files no attkit tool wrote (a): refusing to replace it; choose another output folder"},
		{"full", FolderOptions{Force: true}, "holds files no attkit tool wrote (a): refusing to replace it; choose another output folder"},
	} {
		_, err := NewFolder(filepath.Join(base, tc.dir), tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.dir, err, tc.want)
		}
	}
	// An earlier folder of ours: refused without --force, replaced whole
	// with it.
	ui := filepath.Join(base, "ui")
	write := func(force bool, files ...string) error {
		f, err := NewFolder(ui, FolderOptions{Force: force})
		if err != nil {
			return err
		}
		for _, n := range files {
			f.WriteFile(n, []byte(n))
		}
		return f.Commit()
	}
	if err := write(false, "a", "c"); err != nil {
		t.Fatal(err)
	}
	if err := write(false, "a"); err == nil || !strings.Contains(err.Error(), "use --force to replace it") {
		t.Errorf("an earlier folder without --force: %v", err)
	}
	if err := write(true, "a", "b"); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a": "a", "b": "b"} {
		if data, _ := os.ReadFile(filepath.Join(ui, name)); string(data) != want {
			t.Errorf("%s: %q", name, data)
		}
	}
	if _, err := os.Stat(filepath.Join(ui, "c")); !os.IsNotExist(err) {
		t.Errorf("a file of the earlier folder survived --force: %v", err)
	}
	// A file of the user's in it: refused, and kept.
	os.WriteFile(filepath.Join(ui, "notes.txt"), []byte("mine"), 0o644)
	if err := write(true, "a"); err == nil || !strings.Contains(err.Error(), "notes.txt") || strings.Contains(err.Error(), "--force") {
		t.Errorf("a folder holding a file of the user's: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(ui, "notes.txt")); string(data) != "mine" {
		t.Error("the user's file is gone")
	}
	entries, _ := os.ReadDir(base)
	if len(entries) != 3 {
		t.Errorf("leftovers: %v", entries)
	}
}

// A write error names the file in the folder, not the temporary path.
func TestFolderWriteError(t *testing.T) {
	base := t.TempDir()
	f, err := NewFolder(filepath.Join(base, "ui"), FolderOptions{Create: func(string) (io.WriteCloser, error) {
		return nil, &os.PathError{Op: "open", Path: "/tmp/x", Err: os.ErrPermission}
	}})
	if err != nil {
		t.Fatal(err)
	}
	err = f.WriteFile("code.json", nil)
	if err == nil || err.Error() != "writing "+filepath.Join(base, "ui", "code.json")+": permission denied" {
		t.Errorf("got %v", err)
	}
	f.Abort()
}

// A symbolic link to an empty directory is written through, not replaced.
func TestFolderSymlink(t *testing.T) {
	base := t.TempDir()
	target := filepath.Join(base, "real")
	os.Mkdir(target, 0o755)
	link := filepath.Join(base, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Skip(err)
	}
	f, err := NewFolder(link, FolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.WriteFile("a.json", []byte("{}"))
	if got := filepath.Base(f.Dir()); got != "real" {
		t.Errorf("Dir() %s, want the link's target", f.Dir())
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link replaced: %v %v", st, err)
	}
	if _, err := os.Stat(filepath.Join(target, "a.json")); err != nil {
		t.Error(err)
	}
}

// TestFolderQueuedWrites: files handed to the folder's writer goroutine
// are all there at Commit, in the bytes given even when the caller reuses
// its buffer; a queued file that fails makes Commit fail, naming that file
// in the target folder, and leaves nothing behind.
func TestFolderQueuedWrites(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "ui")
	f, err := NewFolder(dir, FolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 64)
	for i := range 500 {
		buf = append(buf[:0], strings.Repeat("x", i%64)...)
		if err := f.WriteFile(WaveFileName(0, 0, 0, i), buf); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	for i := range 500 {
		data, err := os.ReadFile(filepath.Join(dir, WaveFileName(0, 0, 0, i)))
		if err != nil || string(data) != strings.Repeat("x", i%64) {
			t.Fatalf("file %d: %q, %v", i, data, err)
		}
	}

	dir = filepath.Join(base, "ui2")
	if f, err = NewFolder(dir, FolderOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.WriteFile("a.json", []byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := f.WriteFile("b.json", []byte("b")); err == nil {
		t.Error("write after Close: no error")
	}
	f.Abort()

	if f, err = NewFolder(dir, FolderOptions{}); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(f.TempDir()) // every create fails now
	f.WriteFile("c.json", []byte("c"))
	err = f.Commit()
	if err == nil || !strings.Contains(err.Error(), "writing "+filepath.Join(dir, "c.json")+": ") {
		t.Errorf("Commit after a failed queued write: %v, want an error naming %s", err, filepath.Join(dir, "c.json"))
	}
	if ents, _ := os.ReadDir(base); len(ents) != 1 || ents[0].Name() != "ui" {
		t.Errorf("left in %s: %v", base, ents)
	}
}
