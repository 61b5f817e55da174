package codeobj

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkIndexBig indexes the large test kernel (~6000 instructions) the
// way one co-index run does, and reports the share of the time spent
// outside the llvm-objdump processes (goal: under 20%).
func BenchmarkIndexBig(b *testing.B) {
	tool := needTool(b, "llvm-objdump-19")
	path, _ := filepath.Abs(filepath.Join(kernelsDir, "gfx942", "big_code_object_id_2.hsaco"))
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	var total, objdump time.Duration
	rows := 0
	for b.Loop() {
		od := &Objdump{Explicit: tool}
		start := time.Now()
		in, err := Normalize([]Input{{ID: 2, Path: path}})
		if err != nil {
			b.Fatal(err)
		}
		ix, err := Build(context.Background(), in, Options{Objdump: od})
		if err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		objdump += od.Time
		rows = len(ix.Rows)
	}
	b.ReportMetric(float64(rows), "rows/op")
	b.ReportMetric(100*float64(total-objdump)/float64(total), "%outside-objdump")
}

// BenchmarkParseBig measures the in-process part alone: ELF, symbols and
// DWARF of the large kernel.
func BenchmarkParseBig(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(kernelsDir, "gfx942", "big_code_object_id_2.hsaco"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse(data, "big"); err != nil {
			b.Fatal(err)
		}
	}
}
