package main

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/attkit/attkit/internal/cdec"
	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/sqtt"
	"github.com/attkit/attkit/internal/sqttgen"
	"github.com/attkit/attkit/internal/wire"
)

// An outcome is what one decoder made of one input.
type outcome struct {
	batches []wire.Batch // copied, then normalized with sqttgen.Normalize016
	status  string       // "ok", "invalid shader data", ... (comparable across decoders)
	errText string       // the error as the decoder reported it
	fatal   string       // "panic at ...", "crash (...)" or "hang": the decoder did not return
	stack   string       // a native panic's stack
}

func (o *outcome) collect(b *wire.Batch) error {
	o.batches = append(o.batches, b.Clone())
	return nil
}

func (o *outcome) summary() string {
	if o.fatal != "" {
		return o.fatal
	}
	s := fmt.Sprintf("%s, %d batches", o.status, len(o.batches))
	if o.errText != "" {
		s += " (" + o.errText + ")"
	}
	return s
}

var statusName = regexp.MustCompile(`STATUS_([A-Z_]+)`)

// libStatus maps the library's error to the statuses native errors map to.
func libStatus(text string) string {
	if text == "" {
		return "ok"
	}
	m := statusName.FindStringSubmatch(text)
	switch {
	case m == nil:
		return "error"
	case m[1] == "ERROR_INVALID_SHADER_DATA":
		return "invalid shader data"
	}
	return strings.ToLower(strings.ReplaceAll(m[1], "_", " "))
}

func nativeStatus(err error) string {
	var de *sqtt.DataError
	var ae *sqtt.ArchError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &de):
		return "invalid shader data"
	case errors.As(err, &ae):
		return "not a supported trace"
	}
	return "error"
}

var digits = regexp.MustCompile(`[0-9]+`)

// decodeNative decodes with the native decoder as `att-decode --backend
// native --compat 0.1.6` does. A panic is recovered and reported, named by
// where in internal/sqtt it happened; a decode that does not return within
// timeout is reported as a hang (its goroutine is left behind, cancelled).
func decodeNative(data []byte, p isa.Provider, timeout time.Duration) outcome {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		defer func() {
			if v := recover(); v != nil {
				o.fatal = "panic at " + panicSite() + ": " + digits.ReplaceAllString(fmt.Sprint(v), "N")
				o.stack = fmt.Sprintf("panic: %v\n\n%s", v, debug.Stack())
				done <- o
			}
		}()
		d := &sqtt.Decoder{Compat: sqtt.Lib016, PoolLimit: -1}
		err := d.Decode(ctx, bytes.NewReader(data), p, o.collect)
		if err != nil {
			o.errText = err.Error()
		}
		o.status = nativeStatus(err)
		if errors.Is(err, context.DeadlineExceeded) {
			o.fatal = "hang"
		}
		done <- o
	}()
	t := time.NewTimer(timeout + time.Second)
	defer t.Stop()
	select {
	case o := <-done:
		o.batches = sqttgen.Normalize016(o.batches)
		return o
	case <-t.C:
		return outcome{fatal: "hang"}
	}
}

// panicSite names the innermost frame of the decoder's packages in a
// panicking goroutine's stack: function and file:line.
func panicSite() string {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if strings.Contains(f.Function, "/internal/") && !strings.Contains(f.Function, "/internal/sqttgen") {
			fn := f.Function[strings.LastIndexByte(f.Function, '/')+1:]
			return fmt.Sprintf("%s (%s:%d)", fn, filepath.Base(f.File), f.Line)
		}
		if !more {
			return "unknown"
		}
	}
}

// The library worker is this program started again with envWorker set. It
// loads the library and the ISA tables and decodes the traces it is sent,
// so that a crash or a hang of the library ends only the worker: the
// harness reports it and starts another. Requests come on stdin and replies
// go out on file descriptor 3 (gob), so nothing the library prints can mix
// with them; its stdout and stderr go to the log.
//
// The worker also makes the library's results independent of what it
// decoded before. At the end of a buffer without zero padding the 0.1.6
// library reads a few bytes past the buffer's end (sqtt-format.md A.4 item
// 8.6); internal/cdec now follows every buffer with 16 zero bytes, so these
// read as zero in every process. The fixed glibc mmap threshold
// (MALLOC_MMAP_THRESHOLD_) is kept as a second guard: it makes every large
// buffer a fresh zero-filled mapping, as the first decode of a new process
// sees it.
const envWorker = "DIFFFUZZ_WORKER"

type request struct {
	ISA  int
	Data []byte
}

type reply struct {
	Batches []wire.Batch
	Err     string
	Version string // the first reply only
	Fatal   string // the first reply: why the worker cannot serve
}

