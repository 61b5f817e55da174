package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An interrupted att-rcv (here waiting for the rest of its standard input)
// removes everything it wrote.
func TestInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	dir, index, a, _ := sampleInputs(t)
	bin := filepath.Join(dir, "att-rcv")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	parent := filepath.Join(dir, "out")
	os.Mkdir(parent, 0o755)
	cmd := exec.Command(bin, "-d", filepath.Join(parent, "ui"), "--index", index)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sa, _ := os.ReadFile(a)
	stdin.Write(sa) // a whole stream part; the pipe stays open
	// Wait until the first wave file is in the temporary folder.
	deadline := time.Now().Add(10 * time.Second)
	for {
		m, _ := filepath.Glob(filepath.Join(parent, ".ui.tmp-*", "se0_sm0_sl3_wv0.json"))
		if len(m) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no wave file appeared")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	killer := time.AfterFunc(10*time.Second, func() { cmd.Process.Kill() })
	defer killer.Stop()
	err = cmd.Wait()
	stdin.Close()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 || stderr.String() != "att-rcv: interrupted\n" {
		t.Errorf("exit %v, stderr %q", err, stderr.String())
	}
	noLeftovers(t, parent)
}
