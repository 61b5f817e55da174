//go:build unix

package publish

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// helperEnv, set to the parent's pid, and argv[0] attkit-<helper> make a
// process started from this executable one of the package's helpers
// instead of the tool: the remover (discard) or the sync of a commit
// (syncfsHelper).
const (
	helperEnv   = "ATTKIT_HELPER"
	removerArg0 = "attkit-remover"
	syncfsArg0  = "attkit-syncfs"
)

// removerHold (tests) is called by the remover before it removes anything.
var removerHold func()

// remover is this process's remover: started at the first folder handed
// off; w is the pipe to it, held until this process exits.
var remover struct {
	sync.Mutex
	w      *os.File
	pid    int
	failed bool // could not be started: folders are left to the sweep
}

// handOff renames folder p aside for the remover and hands it over, or,
// where the remover cannot be started, leaves it under a name of this
// process for the next run's Sweep. false: p could not be renamed (the
// caller removes it).
func handOff(p string) bool {
	remover.Lock()
	defer remover.Unlock()
	if remover.w == nil && !remover.failed {
		remover.failed = startRemover() != nil
	}
	pid := os.Getpid()
	if remover.w != nil {
		pid = remover.pid
	}
	del := delName(filepath.Dir(p), pid)
	if err := os.Rename(p, del); err != nil {
		return os.IsNotExist(err) // gone: removed by another
	}
	if remover.w != nil {
		abs, err := filepath.Abs(del)
		if err == nil {
			_, err = remover.w.Write(append([]byte(abs), 0))
		}
		if err != nil {
			// The remover is gone: the folder is the sweep's (its pid is
			// dead), and so are the next ones.
			remover.w.Close()
			remover.w, remover.failed = nil, true
		}
	}
	return true
}

// startRemover starts the remover, in a session of its own so that
// neither the terminal's Ctrl-C nor its hangup reach it, at a low
// priority, reading the folders to remove from a pipe.
func startRemover() error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	cmd, err := helper(removerArg0)
	if err != nil {
		w.Close()
		return err
	}
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return err
	}
	remover.w, remover.pid = w, cmd.Process.Pid
	cmd.Process.Release()
	return nil
}

// helper returns the command that runs helper arg0: this executable again
// (/proc/self/exe where there is one, so that a binary replaced meanwhile
// still runs this one).
func helper(arg0 string) (*exec.Cmd, error) {
	exe := "/proc/self/exe"
	if _, err := os.Stat(exe); err != nil {
		if exe, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(exe)
	cmd.Args = []string{arg0}
	cmd.Env = append(os.Environ(), helperEnv+"="+strconv.Itoa(os.Getpid()))
	cmd.Dir = "/"
	return cmd, nil
}

// startSyncfs starts the syncfs helper (runSyncfs) on the file system of
// f, its standard input, with out as its standard output, in a process
// group of its own so that the terminal's Ctrl-C does not reach it.
func startSyncfs(f *os.File, out io.Writer) (*exec.Cmd, error) {
	cmd, err := helper(syncfsArg0)
	if err != nil {
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = f, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd, cmd.Start()
}

func init() {
	if v, ok := os.LookupEnv(helperEnv); ok {
		os.Unsetenv(helperEnv)
		// (Not checked against the parent's pid: the parent may have
		// exited already.)
		if _, err := strconv.Atoi(v); err == nil && len(os.Args) == 1 {
			switch os.Args[0] {
			case removerArg0:
				closeInherited()
				runRemover()
				os.Exit(0)
			case syncfsArg0:
				closeInherited()
				runSyncfs()
				os.Exit(0)
			}
		}
		// Not started by this package: the tool runs as usual.
	}
}

// closeInherited closes the descriptors above 2 that the helper inherited
// from the tool's own parent (those without close-on-exec; the Go runtime
// opens its own with it): a helper that outlives the tool must not hold,
// say, the pipe a shell waits on.
func closeInherited() {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		ents, err = os.ReadDir("/dev/fd")
	}
	if err != nil {
		return
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil && flags&unix.FD_CLOEXEC == 0 {
			unix.Close(fd)
		}
	}
}

// runRemover is the remover's work: it reads the folders its parent
// handed over until the parent has exited (the pipe's end), so that no
// writer of the parent is still adding to them, then removes each that
// has a name of its own, .attkit.del-<its pid>-…, and belongs to its user:
// it removes nothing it was not given by handOff.
func runRemover() {
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE)
	unix.Setpriority(unix.PRIO_PROCESS, 0, 10)
	data, _ := io.ReadAll(os.Stdin)
	if removerHold != nil {
		removerHold()
	}
	for _, b := range bytes.Split(data, []byte{0}) {
		p := string(b)
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			continue
		}
		kind, pid, ok := parseWork(filepath.Base(p))
		if !ok || kind != kindDel || pid != os.Getpid() || !ownedByMe(p) {
			continue
		}
		if st, err := os.Lstat(p); err != nil || !st.IsDir() {
			continue
		}
		for try := 0; try < 5 && os.RemoveAll(p) != nil; try++ {
			time.Sleep(100 * time.Millisecond)
		}
	}
}
