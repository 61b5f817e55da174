//go:build unix

package publish

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain runs the children of the tests below when the test binary is
// started by one of them.
func TestMain(m *testing.M) {
	switch os.Getenv("PUBLISH_CHILD") {
	case "":
		os.Exit(m.Run())
	case "commit":
		childCommit()
	case "signal":
		childSignal()
	}
	os.Exit(0)
}

// runs writes n runs' results (folder ui<i> holding wave.json and
// stats_ui<i>.csv beside it) holding data, as one Set.
func runs(root string, n int, data string) *Set {
	s := NewSet(true)
	for i := range n {
		d, err := s.Dir(filepath.Join(root, "ui"+strconv.Itoa(i)))
		if err != nil {
			panic(err)
		}
		os.WriteFile(filepath.Join(d, "wave.json"), []byte(data), 0o666)
		f, _ := s.File(filepath.Join(root, "stats_ui"+strconv.Itoa(i)+".csv"))
		os.WriteFile(f, []byte(data), 0o666)
	}
	return s
}

// childCommit commits two runs' "new" results into PUBLISH_DIR and kills
// itself with SIGKILL after step PUBLISH_KILL of the commit.
func childCommit() {
	kill, _ := strconv.Atoi(os.Getenv("PUBLISH_KILL"))
	noExchange = os.Getenv("PUBLISH_ASIDE") != ""
	commitHook = func(step int) {
		if step == kill {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			time.Sleep(time.Hour)
		}
	}
	if err := runs(os.Getenv("PUBLISH_DIR"), 2, "new").Commit(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// state describes root: its names and, when every output holds the same,
// that ("old" or "new").
func state(t *testing.T, root string) (names, content string) {
	t.Helper()
	names = entries(t, root)
	seen := map[string]bool{}
	for i := range 2 {
		seen[read(t, filepath.Join(root, "ui"+strconv.Itoa(i), "wave.json"))] = true
		seen[read(t, filepath.Join(root, "stats_ui"+strconv.Itoa(i)+".csv"))] = true
	}
	if len(seen) != 1 {
		return names, fmt.Sprint(seen)
	}
	for k := range seen {
		content = k
	}
	return names, content
}

// TestKillAtEveryStep SIGKILLs a commit of two runs (two folders, two
// CSVs) after each of its steps, over earlier results and over nothing,
// with and without the atomic exchange; the next run's sweep must leave
// all old or all new, and no work file.
func TestKillAtEveryStep(t *testing.T) {
	for _, aside := range []bool{false, true} {
		for _, withOld := range []bool{true, false} {
			sawOld, sawNew := false, false
			for k := 0; ; k++ {
				root := t.TempDir()
				if withOld {
					if err := runs(root, 2, "old").Commit(); err != nil {
						t.Fatal(err)
					}
				}
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), "PUBLISH_CHILD=commit", "PUBLISH_DIR="+root, "PUBLISH_KILL="+strconv.Itoa(k))
				if aside {
					cmd.Env = append(cmd.Env, "PUBLISH_ASIDE=1")
				}
				out, err := cmd.CombinedOutput()
				var ee *exec.ExitError
				killed := errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signaled()
				if err != nil && !killed {
					t.Fatalf("child: %v: %s", err, out)
				}
				resweep(root) // the next run
				names, content := state(t, root)
				label := fmt.Sprintf("aside %v, old %v, killed after step %d", aside, withOld, k)
				switch {
				case content == "new" && names == "stats_ui0.csv stats_ui1.csv ui0 ui1":
					sawNew = true
				case withOld && content == "old" && names == "stats_ui0.csv stats_ui1.csv ui0 ui1":
					sawOld = true
				case !withOld && names == "":
					sawOld = true
				default:
					t.Errorf("%s: neither all old nor all new: %q, %s", label, names, content)
				}
				for i := range 2 {
					if names == "" {
						break
					}
					if n := entries(t, filepath.Join(root, "ui"+strconv.Itoa(i))); n != ".attkit-output wave.json" {
						t.Errorf("%s: ui%d holds %q", label, i, n)
					}
				}
				if !killed {
					if content != "new" {
						t.Errorf("%s: the commit ran through but left %s", label, content)
					}
					break
				}
				if k > 20 {
					t.Fatal("the child never ran through")
				}
			}
			if !sawOld || !sawNew {
				t.Errorf("aside %v, old %v: saw old %v, new %v: the kills did not cover the commit", aside, withOld, sawOld, sawNew)
			}
		}
	}
}

