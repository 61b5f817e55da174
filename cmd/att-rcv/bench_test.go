package main

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/cli"
	"github.com/attkit/attkit/internal/rcv"
	"github.com/attkit/attkit/internal/wire"
)

// BenchmarkRun is att-rcv end to end on a record stream of 12,000 waves of
// 40 instructions over the generated-trace index (two shader engines):
// read, fold, write every file, commit. It reports wave files per second
// and MB/s of files written.
func BenchmarkRun(b *testing.B) {
	ix, err := wire.ReadIndexFile(genIndex)
	if err != nil {
		b.Fatal(err)
	}
	var pcs []wire.PC
	for _, r := range ix.Rows {
		if !r.IsLabel() {
			pcs = append(pcs, r.PC())
		}
	}
	dir := b.TempDir()
	index := filepath.Join(dir, "code.json")
	os.WriteFile(index, ix.CodeJSON(), 0o644)
	var parts []part
	for se := 0; se < 2; se++ {
		p := part{se: se, run: 1}
		for k := 0; k < 60; k++ {
			var waves []wire.Wave
			for j := 0; j < 100; j++ {
				wv := wire.Wave{CU: 1, SIMD: uint8(j % 4), WaveID: uint8(j % 10), BeginTime: int64(k*100000 + j*100)}
				wv.EndTime = wv.BeginTime + 400
				wv.Timeline = states(2, 300, 1, 100)
				for i := 0; i < 40; i++ {
					wv.Instructions = append(wv.Instructions, ins(wire.CatVALU, wv.BeginTime+int64(8*i), uint32(i%3), 4, pcs[(j+i)%len(pcs)]))
				}
				waves = append(waves, wv)
			}
			p.batches = append(p.batches,
				wire.Batch{Type: wire.TypeOccupancy, Occupancy: []wire.Occupancy{occ(pcs[0], uint64(k*100000), 1, 0, 0, true)}},
				wire.Batch{Type: wire.TypeWave, Waves: waves})
		}
		parts = append(parts, p)
	}
	stream := filepath.Join(dir, "run.rec")
	os.WriteFile(stream, encode(b, parts...), 0o644)
	env := &cli.Env{Name: "att-rcv", Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}
	n := 0
	var bytes int64
	for b.Loop() {
		n++
		out := filepath.Join(dir, "ui"+strconv.Itoa(n))
		fl := flags{Dir: out, Index: index, Formats: []string{"json,csv"}, Streams: []string{stream}}
		if err := write(env, &fl, rcv.FolderOptions{}); err != nil {
			b.Fatal(err)
		}
		if bytes == 0 {
			filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
				if fi, err := d.Info(); err == nil && !d.IsDir() {
					bytes += fi.Size()
				}
				return nil
			})
		}
		b.SetBytes(bytes)
	}
	b.ReportMetric(float64(12000*n)/b.Elapsed().Seconds(), "wavefiles/s")
}
