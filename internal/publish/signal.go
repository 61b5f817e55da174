package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// Signals are the signals that end a tool: SIGINT, SIGTERM, SIGHUP and
// SIGQUIT.
var Signals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// SignalHelp is the sentence every tool's --help carries about signals.
const SignalHelp = "SIGINT, SIGTERM, SIGHUP and SIGQUIT end the run within a second, leaving the outputs as they were and no work file (a large work folder is removed by a background process after the exit); the exit status is then 128+signal (130 for Ctrl-C, 143 for SIGTERM); a second signal ends it at once."

// Grace is how long a run may take to return after the first signal
// before it is abandoned: its work files removed, the process ended.
var Grace = 800 * time.Millisecond

// exit ends the process (tests replace it).
var exit = os.Exit

// interrupted is closed at the first signal (Catch, RemoveOnSignal): a
// commit not yet renaming then stops (errInterrupted) instead of waiting
// for its sync.
var (
	interrupted     = make(chan struct{})
	interruptedOnce sync.Once
)

// errInterrupted is the error of a commit stopped by a signal.
var errInterrupted = errors.New("interrupted")

func interrupt() { interruptedOnce.Do(func() { close(interrupted) }) }

// An Interrupt watches for the signals of one run (Catch).
type Interrupt struct {
	name   string
	stderr io.Writer
	ch     chan os.Signal
	done   chan struct{}
	stop   sync.Once
	cancel context.CancelFunc

	mu  sync.Mutex
	sig os.Signal
}

// Catch starts one run of tool name: it registers name for the marks and
// handles Signals. The first cancels the
// returned context; the run should then return (Status gives its exit
// status). When it has not within Grace, or at a second signal, the work
// files of the process are removed (a commit's renames finished first),
// "<name>: interrupted" goes to stderr and the process exits 128+signal.
// Stop ends the handling.
func Catch(name string, stderr io.Writer) (context.Context, *Interrupt) {
	SetTool(name)
	ctx, cancel := context.WithCancel(context.Background())
	in := &Interrupt{name: name, stderr: stderr, ch: make(chan os.Signal, 2), done: make(chan struct{}), cancel: cancel}
	signal.Notify(in.ch, Signals...)
	go in.watch(Grace)
	return ctx, in
}

// RemoveOnSignal handles Signals for a tool that has no context to cancel:
// the first removes the work files and ends the process with 128+signal
// (after a commit's renames).
func RemoveOnSignal() {
	in := &Interrupt{ch: make(chan os.Signal, 2), done: make(chan struct{}), cancel: func() {}}
	signal.Notify(in.ch, Signals...)
	go in.watch(0)
}

func (in *Interrupt) watch(grace time.Duration) {
	var timer <-chan time.Time
	for {
		select {
		case s := <-in.ch:
			in.mu.Lock()
			first := in.sig == nil
			if first {
				in.sig = s
			}
			in.mu.Unlock()
			interrupt()
			if !first || grace <= 0 {
				in.abandon(s)
				return
			}
			in.cancel()
			timer = time.After(grace)
		case <-timer:
			in.abandon(in.Signal())
			return
		case <-in.done:
			return
		}
	}
}

// abandon removes the work files and ends the process.
func (in *Interrupt) abandon(s os.Signal) {
	commitMu.Lock() // never in the middle of a commit's renames
	RemoveTemporaries()
	if in.name != "" {
		fmt.Fprintf(in.stderr, "%s: interrupted\n", in.name)
	}
	exit(ExitStatus(s))
}

// Signal returns the first signal received, or nil.
func (in *Interrupt) Signal() os.Signal {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.sig
}

// Status reports whether the run was interrupted and, if so, removes what
// work files are left, says so on stderr and returns the exit status
// (128+signal).
func (in *Interrupt) Status() (int, bool) {
	s := in.Signal()
	if s == nil {
		return 0, false
	}
	RemoveTemporaries()
	fmt.Fprintf(in.stderr, "%s: interrupted\n", in.name)
	return ExitStatus(s), true
}

// Stop ends the signal handling of the run. It is safe to call more than
// once.
func (in *Interrupt) Stop() {
	in.stop.Do(func() {
		signal.Stop(in.ch)
		close(in.done)
		in.cancel()
	})
}

// ExitStatus is the exit status for a process ended by signal s: 128 + its
// number (130 for SIGINT, 143 for SIGTERM).
func ExitStatus(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 1
}