// resweep sweeps root again, as another process would.
func resweep(root string) { Sweep(root) }

// TestModes: outputs are made 0666 and 0777 less the umask, and an
// earlier output's permission bits are kept.
func TestModes(t *testing.T) {
	for _, umask := range []int{0o077, 0o022} {
		old := syscall.Umask(umask)
		root := t.TempDir()
		if err := runs(root, 1, "x").Commit(); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(root, "out.csv")
		if err := WriteFile(p, func(w io.Writer) error { return nil }); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			path string
			want os.FileMode
		}{
			{"ui0", 0o777}, {"ui0/wave.json", 0o666}, {"ui0/" + ManifestName, 0o666}, {"stats_ui0.csv", 0o666}, {"out.csv", 0o666},
		} {
			st, err := os.Stat(filepath.Join(root, c.path))
			if err != nil {
				t.Fatal(err)
			}
			if want := c.want &^ os.FileMode(umask); st.Mode().Perm() != want {
				t.Errorf("umask %03o: %s is %03o, want %03o", umask, c.path, st.Mode().Perm(), want)
			}
		}
		// An earlier output of mode 0600 stays 0600, a folder 0700.
		os.Chmod(p, 0o600)
		os.Chmod(filepath.Join(root, "stats_ui0.csv"), 0o600)
		os.Chmod(filepath.Join(root, "ui0"), 0o700)
		WriteFile(p, func(w io.Writer) error { return nil })
		if err := runs(root, 1, "y").Commit(); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			path string
			want os.FileMode
		}{{"out.csv", 0o600}, {"stats_ui0.csv", 0o600}, {"ui0", 0o700}} {
			if st, _ := os.Stat(filepath.Join(root, c.path)); st.Mode().Perm() != c.want {
				t.Errorf("umask %03o: replaced %s is %03o, want %03o", umask, c.path, st.Mode().Perm(), c.want)
			}
		}
		syscall.Umask(old)
	}
}

// deadPid returns the pid of a process that has ended.
func deadPid(t *testing.T) int {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true:", err)
	}
	return cmd.Process.Pid
}

// TestSweep: a run removes what a dead run left beside its targets and in
// the temporary directory, and nothing of a live run or of the user.
func TestSweep(t *testing.T) {
	root := t.TempDir()
	dead := strconv.Itoa(deadPid(t))
	live := strconv.Itoa(os.Getppid())
	for _, n := range []string{".ui.tmp-" + dead + "-abc", ".stats.csv.old-" + dead + "-x1", ".ui.tmp-" + live + "-abc", ".mine.tmp-x", "keep.tmp-" + dead + "-abc"} {
		write(t, filepath.Join(root, n), "x")
	}
	os.Mkdir(filepath.Join(root, ".ui.del-"+dead+"-zz"), 0o777)
	write(t, filepath.Join(root, ".ui.del-"+dead+"-zz", "f"), "x")
	s := NewSet(false)
	s.Dir(filepath.Join(root, "ui"))
	s.Abort()
	if got := entries(t, root); got != ".mine.tmp-x .ui.tmp-"+live+"-abc keep.tmp-"+dead+"-abc" {
		t.Errorf("after the sweep: %s", got)
	}
	// The temporary directory: attkit-* work folders only.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	os.Mkdir(filepath.Join(tmp, "attkit-att-tool.work-"+dead+"-abc"), 0o777)
	write(t, filepath.Join(tmp, ".x.tmp-"+dead+"-abc"), "x")
	p, remove, err := WorkDir("", "att-tool")
	if err != nil {
		t.Fatal(err)
	}
	if got := entries(t, tmp); got != ".x.tmp-"+dead+"-abc "+filepath.Base(p) {
		t.Errorf("the temporary directory after the sweep: %s", got)
	}
	remove()
}