func workerMain() int {
	dec := gob.NewDecoder(os.Stdin)
	out := os.NewFile(3, "replies")
	enc := gob.NewEncoder(out)
	var paths []string
	if err := dec.Decode(&paths); err != nil {
		return 1
	}
	var isas []isa.Provider
	for _, p := range paths {
		ix, err := wire.ReadIndexFile(p)
		if err != nil {
			enc.Encode(reply{Fatal: err.Error()})
			return 1
		}
		isas = append(isas, isa.NewTable(ix))
	}
	d, err := cdec.Load("")
	if err != nil {
		enc.Encode(reply{Fatal: err.Error()})
		return 1
	}
	if err := enc.Encode(reply{Version: d.Version()}); err != nil {
		return 1
	}
	for {
		var req request
		if err := dec.Decode(&req); err != nil {
			return 0 // the harness is done
		}
		var rep reply
		var o outcome
		if req.ISA < 0 || req.ISA >= len(isas) {
			rep.Err = "bad ISA index"
		} else if err := d.Decode(context.Background(), bytes.NewReader(req.Data), isas[req.ISA], o.collect); err != nil {
			rep.Err = err.Error()
		}
		rep.Batches = o.batches
		if err := enc.Encode(&rep); err != nil {
			return 1
		}
	}
}

// A workerLibrary decodes with AMD's library in the worker.
type workerLibrary struct {
	paths   []string
	log     *os.File
	timeout time.Duration
	ver     string
	starts  int

	cmd     *exec.Cmd
	stdin   io.WriteCloser
	enc     *gob.Encoder
	replies chan workerReply
}

type workerReply struct {
	r   reply
	err error
}

func newWorkerLibrary(paths []string, log *os.File, timeout time.Duration) (*workerLibrary, error) {
	w := &workerLibrary{paths: paths, log: log, timeout: timeout}
	if err := w.start(); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *workerLibrary) start() error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), envWorker+"=1", "MALLOC_MMAP_THRESHOLD_=131072")
	cmd.Stdout, cmd.Stderr = w.log, w.log
	cmd.ExtraFiles = []*os.File{pw}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		pr.Close()
		pw.Close()
		return err
	}
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return fmt.Errorf("starting the library worker: %w", err)
	}
	pw.Close()
	w.starts++
	w.cmd, w.stdin, w.enc = cmd, stdin, gob.NewEncoder(stdin)
	replies := make(chan workerReply, 1)
	w.replies = replies
	go func() {
		defer pr.Close()
		dec := gob.NewDecoder(pr)
		for {
			var r reply
			err := dec.Decode(&r)
			replies <- workerReply{r, err}
			if err != nil {
				return
			}
		}
	}()
	if err := w.enc.Encode(w.paths); err != nil {
		w.stop(true)
		return fmt.Errorf("library worker: %w", err)
	}
	select {
	case rep := <-replies:
		if rep.err != nil || rep.r.Fatal != "" {
			w.stop(true)
			if rep.err != nil {
				return fmt.Errorf("library worker: %v (see %s)", rep.err, w.log.Name())
			}
			return errors.New(rep.r.Fatal)
		}
		w.ver = rep.r.Version
	case <-time.After(w.timeout):
		w.stop(true)
		return errors.New("library worker: no answer")
	}
	return nil
}

// stop ends the worker (killing it when asked) and returns how it ended.
func (w *workerLibrary) stop(kill bool) string {
	if w.cmd == nil {
		return ""
	}
	w.stdin.Close()
	if kill {
		w.cmd.Process.Kill()
	}
	w.cmd.Wait()
	state := w.cmd.ProcessState.String()
	w.cmd = nil
	return state
}

// decode decodes a trace with ISA table i, (re)starting the worker when
// needed. A crash or hang is an outcome; the error is the harness's own
// failure (the worker cannot be started).
func (w *workerLibrary) decode(data []byte, i int) (outcome, error) {
	if w.cmd == nil {
		if err := w.start(); err != nil {
			return outcome{}, err
		}
	}
	if err := w.enc.Encode(request{ISA: i, Data: data}); err != nil {
		return outcome{fatal: "crash (" + w.stop(false) + ")"}, nil
	}
	t := time.NewTimer(w.timeout)
	defer t.Stop()
	select {
	case rep := <-w.replies:
		if rep.err != nil {
			// Exit signals and codes differ (SIGSEGV, SIGABRT): the class
			// keeps them apart.
			return outcome{fatal: "crash (" + w.stop(false) + ")"}, nil
		}
		o := outcome{batches: rep.r.Batches, errText: rep.r.Err, status: libStatus(rep.r.Err)}
		o.batches = sqttgen.Normalize016(o.batches)
		return o, nil
	case <-t.C:
		w.stop(true)
		return outcome{fatal: "hang"}, nil
	}
}

func (w *workerLibrary) version() string { return w.ver }
func (w *workerLibrary) close()          { w.stop(false) }
