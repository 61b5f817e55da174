package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/attkit/attkit/internal/sqttgen"
	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

var (
	benchTraceMB  = flag.Int("hidden-bench-mb", 100, "size of BenchmarkHiddenLatency's generated record stream, in MB")
	benchTraceOut = flag.String("hidden-bench-out", "", "keep BenchmarkHiddenLatency's generated record stream at this path (to time the binary on it)")
)

// generatedStream writes a record stream of at least mb MB: the records of
// traces sqttgen generates from the gfx942 kernels of its testdata (four
// SIMDs, three wave slots each, waves one after another), one part per
// shader engine, until the file is large enough. It returns the stream's
// path, the index's and the instruction count.
func generatedStream(b *testing.B, dir string, mb int) (stream, idx string, insts int64) {
	idx = filepath.Join("..", "..", "internal", "sqttgen", "testdata", "gfx942.index")
	ix, err := wire.ReadIndexFile(idx)
	if err != nil {
		b.Fatal(err)
	}
	stream = filepath.Join(dir, "gen.rec")
	if *benchTraceOut != "" {
		stream = *benchTraceOut
		if f, err := os.Open(stream); err == nil { // made by an earlier run: reuse it
			defer f.Close()
			rd := wire.NewReader(f, stream)
			for rd.Scan() {
				if rd.Kind() == wire.KindBatch {
					for _, w := range rd.Batch().Waves {
						insts += int64(len(w.Instructions))
					}
				}
			}
			if rd.Err() != nil {
				b.Fatal(rd.Err())
			}
			return stream, idx, insts
		}
	}
	f, err := os.Create(stream)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	cw := &countWriter{w: f}
	bw := bufio.NewWriterSize(cw, 1<<20)
	w := wire.NewWriter(bw)
	for se := 0; cw.n+int64(bw.Buffered()) < int64(mb)<<20; se++ {
		if err := w.WriteHeader(&wire.Header{Producer: "bench", Backend: "native",
			Trace: wire.Trace{Path: fmt.Sprintf("se%d.att", se), SE: se, Run: 1, GFXIP: 9}}); err != nil {
			b.Fatal(err)
		}
		cfg := sqttgen.Config{Index: ix, Seed: uint64(se + 1), TargetBytes: 16 << 20, MaxTrips: 64, Instrument: true,
			Emit: func(bt *wire.Batch) error {
				for i := range bt.Waves {
					insts += int64(len(bt.Waves[i].Instructions))
				}
				return w.WriteBatch(bt)
			}, GFX9: sqttgen.GFX9{SE: uint8(se)}}
		if _, err := sqttgen.GenerateTo(io.Discard, cfg); err != nil {
			b.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	if err := bw.Flush(); err != nil {
		b.Fatal(err)
	}
	return stream, idx, insts
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// BenchmarkHiddenLatency runs att-stats on a generated record stream of at
// least 100 MB (-hidden-bench-mb) from a file, as a user does: the stats
// CSV alone, then hidden.csv and top (the stats fold plus the hidden
// latency analysis) and pprof. The goal (issue 14): the analysis makes
// att-stats at most 2x slower. Reported: the time per run (ns/op),
// instructions/s, cpu-s/op, peak-heap-MiB and, for the analysis, slowdown
// and cpu-slowdown: its wall and CPU time over those of a csv run made
// right before each of its runs (outside the timer), so that with
// -benchtime Nx the ratio is of N interleaved pairs.
func BenchmarkHiddenLatency(b *testing.B) {
	dir := b.TempDir()
	stream, idx, insts := generatedStream(b, dir, *benchTraceMB)
	st, err := os.Stat(stream)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("stream: %.1f MB, %d instructions", float64(st.Size())/1e6, insts)
	runOnce := func(b *testing.B, format string) {
		var errb nullWriter
		if code := run([]string{"--index", idx, "--format", format, "-o", filepath.Join(dir, "out"), stream}, nil, io.Discard, &errb); code != 0 {
			b.Fatalf("%s: exit %d", format, code)
		}
	}
	for _, format := range []string{"csv", "hidden.csv", "top", "pprof"} {
		b.Run("format="+format, func(b *testing.B) {
			b.SetBytes(st.Size())
			runtime.GC()
			stop := peakHeap()
			var cpu, csvCPU, csvWall time.Duration
			for b.Loop() {
				if format != "csv" {
					// A csv run before each, outside the timer: the
					// slowdown is of pairs run one after the other, so
					// the machine's drift over the benchmark cancels.
					b.StopTimer()
					c0, t0 := testutil.CPUTime(), time.Now()
					runOnce(b, "csv")
					csvWall += time.Since(t0)
					csvCPU += testutil.CPUTime() - c0
					runtime.GC()
					b.StartTimer()
				}
				c0 := testutil.CPUTime()
				runOnce(b, format)
				cpu += testutil.CPUTime() - c0
			}
			peak := stop()
			n := float64(b.N)
			if format != "csv" {
				b.ReportMetric(b.Elapsed().Seconds()/csvWall.Seconds(), "slowdown")
				b.ReportMetric(cpu.Seconds()/csvCPU.Seconds(), "cpu-slowdown")
			}
			b.ReportMetric(float64(insts)*n/b.Elapsed().Seconds(), "instructions/s")
			b.ReportMetric(cpu.Seconds()/n, "cpu-s/op")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}

type nullWriter struct{}

func (nullWriter) Write(p []byte) (int, error) { return len(p), nil }