// childSignal makes work files of every kind, prints "ready" and then
// either ignores the interrupt (PUBLISH_MODE=busy) or returns on it.
func childSignal() {
	if g := os.Getenv("PUBLISH_GRACE"); g != "" {
		Grace, _ = time.ParseDuration(g)
	}
	ctx, in := Catch("child", os.Stderr)
	defer in.Stop()
	root := os.Getenv("PUBLISH_DIR")
	s := runs(root, 1, "new")
	WorkDir("", "att-tool")
	WorkDir(root, "spool")
	f, _, _ := WorkFile("", "hidden")
	if n, _ := strconv.Atoi(os.Getenv("PUBLISH_LARGE")); n > 0 {
		// A large output folder, held open as att-tool's viewer folder is.
		d, err := s.Dir(filepath.Join(root, "big"))
		if err != nil {
			panic(err)
		}
		files := NewFiles(d)
		for i := range n {
			if err := files.WriteFile(strconv.Itoa(i)+".json", []byte("{}")); err != nil {
				panic(err)
			}
		}
	}
	fmt.Println("ready")
	go func() { // says when the first signal has been taken, so that a second one is not merged into it
		<-ctx.Done()
		fmt.Println("caught")
	}()
	if os.Getenv("PUBLISH_MODE") == "busy" {
		for { // work that does not look at ctx
			f.Write([]byte("x"))
		}
	}
	<-ctx.Done()
	s.Abort()
	if code, ok := in.Status(); ok {
		os.Exit(code)
	}
}

// TestSignals: each of the four signals ends a run that returns on it and
// one that does not, a second signal ends a run at once; every time the
// status is 128+signal, the earlier result is there and no work file.
func TestSignals(t *testing.T) {
	for _, mode := range []string{"coop", "busy", "twice"} {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT} {
			root, tmp := t.TempDir(), t.TempDir()
			if err := runs(root, 1, "old").Commit(); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "PUBLISH_CHILD=signal", "PUBLISH_DIR="+root, "TMPDIR="+tmp, "PUBLISH_MODE="+mode)
			if mode == "twice" {
				cmd.Env = append(cmd.Env, "PUBLISH_MODE=busy", "PUBLISH_GRACE=1h")
			}
			stdout, _ := cmd.StdoutPipe()
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			out := bufio.NewReader(stdout)
			if line, _ := out.ReadString('\n'); line != "ready\n" {
				t.Fatalf("child: %q", line)
			}
			cmd.Process.Signal(sig)
			if mode == "twice" {
				// The second signal only after the child took the first: two
				// signals of one kind pending at once are delivered as one.
				if line, _ := out.ReadString('\n'); line != "caught\n" {
					t.Fatalf("%s %v: child: %q", mode, sig, line)
				}
				cmd.Process.Signal(sig)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("%s %v: did not end", mode, sig)
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 128+int(sig) {
				t.Errorf("%s %v: %v, want status %d; stderr %q", mode, sig, err, 128+int(sig), stderr.String())
			}
			if names, content := state1(t, root); names != "stats_ui0.csv ui0" || content != "old" {
				t.Errorf("%s %v: left %q, %s", mode, sig, names, content)
			}
			if got := entries(t, tmp); got != "" {
				t.Errorf("%s %v: left in TMPDIR: %s", mode, sig, got)
			}
		}
	}
}

func state1(t *testing.T, root string) (string, string) {
	a, b := read(t, filepath.Join(root, "ui0", "wave.json")), read(t, filepath.Join(root, "stats_ui0.csv"))
	if a != b {
		return entries(t, root), a + "/" + b
	}
	return entries(t, root), a
}

// The remover of a child run with PUBLISH_HOLD waits until that file
// exists before it removes anything (set before publish's init runs the
// remover).
var _ = func() bool {
	if p := os.Getenv("PUBLISH_HOLD"); p != "" {
		removerHold = func() {
			for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
				if _, err := os.Stat(p); err == nil {
					return
				}
			}
		}
	}
	return true
}()

