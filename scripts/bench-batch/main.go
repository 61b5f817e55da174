// Command bench-batch measures the peak memory of the stream readers on a
// record stream whose batches are as large as the trace (a decoder may
// deliver all its perf counters, realtime samples or shader data in one
// callback: att-decode --whole-batches, --compat 0.1.6, AMD's library):
// it writes the same records twice, once in batches of 1024 records and
// once with each record type in a single batch, and runs att-stats (csv),
// att-timeline and att-rcv on both, reporting wall time and peak RSS.
// Goal: on the huge-batch stream each tool's peak RSS within 1.25x of its
// peak on the same records in small batches (each reads large batches in
// pieces, wire.Reader.SetMaxBatch); it exits 1 when that does not hold.
//
// Usage:
//
//	go run ./scripts/bench-batch [-records 4000000] [-runs 1] [-tools att-stats,att-timeline,att-rcv]
//
// -records is the count of each of the perf counter, realtime and shader
// data records (the stream also holds 1000 waves and their occupancy).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/attkit/attkit/internal/wire"
	"github.com/attkit/attkit/scripts/internal/measure"
)

func main() {
	records := flag.Int("records", 4000000, "perf, realtime and shader data records, each")
	runs := flag.Int("runs", 1, "runs per tool and stream; the median peak RSS is compared")
	tools := flag.String("tools", "att-stats,att-timeline,att-rcv", "tools to measure")
	write := flag.String("write", "", "internal: write the stream to this file (batches of -per records) and exit")
	per := flag.Int("per", 0, "internal: with -write, records per batch (0: one batch)")
	flag.Parse()
	if *write != "" {
		// In a process of its own: the records of a whole batch in memory
		// would otherwise raise the peak RSS that the tools run from this
		// process inherit at exec (Linux keeps the parent's high-water mark).
		if err := writeStream(*write, *records, *per); err != nil {
			fmt.Fprintln(os.Stderr, "bench-batch:", err)
			os.Exit(1)
		}
		return
	}
	if *runs < 1 || *records < 1 {
		fmt.Fprintln(os.Stderr, "bench-batch: -runs and -records must be at least 1")
		os.Exit(2)
	}
	if err := bench(*records, *runs, strings.Split(*tools, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "bench-batch:", err)
		os.Exit(1)
	}
}

func bench(n, runs int, tools []string) error {
	work, err := os.MkdirTemp("", "bench-batch")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	bin := filepath.Join(work, "bin")
	args := []string{"build", "-o", bin + "/"}
	for _, t := range tools {
		args = append(args, "./cmd/"+t)
	}
	build := exec.Command("go", args...)
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build: %v", err)
	}
	small := filepath.Join(work, "small.rec")
	huge := filepath.Join(work, "huge.rec")
	self, err := os.Executable()
	if err != nil {
		return err
	}
	for path, per := range map[string]int{small: 1024, huge: 0} {
		if _, err := measure.Run("", nil, self, "-write", path, "-per", fmt.Sprint(per), "-records", fmt.Sprint(n)); err != nil {
			return err
		}
	}
	st, _ := os.Stat(huge)
	fmt.Printf("stream: %d bytes (%d perf, realtime and shader data records each, 1000 waves)\n", st.Size(), n)
	fmt.Printf("%-13s %-6s %10s %12s\n", "tool", "batch", "wall", "peak RSS")
	failed := false
	for _, t := range tools {
		var peak [2]int64
		for i, s := range []string{small, huge} {
			var rss []int64
			var r measure.Result
			for range runs {
				var a []string
				switch t {
				case "att-stats":
					a = []string{"-o", filepath.Join(work, "stats.csv"), s}
				case "att-timeline":
					a = []string{"-o", filepath.Join(work, "tl.json"), "--max-size", "64GB", s}
				case "att-rcv":
					os.RemoveAll(filepath.Join(work, "ui"))
					os.Remove(filepath.Join(work, "stats_ui.csv"))
					a = []string{"-d", filepath.Join(work, "ui"), s}
				default:
					return fmt.Errorf("unknown tool %s", t)
				}
				if r, err = measure.Run("", nil, filepath.Join(bin, t), a...); err != nil {
					return err
				}
				rss = append(rss, r.MaxRSS)
			}
			peak[i] = measure.Median(rss)
			fmt.Printf("%-13s %-6s %10s %9d KiB\n", t, []string{"1024", "whole"}[i], r.Wall.Round(10*time.Millisecond), peak[i])
		}
		ratio := float64(peak[1]) / float64(peak[0])
		fmt.Printf("%-13s whole / 1024: %.2f (goal: at most 1.25)\n", t, ratio)
		if ratio > 1.25 {
			failed = true
		}
	}
	if failed {
		return fmt.Errorf("a tool's peak RSS grows with the batch size")
	}
	return nil
}

// writeStream writes a gfx9 stream of n perf, realtime and shader data
// records (in batches of per records; 0: one batch each) and 1000 waves.
func writeStream(path string, n, per int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	w := wire.NewWriter(bw)
	if err := w.WriteHeader(&wire.Header{Producer: "bench-batch", Backend: "native", Trace: wire.Trace{Path: "x.att", Run: 1, GFXIP: 9}}); err != nil {
		return err
	}
	if per <= 0 {
		per = n
	}
	write := func(make func(i int, b *wire.Batch)) error {
		for i := 0; i < n; i += per {
			var b wire.Batch
			for j := i; j < min(i+per, n); j++ {
				make(j, &b)
			}
			if err := w.WriteBatch(&b); err != nil {
				return err
			}
		}
		return nil
	}
	for _, mk := range []func(i int, b *wire.Batch){
		func(i int, b *wire.Batch) {
			b.Type = wire.TypePerfEvent
			b.PerfEvents = append(b.PerfEvents, wire.PerfEvent{Time: int64(i) * 4, Events: [4]uint16{uint16(i), 2, 3, 4}, CU: uint8(i % 16)})
		},
		func(i int, b *wire.Batch) {
			b.Type = wire.TypeRealtime
			b.Realtime = append(b.Realtime, wire.Realtime{ShaderClock: int64(i) * 100, RealtimeClock: uint64(i) * 7})
		},
		func(i int, b *wire.Batch) {
			b.Type = wire.TypeShaderData
			b.ShaderData = append(b.ShaderData, wire.ShaderData{Time: int64(i) * 3, Value: uint64(i), CU: uint8(i % 16), SIMD: uint8(i % 4)})
		},
	} {
		if err := write(mk); err != nil {
			return err
		}
	}
	for i := range 1000 {
		wv := wire.Wave{CU: uint8(i % 16), SIMD: uint8(i % 4), WaveID: uint8(i % 10), BeginTime: int64(i) * 1000, EndTime: int64(i)*1000 + 900}
		for j := range 20 {
			wv.Instructions = append(wv.Instructions, wire.Instruction{Category: wire.CatSALU, Time: wv.BeginTime + int64(j)*40, Duration: 8,
				PC: wire.PC{Address: 0x1000 + uint64(j)*4, CodeObjectID: 1}})
		}
		occ := wire.Batch{Type: wire.TypeOccupancy, Occupancy: []wire.Occupancy{{PC: wire.PC{Address: 0x1000, CodeObjectID: 1}, Time: uint64(wv.BeginTime), CU: wv.CU, SIMD: wv.SIMD, WaveID: wv.WaveID, Start: true}}}
		if err := w.WriteBatch(&occ); err != nil {
			return err
		}
		if err := w.WriteBatch(&wire.Batch{Type: wire.TypeWave, Waves: []wire.Wave{wv}}); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}
