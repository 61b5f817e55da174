package snapshot

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCopyBounds: a code.json folder's source_* link is followed only
// inside the folder, a copy is never more readable than its source, and
// a file over MaxFileSize is skipped; each skip is named in a warning. On
// 478e79a the link to a 0600 key outside the capture was copied 0644.
func TestCopyBounds(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	outside := t.TempDir()
	key := filepath.Join(outside, "id_key")
	os.WriteFile(key, []byte("secret"), 0o600)
	os.Chmod(key, 0o600)
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "ui")
	os.WriteFile(filepath.Join(src, "source_0_k.cl"), []byte("kernel"), 0o640)
	os.Chmod(filepath.Join(src, "source_0_k.cl"), 0o640)
	os.WriteFile(filepath.Join(src, "real.h"), []byte("header"), 0o644)
	os.Symlink(key, filepath.Join(src, "source_1_key"))
	os.Symlink("real.h", filepath.Join(src, "source_2_real.h"))
	os.Symlink(filepath.Join(outside, "none"), filepath.Join(src, "source_3_dangling"))
	big := filepath.Join(src, "source_4_big.h")
	if f, err := os.Create(big); err == nil {
		f.Truncate(MaxFileSize + 1)
		f.Close()
	}
	var warnings []string
	if err := Copy(src, dst, Options{Warn: func(m string) { warnings = append(warnings, m) }}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dst, "source_1_key")); !os.IsNotExist(err) {
		t.Errorf("the key outside the capture was copied (%v)", err)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "source_2_real.h")); err != nil || string(b) != "header" {
		t.Errorf("a link inside the folder: %q %v", b, err)
	}
	if st, err := os.Stat(filepath.Join(dst, "source_0_k.cl")); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("a 0640 source copied as %v (%v), want 0640", st.Mode().Perm(), err)
	}
	if _, err := os.Stat(filepath.Join(dst, "source_4_big.h")); !os.IsNotExist(err) {
		t.Errorf("a file over the bound was copied")
	}
	all := strings.Join(warnings, "\n")
	for _, w := range []string{
		filepath.Join(src, "source_1_key") + " not copied: a symbolic link leaving " + src,
		filepath.Join(src, "source_3_dangling") + " not copied: a symbolic link to nothing",
		filepath.Join(src, "source_4_big.h") + " not copied: 16777217 bytes, more than the 16 MiB",
	} {
		if !strings.Contains(all, w) {
			t.Errorf("warnings %q lack %q", all, w)
		}
	}
}

// TestWriteBounds: a path of the index is copied when it is a regular file
// (a 0600 one stays 0600, with the umask applied); a link is not followed
// unless it stays inside --source; --source finds relative paths and moved
// absolute ones by their trailing components.
func TestWriteBounds(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	outside := t.TempDir()
	key := filepath.Join(outside, "id_key")
	os.WriteFile(key, []byte("secret"), 0o600)
	os.Chmod(key, 0o600)
	open := filepath.Join(outside, "open.cl")
	os.WriteFile(open, []byte("open"), 0o666)
	os.Chmod(open, 0o666)
	link := filepath.Join(outside, "link.cl")
	os.Symlink(key, link)

	srcDir := t.TempDir()
	os.MkdirAll(filepath.Join(srcDir, "src"), 0o755)
	os.WriteFile(filepath.Join(srcDir, "src", "k.cl"), []byte("k"), 0o644)
	os.Symlink(key, filepath.Join(srcDir, "src", "escape.h"))
	os.WriteFile(filepath.Join(srcDir, "in.h"), []byte("in"), 0o644)
	os.Symlink("../in.h", filepath.Join(srcDir, "src", "in.h"))

	dir := filepath.Join(t.TempDir(), "out")
	var warnings []string
	opt := Options{Warn: func(m string) { warnings = append(warnings, m) }}
	n, err := WriteFiles(dir, []string{key, open, link}, opt)
	if err != nil || n != 2 {
		t.Fatalf("WriteFiles: %d %v", n, err)
	}
	for name, want := range map[string]os.FileMode{"source_0_id_key": 0o600, "source_1_open.cl": 0o640, FileName: 0o640} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %v", name, st.Mode().Perm(), err, want)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], link+" not copied: a symbolic link") {
		t.Errorf("warnings %q", warnings)
	}

	dir2 := filepath.Join(t.TempDir(), "out")
	warnings = nil
	opt.Source = srcDir
	n, err = WriteFiles(dir2, []string{"src/k.cl", "/build/tree/src/in.h", "src/escape.h", "/gone/x.cl"}, opt)
	if err != nil || n != 2 {
		t.Fatalf("WriteFiles --source: %d %v (%q)", n, err, warnings)
	}
	for name, want := range map[string]string{"source_0_k.cl": "k", "source_1_in.h": "in"} {
		if b, err := os.ReadFile(filepath.Join(dir2, name)); err != nil || string(b) != want {
			t.Errorf("%s: %q %v", name, b, err)
		}
	}
	all := strings.Join(warnings, "\n")
	if !strings.Contains(all, "src/escape.h not copied: a symbolic link leaving "+srcDir) ||
		!strings.Contains(all, "1 of the sources the code objects name are not in "+srcDir+" or where named (first: /gone/x.cl)") {
		t.Errorf("warnings %q", all)
	}
	tree, _ := os.ReadFile(filepath.Join(dir2, FileName))
	if !strings.Contains(string(tree), `"build"`) || strings.Contains(string(tree), srcDir) {
		t.Errorf("the tree names the paths as the index does:\n%s", tree)
	}
}