// TestSignalLargeTree: a run interrupted with a large work folder (twice
// the entries discard removes at once; att-tool's viewer folder holds
// hundreds of thousands) exits without removing it, so that it ends
// within a second however large the tree: the folder is renamed aside to
// a name of the remover, a detached process that removes it after the run
// has exited (held here until the test lets it go). The earlier result
// stays, and nothing else of the run; once let go, the remover leaves
// nothing either. Removing the tree before the exit (as on 285704c) fails
// the test: no folder is left at the exit.
func TestSignalLargeTree(t *testing.T) {
	for _, mode := range []string{"coop", "busy"} {
		root, tmp, hold := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "release")
		if err := runs(root, 1, "old").Commit(); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "PUBLISH_CHILD=signal", "PUBLISH_DIR="+root, "TMPDIR="+tmp, "PUBLISH_MODE="+mode,
			"PUBLISH_LARGE="+strconv.Itoa(2*discardAtOnce), "PUBLISH_HOLD="+hold)
		stdout, _ := cmd.StdoutPipe()
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
			t.Fatalf("child: %q", line)
		}
		cmd.Process.Signal(syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("%s: did not end", mode)
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Fatalf("%s: %v, want status 130; stderr %q", mode, err, stderr.String())
		}
		// At the exit: the tree is still there, under the remover's name.
		var del string
		var others []string
		ents, _ := os.ReadDir(root)
		for _, e := range ents {
			if kind, pid, ok := parseWork(e.Name()); ok && kind == kindDel && pid != cmd.Process.Pid && alive(pid) && del == "" {
				del = filepath.Join(root, e.Name())
			} else {
				others = append(others, e.Name())
			}
		}
		if del == "" {
			t.Fatalf("%s: no folder left to the remover at the exit: %q", mode, entries(t, root))
		}
		if n := len(strings.Fields(entries(t, del))); n != 2*discardAtOnce {
			t.Errorf("%s: the remover's folder holds %d files, want %d", mode, n, 2*discardAtOnce)
		}
		if got := strings.Join(others, " "); got != "stats_ui0.csv ui0" {
			t.Errorf("%s: beside the remover's folder: %q", mode, got)
		}
		if got := entries(t, tmp); got != "" {
			t.Errorf("%s: left in TMPDIR: %s", mode, got)
		}
		write(t, hold, "")
		for end := time.Now().Add(30 * time.Second); exists(del) && time.Now().Before(end); {
			time.Sleep(10 * time.Millisecond)
		}
		if names, content := state1(t, root); names != "stats_ui0.csv ui0" || content != "old" {
			t.Errorf("%s: after the remover: %q, %s", mode, names, content)
		}
	}
}

// TestRemover: the remover removes the folders handed to it once its
// parent's pipe ends, and only those of its own del name: not one named
// for another process, not another folder, not a relative path. It holds
// no descriptor the tool inherited.
func TestRemover(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0])
	cmd.Args = []string{removerArg0}
	cmd.Env = append(os.Environ(), helperEnv+"="+strconv.Itoa(os.Getpid()))
	w, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	// A descriptor the tool inherited (without close-on-exec): the
	// remover, which outlives the tool, lets it go at once.
	inherited, iw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inherited.Close()
	cmd.ExtraFiles = []*os.File{iw}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	iw.Close()
	inherited.SetReadDeadline(time.Now().Add(30 * time.Second))
	if n, err := inherited.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("the inherited pipe: %d, %v; want it closed by the remover while it waits for its list", n, err)
	}
	own := delName(dir, cmd.Process.Pid)
	other := delName(dir, deadPid(t))
	user := filepath.Join(dir, "user")
	for _, d := range []string{own, other, user, filepath.Join(own, "sub")} {
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(d, "f"), "x")
	}
	rel, _ := filepath.Rel(cmd.Dir, own)
	for _, p := range []string{other, user, rel, own} {
		w.Write(append([]byte(p), 0))
	}
	w.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("remover: %v: %s", err, out.String())
	}
	if exists(own) {
		t.Errorf("its folder %s is still there", own)
	}
	if !exists(filepath.Join(other, "f")) || !exists(filepath.Join(user, "f")) {
		t.Errorf("removed what it was not to: %q", entries(t, dir))
	}
}
