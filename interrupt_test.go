package attkit_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestInterruptedOutputs interrupts att-decode -o, att-stats -o,
// att-report -o and co-index -o (real processes, SIGINT and SIGTERM) while they read a pipe
// that the test keeps open: each exits 130 or 143, FILE keeps what it held
// before, and no temporary stays beside it. att-decode writes into its
// temporary while it decodes, so its interrupt finds one to remove.
func TestInterruptedOutputs(t *testing.T) {
	needTools(t, "llvm-objdump-19")
	tmp := t.TempDir()
	idx := filepath.Join(tmp, "sample.idx")
	run(t, "", filepath.Join(binDir, "co-index"), "-o", idx, "testdata/sample/31337_1_code_object_id_1.hsaco")
	rec := filepath.Join(tmp, "se0.rec")
	run(t, "", filepath.Join(binDir, "att-decode"), "--index", idx, "-o", rec, "testdata/sample/31337_1_shader_engine_0_1.att")
	trace, _ := os.ReadFile("testdata/sample/31337_1_shader_engine_0_1.att")
	stream, _ := os.ReadFile(rec)
	object, _ := os.ReadFile("testdata/sample/31337_1_code_object_id_1.hsaco")
	for _, tc := range []struct {
		tool  string
		args  []string
		input []byte
	}{
		{"att-decode", []string{"--backend", "native", "--index", idx, "-"}, trace},
		{"att-stats", []string{"--index", idx, "-"}, stream},
		{"att-report", []string{"--index", idx, "-"}, stream},
		// The hidden-latency spool in $TMPDIR: on 478e79a SIGINT and
		// SIGTERM left it there.
		{"att-stats", []string{"--format", "hidden.csv", "--index", idx, "-"}, stream},
		{"co-index", []string{"-"}, object},
	} {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT} {
			dir, err := os.MkdirTemp(tmp, tc.tool)
			if err != nil {
				t.Fatal(err)
			}
			tmpdir := filepath.Join(dir, "tmp")
			os.Mkdir(tmpdir, 0o755)
			out := filepath.Join(dir, "out")
			os.WriteFile(out, []byte("earlier result"), 0o644)
			cmd := exec.Command(filepath.Join(binDir, tc.tool), append([]string{"-o", out}, tc.args...)...)
			cmd.Env = append(os.Environ(), "TMPDIR="+tmpdir)
			r, stdin, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stdin = r
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			r.Close()
			stdin.Write(tc.input[:len(tc.input)/2]) // blocks only while the tool reads
			// Once the tool has read what there is (so it runs main, and
			// att-decode decodes into its temporary), interrupt it.
			deadline := time.Now().Add(20 * time.Second)
			for n := -1; n != 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				n, _ = unix.IoctlGetInt(int(stdin.Fd()), unix.TIOCINQ) // FIONREAD
			}
			time.Sleep(100 * time.Millisecond)
			cmd.Process.Signal(sig)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("%s: did not stop on %v", tc.tool, sig)
			}
			stdin.Close()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 128+int(sig) {
				t.Errorf("%s %v: %v, want exit %d; stderr %q", tc.tool, sig, err, 128+int(sig), stderr.String())
			}
			if b, _ := os.ReadFile(out); string(b) != "earlier result" {
				t.Errorf("%s %v: FILE holds %.40q, not the earlier result", tc.tool, sig, b)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 2 {
				t.Errorf("%s %v: temporaries left: %v", tc.tool, sig, ents)
			}
			if ents, _ := os.ReadDir(tmpdir); len(ents) != 0 {
				t.Errorf("%s %v: left in $TMPDIR: %v", tc.tool, sig, ents)
			}
		}
	}
}
