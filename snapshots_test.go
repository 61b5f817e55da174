package attkit_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestAttToolSnapshotBounds: a capture's source_* link to a file outside
// it (a 0600 key) is not copied into the viewer folder, and the warning
// names it; a copied source keeps a mode no wider than its own. On
// 478e79a the key was copied, 0644.
func TestAttToolSnapshotBounds(t *testing.T) {
	needTools(t, "llvm-objdump-19")
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cap := filepath.Join(tmp, "cap")
	os.Mkdir(cap, 0o755)
	// The capture's code.json and snapshots, as att-tool writes them from
	// the code object alone.
	hsaco := filepath.Join(repoRoot(t), "testdata", "sample", "31337_1_code_object_id_1.hsaco")
	if _, stderr, code := attTool(t, nil, "-d", cap, hsaco); code != 0 {
		t.Fatalf("code only: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join("testdata", "sample", "31337_1_shader_engine_0_1.att"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(cap, "31337_1_shader_engine_0_1.att"), b, 0o644)
	key := filepath.Join(tmp, "secret", "id_key")
	os.Mkdir(filepath.Dir(key), 0o700)
	os.WriteFile(key, []byte("PRIVATE KEY"), 0o600)
	link := filepath.Join(cap, "source_9_id_key")
	os.Symlink(key, link)
	private := filepath.Join(cap, "source_8_private.cl")
	os.WriteFile(private, []byte("// private\n"), 0o600)
	os.Chmod(private, 0o600)

	out := filepath.Join(tmp, "ui")
	_, stderr, code := attTool(t, nil, "--backend", "native", "-d", out, cap)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Lstat(filepath.Join(out, "source_9_id_key")); !os.IsNotExist(err) {
		b, _ := os.ReadFile(filepath.Join(out, "source_9_id_key"))
		t.Errorf("the key outside the capture is in the viewer folder (%q)", b)
	}
	if !strings.Contains(stderr, "att-tool: warning: source snapshot: "+link+" not copied: a symbolic link leaving "+cap) {
		t.Errorf("no warning naming the link: %q", stderr)
	}
	if st, err := os.Stat(filepath.Join(out, "source_8_private.cl")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("a 0600 source: %v %v, want 0600", st, err)
	}
	if _, err := os.Stat(filepath.Join(out, "source_0_kernels.cl")); err != nil {
		t.Errorf("the capture's own snapshot was not copied: %v", err)
	}
}
