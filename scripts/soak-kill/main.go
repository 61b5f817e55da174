// Command soak-kill SIGKILLs att-tool at random instants and checks what
// the next run finds. In: the capture folders to run on (default
// testdata/sample and, when present, a copy of ../shared/real/gfx950_gemm_0);
// out: one line per capture with the tries, how many left the old result,
// how many the new one, and the failures, and exit 1 if there is any.
//
// For each capture it makes an earlier result (att-tool -d OUT), then for
// each try starts att-tool --force -d OUT on it, SIGKILLs it after a random
// delay within the length of a whole run, and lets publish.Sweep (what the
// next run does first) replay or roll back what it left. It then checks:
// no work file beside the outputs nor in the run's $TMPDIR, the inputs
// byte for byte as they were, and every output (viewer folders and stats
// CSVs) all from the old result or all from the new one, complete. The
// old result is told by the run named in each folder's mark and by a line
// the soak appends to each old CSV.
//
// Usage: go run ./scripts/soak-kill [-tries N] [CAPTURE...]
package main

import (
	"bytes"
	"crypto/sha256"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/attkit/attkit/internal/publish"
)

const oldLine = "soak-kill: old\n"

func main() {
	tries := flag.Int("tries", 100, "kills per capture")
	flag.Parse()
	work, err := os.MkdirTemp("", "soak-kill")
	check(err)
	defer os.RemoveAll(work)
	bin := filepath.Join(work, "att-tool")
	out, err := exec.Command("go", "build", "-o", bin, "./cmd/att-tool").CombinedOutput()
	if err != nil {
		fatal("go build: %v\n%s", err, out)
	}
	captures := flag.Args()
	if len(captures) == 0 {
		captures = []string{"testdata/sample"}
		real := filepath.Join("..", "shared", "real", "gfx950_gemm_0")
		if _, err := os.Stat(real); err == nil {
			cp := filepath.Join(work, "gfx950_gemm_0")
			check(os.Mkdir(cp, 0o777))
			ents, _ := os.ReadDir(real)
			for _, e := range ents {
				if e.Type().IsRegular() {
					b, err := os.ReadFile(filepath.Join(real, e.Name()))
					check(err)
					check(os.WriteFile(filepath.Join(cp, e.Name()), b, 0o666))
				}
			}
			captures = append(captures, cp)
		} else {
			fmt.Println("soak-kill: no ../shared/real/gfx950_gemm_0: the sample only")
		}
	}
	failed := false
	for _, c := range captures {
		if !soak(work, bin, c, *tries) {
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

func soak(work, bin, capture string, tries int) bool {
	inputs := hashTree(capture)
	out := filepath.Join(work, "out-"+filepath.Base(capture))
	tmp := filepath.Join(work, "tmp")
	os.MkdirAll(tmp, 0o777)
	run := func(force bool) *exec.Cmd {
		args := []string{"--backend", "native", "-j", "2", "-d", out, capture}
		if force {
			args = append([]string{"--force"}, args...)
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		return cmd
	}
	// A file of the user's in OUT: the runs' folders go inside it, and
	// it must stay.
	check(os.MkdirAll(out, 0o777))
	check(os.WriteFile(filepath.Join(out, "keep.txt"), []byte("mine"), 0o666))
	inputs[filepath.Join(out, "keep.txt")] = sha256.Sum256([]byte("mine"))
	hash := func() map[string][32]byte {
		m := hashTree(capture)
		b, _ := os.ReadFile(filepath.Join(out, "keep.txt"))
		m[filepath.Join(out, "keep.txt")] = sha256.Sum256(b)
		return m
	}
	start := time.Now()
	if b, err := run(false).CombinedOutput(); err != nil {
		fatal("%s: the first run: %v\n%s", capture, err, b)
	}
	length := time.Since(start)
	names := outputNames(out)
	oldRun := markOld(out)
	var nOld, nNew, nFail int
	for i := range tries {
		cmd := run(true)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		check(cmd.Start())
		delay := time.Duration(rand.Int64N(int64(length) * 5 / 4))
		time.Sleep(delay)
		cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		if err != nil && !strings.Contains(err.Error(), "killed") {
			fmt.Printf("%s: try %d: att-tool: %v: %s\n", capture, i, err, stderr.String())
			nFail++
			continue
		}
		publish.Sweep(out) // what the next run does first
		os.Setenv("TMPDIR", tmp)
		publish.Sweep(tmp)
		os.Unsetenv("TMPDIR")
		var problems []string
		if got := outputNames(out); !slices.Equal(got, names) {
			problems = append(problems, fmt.Sprintf("outputs %q, want %q", got, names))
		}
		if left := workFiles(out); len(left) > 0 {
			problems = append(problems, fmt.Sprintf("work files left: %q", left))
		}
		if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
			problems = append(problems, fmt.Sprintf("left in $TMPDIR: %d entries (%s)", len(ents), ents[0].Name()))
		}
		if got := hash(); !maps(got, inputs) {
			problems = append(problems, "the inputs (or OUT/keep.txt) changed")
		}
		state := whose(out, oldRun)
		switch state {
		case "old":
			nOld++
		case "new":
			nNew++
			oldRun = markOld(out)
		default:
			problems = append(problems, state)
		}
		if len(problems) > 0 {
			nFail++
			fmt.Printf("%s: try %d, killed after %v: %s\n", capture, i, delay, strings.Join(problems, "; "))
			// Start the next try from a clean state.
			os.RemoveAll(out)
			os.RemoveAll(tmp)
			os.MkdirAll(tmp, 0o777)
			os.MkdirAll(out, 0o777)
			os.WriteFile(filepath.Join(out, "keep.txt"), []byte("mine"), 0o666)
			if b, err := run(false).CombinedOutput(); err != nil {
				fatal("%s: re-making the result: %v\n%s", capture, err, b)
			}
			oldRun = markOld(out)
		}
	}
	fmt.Printf("%s: %d tries (a whole run %v): %d all old, %d all new, %d failures\n",
		capture, tries, length.Round(time.Millisecond), nOld, nNew, nFail)
	return nFail == 0
}

// outputNames lists out's outputs and the files of each folder.
func outputNames(out string) []string {
	var names []string
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != out {
			rel, _ := filepath.Rel(out, p)
			if !strings.HasPrefix(d.Name(), ".") {
				names = append(names, rel)
			} else if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	return names
}

// workFiles lists hidden names in out other than the folders' marks.
func workFiles(out string) []string {
	var left []string
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != out && strings.HasPrefix(d.Name(), ".") && d.Name() != publish.ManifestName {
			left = append(left, p)
		}
		return nil
	})
	return left
}

// runOf returns the run named in folder dir's mark.
func runOf(dir string) string {
	b, _ := os.ReadFile(filepath.Join(dir, publish.ManifestName))
	for _, l := range strings.Split(string(b), "\n") {
		if r, ok := strings.CutPrefix(l, "run "); ok {
			return r
		}
	}
	return ""
}

// markOld appends oldLine to each stats CSV of out and returns the run of
// its folders.
func markOld(out string) string {
	ents, _ := os.ReadDir(out)
	run := ""
	for _, e := range ents {
		p := filepath.Join(out, e.Name())
		switch {
		case e.IsDir() && !strings.HasPrefix(e.Name(), "."):
			run = runOf(p)
		case strings.HasSuffix(e.Name(), ".csv"):
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			check(err)
			f.WriteString(oldLine)
			f.Close()
		}
	}
	return run
}

// whose says whether out holds the old result, the new one, or a mix.
func whose(out, oldRun string) string {
	ents, _ := os.ReadDir(out)
	var states []string
	for _, e := range ents {
		p := filepath.Join(out, e.Name())
		switch {
		case strings.HasPrefix(e.Name(), "."):
		case e.IsDir():
			if runOf(p) == oldRun {
				states = append(states, "old")
			} else {
				states = append(states, "new")
			}
		case strings.HasSuffix(e.Name(), ".csv"):
			b, _ := os.ReadFile(p)
			if bytes.HasSuffix(b, []byte(oldLine)) {
				states = append(states, "old")
			} else {
				states = append(states, "new")
			}
		}
	}
	slices.Sort(states)
	states = slices.Compact(states)
	if len(states) != 1 {
		return fmt.Sprintf("a mix of old and new: %v", states)
	}
	return states[0]
}

func hashTree(dir string) map[string][32]byte {
	m := map[string][32]byte{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			m[p] = sha256.Sum256(b)
		}
		return nil
	})
	return m
}

func maps(a, b map[string][32]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func check(err error) {
	if err != nil {
		fatal("%v", err)
	}
}

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "soak-kill: "+format+"\n", args...)
	os.Exit(1)
}
