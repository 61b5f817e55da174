package testutil

import (
	_ "embed"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

//go:embed wine/processprng.c
var processPrng []byte

// A Wine runs Windows programs under Debian's wine, in a prefix of its own.
type Wine struct {
	// Env is the environment a wine command runs with: WINEPREFIX set to the
	// prefix, wine's debug output and its desktop integration off.
	Env []string
}

// NewWine makes a wine prefix under a temporary directory of t and puts in
// its system32 folder the bcryptprimitives.dll that Go's Windows runtime
// needs and Debian 12's wine lacks, built from wine/processprng.c with
// mingw. It skips the test, naming the packages, when wine or mingw is
// missing (scripts/install-deps --test installs them).
func NewWine(t testing.TB) *Wine {
	t.Helper()
	for tool, pkg := range map[string]string{"wine": "wine64", "x86_64-w64-mingw32-gcc": "gcc-mingw-w64-x86-64"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not on PATH: install Debian's %s (scripts/install-deps --test)", tool, pkg)
		}
	}
	dir := t.TempDir()
	prefix := filepath.Join(dir, "prefix")
	w := &Wine{Env: append(os.Environ(), "WINEPREFIX="+prefix, "WINEDEBUG=-all",
		"WINEDLLOVERRIDES=mscoree,mshtml=", "DISPLAY=")}
	boot := exec.Command("wine", "wineboot", "--init")
	boot.Env = w.Env
	if out, err := boot.CombinedOutput(); err != nil {
		t.Fatalf("wineboot --init: %v\n%s", err, out)
	}
	// wineboot returns while wineserver still writes the prefix.
	wait := exec.Command("wineserver", "--wait")
	wait.Env = w.Env
	wait.Run()
	src := filepath.Join(dir, "processprng.c")
	if err := os.WriteFile(src, processPrng, 0o666); err != nil {
		t.Fatal(err)
	}
	dll := filepath.Join(prefix, "drive_c", "windows", "system32", "bcryptprimitives.dll")
	cc := exec.Command("x86_64-w64-mingw32-gcc", "-shared", "-O2", "-o", dll, src, "-ladvapi32")
	if out, err := cc.CombinedOutput(); err != nil {
		t.Fatalf("building bcryptprimitives.dll: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		kill := exec.Command("wineserver", "--kill")
		kill.Env = w.Env
		kill.Run()
	})
	return w
}

// Command returns the command that runs the Windows program exe with args
// under wine.
func (w *Wine) Command(exe string, args ...string) *exec.Cmd {
	cmd := exec.Command("wine", append([]string{exe}, args...)...)
	cmd.Env = w.Env
	return cmd
}
