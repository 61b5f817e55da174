package main

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

// repeatReader yields head, then body n times: a stream of any length in
// constant memory.
type repeatReader struct {
	head, body []byte
	n          int
	cur        []byte
}

func (r *repeatReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		switch {
		case r.head != nil:
			r.cur, r.head = r.head, nil
		case r.n > 0:
			r.cur = r.body
			r.n--
		default:
			return 0, io.EOF
		}
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// peakHeap samples the heap in use until stop is called and returns the
// largest value seen.
func peakHeap() (stop func() uint64) {
	var mu sync.Mutex
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			mu.Lock()
			peak = max(peak, ms.HeapInuse)
			mu.Unlock()
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak
	}
}

// BenchmarkStats runs att-stats end to end (read the record stream, fold,
// write the CSV) on streams of 2.5, 10 and 41 million instructions: waves
// of 10 000 instructions over a 512-instruction kernel, 8 waves a batch.
// instructions/s is the throughput (goal: 20 million on one core;
// instructions/cpu-s counts CPU time, GC included, for loaded machines); peak-heap
// stays flat as the waves grow in number, because the fold keeps per-PC
// counters only.
func BenchmarkStats(b *testing.B) {
	const kernel = 512
	dir := b.TempDir()
	ix := &wire.Index{}
	for i := range kernel {
		ix.Rows = append(ix.Rows, wire.Row{CodeObj: 1, Vaddr: 0x1000 + 4*uint64(i), Text: fmt.Sprintf("v_op%d", i), Line: int64(i + 1)})
	}
	idx := writeIndex(b, filepath.Join(dir, "b.idx"), ix)
	var head, body bytes.Buffer
	w := wire.NewWriter(&head)
	w.WriteHeader(&wire.Header{Producer: "bench", Trace: wire.Trace{Run: 1}})
	w.Flush()
	var batch wire.Batch
	batch.Type = wire.TypeWave
	perWave := 0
	for k := range 8 {
		wv := wire.Wave{SIMD: uint8(k % 4), BeginTime: 1000}
		t := int64(1000)
		add := func(i int) {
			wv.Instructions = append(wv.Instructions, wire.Instruction{Category: wire.CatVALU,
				Stall: uint32(i % 3), Duration: int32(4 + i%5), Time: t,
				PC: wire.PC{Address: 0x1000 + 4*uint64(i), CodeObjectID: 1}})
			t += int64(3 + i%7)
		}
		for i := range kernel / 4 {
			add(i)
		}
		for range 38 {
			for i := kernel / 4; i < 3*kernel/4; i++ {
				add(i)
			}
		}
		for i := 3 * kernel / 4; i < kernel; i++ {
			add(i)
		}
		perWave = len(wv.Instructions)
		batch.Waves = append(batch.Waves, wv)
	}
	w = wire.NewWriter(&body)
	w.WriteBatch(&batch)
	w.Flush()
	// The reader alone, for comparison: what the fold adds on top.
	b.Run("read-only/waves=1024", func(b *testing.B) {
		const waves = 1024
		cpu0 := testutil.CPUTime()
		rd := wire.NewReader(&repeatReader{}, "")
		for b.Loop() {
			rd.Reset(&repeatReader{head: head.Bytes(), body: body.Bytes(), n: waves / 8}, "bench")
			for rd.Scan() {
			}
			if rd.Err() != nil {
				b.Fatal(rd.Err())
			}
		}
		insts := float64(waves*perWave) * float64(b.N)
		b.ReportMetric(insts/b.Elapsed().Seconds(), "instructions/s")
		b.ReportMetric(insts/(testutil.CPUTime()-cpu0).Seconds(), "instructions/cpu-s")
	})
	for _, waves := range []int{256, 1024, 4096} {
		insts := int64(waves * perWave)
		b.Run(fmt.Sprintf("waves=%d", waves), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(head.Len() + body.Len()*waves/8))
			runtime.GC()
			stop := peakHeap()
			cpu0 := testutil.CPUTime()
			for b.Loop() {
				in := &repeatReader{head: head.Bytes(), body: body.Bytes(), n: waves / 8}
				var out, errb bytes.Buffer
				if code := run([]string{"--index", idx}, in, &out, &errb); code != 0 {
					b.Fatalf("exit %d: %s", code, errb.String())
				}
			}
			cpu := testutil.CPUTime() - cpu0
			peak := stop()
			if cpu > 0 {
				b.ReportMetric(float64(insts)*float64(b.N)/cpu.Seconds(), "instructions/cpu-s")
			}
			b.ReportMetric(float64(insts)*float64(b.N)/b.Elapsed().Seconds(), "instructions/s")
			b.ReportMetric(float64(insts), "instructions/op")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}
