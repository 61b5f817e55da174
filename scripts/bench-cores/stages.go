package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/attkit/attkit/internal/driver"
	"github.com/attkit/attkit/internal/wire"
)

// stages estimates the two-core speed-up from CPU time, which a loaded
// machine does not distort as it does wall time: it decodes trace in this
// process through internal/driver into a record file (att-decode's
// output), once on one core and once split over two (sqtt.Decoder.Split).
// one is the CPU time of the one-core decode. The split decode runs under
// a CPU profile, which tells each goroutine's share of the process's CPU
// time by the function its stack starts at: sh.front, the token reading
// and the waves' state (including handing the waves and batches over);
// sh.back, stitching, record building, the sink's encoding and writing;
// sh.runtime, the scheduler and the garbage collector. sh.scan is the part
// of the front's and the back's that is an RDNA decode's token scan
// (rdnaScanner.scanOne), which whichever side waits does. Each stage runs
// on one goroutine, so with both cores to itself the split decode takes
// at least the larger stage and half the whole, and one over that bounds
// the speed-up the wall times show on a quiet machine. (Locking the front
// to its thread and reading the thread's CPU time, as this did before,
// charged the front and the others with the locked thread's hand-overs of
// its core.)
func stages(trace, index, out string) (one time.Duration, sh shares, err error) {
	ix, err := wire.ReadIndexFile(index)
	if err != nil {
		return 0, sh, err
	}
	code := driver.NewCode(ix)
	once := func(d *driver.Driver) error {
		in, err := os.Open(trace)
		if err != nil {
			return err
		}
		defer in.Close()
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		defer f.Close()
		s := &fileSink{w: wire.NewWriter(f)}
		if _, err := d.Decode(context.Background(), driver.Trace{Name: trace, Input: in, Code: code}, s); err != nil {
			return err
		}
		return s.w.Flush()
	}
	// decode runs the decode reps times and returns the CPU time of all.
	decode := func(cores, reps int, prof io.Writer) (proc time.Duration, err error) {
		d, err := driver.New(driver.Options{Backend: "native", Cores: cores})
		if err != nil {
			return 0, err
		}
		runtime.GC()
		if prof != nil {
			if err := pprof.StartCPUProfile(prof); err != nil {
				return 0, err
			}
			defer pprof.StopCPUProfile()
		}
		p0 := cpu(syscall.RUSAGE_SELF)
		for i := 0; i < reps && err == nil; i++ {
			err = once(d)
		}
		return cpu(syscall.RUSAGE_SELF) - p0, err
	}
	if one, err = decode(1, 1, nil); err != nil {
		return 0, sh, err
	}
	// The profiler samples every 10 ms: a small trace repeats until the
	// profile holds enough samples to divide (CI's 1 MB traces decode in
	// a few milliseconds and gave none).
	reps := 1
	if one < minProfiled {
		reps = min(int(minProfiled/max(one, time.Millisecond))+1, 1000)
	}
	var prof bytes.Buffer
	two, err := decode(2, reps, &prof)
	if err != nil {
		return 0, sh, err
	}
	name := out + ".prof"
	if err := os.WriteFile(name, prof.Bytes(), 0o644); err != nil {
		return 0, sh, err
	}
	defer os.Remove(name)
	traces, err := exec.Command("go", "tool", "pprof", "-traces", name).Output()
	if err != nil {
		return 0, sh, fmt.Errorf("go tool pprof: %v", err)
	}
	sh, err = shareOut(traces, two)
	return one, sh.div(reps), err
}

// minProfiled is the least CPU time a profiled decode runs for (see
// stages).
const minProfiled = 500 * time.Millisecond

// div is sh over n runs.
func (sh shares) div(n int) shares {
	d := time.Duration(n)
	return shares{sh.front / d, sh.back / d, sh.scan / d, sh.runtime / d}
}

// shares is the split decode's CPU time by stage (see stages); scan is
// part of front and back.
type shares struct{ front, back, scan, runtime time.Duration }

// bound is the least time two cores can take: the larger stage, or half
// the whole.
func (sh shares) bound() time.Duration {
	return max(sh.front, sh.back, (sh.front+sh.back+sh.runtime)/2)
}

// shareOut divides total by the samples of a CPU profile given as `go
// tool pprof -traces` prints it: each sample's time and its stack,
// innermost first, after a line of dashes.
func shareOut(traces []byte, total time.Duration) (shares, error) {
	var by [4]time.Duration // front, back, scan, runtime
	var sum time.Duration
	var cur time.Duration
	class, scan := 3, false
	flush := func() {
		by[class] += cur
		if scan {
			by[2] += cur
		}
		sum += cur
		cur, class, scan = 0, 3, false
	}
	started := false
	for _, line := range strings.Split(string(traces), "\n") {
		if strings.HasPrefix(line, "-----------+") {
			if started {
				flush()
			}
			started = true
			continue
		}
		if !started {
			continue
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		fn := f[0]
		if cur == 0 {
			d, err := time.ParseDuration(f[0])
			if err != nil || len(f) < 2 {
				return shares{}, fmt.Errorf("pprof -traces: unexpected line %q", line)
			}
			cur, fn = d, f[1]
		}
		switch {
		case strings.Contains(fn, "sqtt.(*back).run"):
			class = 1
		case strings.Contains(fn, "sqtt.(*rdnaScanner).scanOne"):
			scan = true
		case strings.Contains(fn, "sqtt.(*Decoder).decode") && class == 3:
			class = 0
		}
	}
	if started {
		flush()
	}
	if sum == 0 {
		return shares{}, fmt.Errorf("the CPU profile holds no samples")
	}
	part := func(d time.Duration) time.Duration { return time.Duration(float64(total) * float64(d) / float64(sum)) }
	return shares{part(by[0]), part(by[1]), part(by[2]), part(by[3])}, nil
}

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
