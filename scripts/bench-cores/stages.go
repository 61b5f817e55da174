package main

import (
	"context"
	"os"
	"runtime"
	"syscall"
	"time"

	"github.com/attkit/attkit/internal/driver"
	"github.com/attkit/attkit/internal/wire"
)

// stages estimates the two-core speed-up from CPU time, which a loaded
// machine does not distort as it does wall time: it decodes trace in this
// process through internal/driver into a record file (att-decode's
// output), once on one core and once split over two (sqtt.Decoder.Split)
// with the front's goroutine (the token reading and the waves' state)
// locked to its thread. one is the CPU time of the one-core decode; dec
// the front's thread's in the split decode (including handing the waves
// and batches over); rest the split decode's other CPU time (the back:
// stitching, record building, the sink's encoding and writing; the
// garbage collector). With both cores to itself the split decode takes
// max(dec, rest) at best, so one / max(dec, rest) bounds the speed-up the
// wall times show on a quiet machine.
func stages(trace, index, out string) (one, dec, rest time.Duration, err error) {
	ix, err := wire.ReadIndexFile(index)
	if err != nil {
		return 0, 0, 0, err
	}
	code := driver.NewCode(ix)
	decode := func(cores int) (proc, thread time.Duration, err error) {
		d, err := driver.New(driver.Options{Backend: "native", Cores: cores})
		if err != nil {
			return 0, 0, err
		}
		in, err := os.Open(trace)
		if err != nil {
			return 0, 0, err
		}
		defer in.Close()
		f, err := os.Create(out)
		if err != nil {
			return 0, 0, err
		}
		defer f.Close()
		s := &fileSink{w: wire.NewWriter(f)}
		runtime.GC()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		p0, t0 := cpu(syscall.RUSAGE_SELF), cpu(rusageThread)
		_, err = d.Decode(context.Background(), driver.Trace{Name: trace, Input: in, Code: code}, s)
		if err == nil {
			err = s.w.Flush()
		}
		return cpu(syscall.RUSAGE_SELF) - p0, cpu(rusageThread) - t0, err
	}
	if one, _, err = decode(1); err != nil {
		return 0, 0, 0, err
	}
	two, dec, err := decode(2)
	return one, dec, two - dec, err
}

// rusageThread is Linux's RUSAGE_THREAD: the calling thread's usage.
const rusageThread = 1

// cpu returns the user and system time of who (the process, the thread).
func cpu(who int) time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(who, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// fileSink writes a decode's records as att-decode does.
type fileSink struct{ w *wire.Writer }

func (s *fileSink) Header(h *wire.Header) error { return s.w.WriteHeader(h) }
func (s *fileSink) Batch(b *wire.Batch) error   { return s.w.WriteBatch(b) }
