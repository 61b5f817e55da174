// Command count decodes one trace through internal/cdec and only counts the
// records the binding delivers (no record stream is written), so that the
// binding's own cost can be told apart from att-decode's output encoding.
// It prints the same line format as bench.c, with CPU time (user+sys).
//
// Usage:
//
//	go run ./scripts/bench-cdec/count LIB TRACE INDEX
package main

import (
	"context"
	"fmt"
	"os"
	"syscall"

	"github.com/attkit/attkit/internal/cdec"
	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/wire"
)

func cpu() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: count LIB TRACE INDEX")
		os.Exit(2)
	}
	d, err := cdec.Load(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "count:", err)
		os.Exit(4)
	}
	ix, err := wire.ReadIndexFile(os.Args[3])
	if err != nil {
		fmt.Fprintln(os.Stderr, "count:", err)
		os.Exit(1)
	}
	f, err := os.Open(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "count:", err)
		os.Exit(1)
	}
	defer f.Close()
	var recs, insts uint64
	c0 := cpu()
	err = d.Decode(context.Background(), f, isa.NewTable(ix), func(b *wire.Batch) error {
		if b.Type == wire.TypeGFXIP {
			return nil
		}
		recs += uint64(b.Len())
		for i := range b.Waves {
			insts += uint64(len(b.Waves[i].Instructions))
		}
		return nil
	})
	c1 := cpu()
	if err != nil {
		fmt.Fprintln(os.Stderr, "count:", err)
		os.Exit(1)
	}
	fmt.Printf("records %d instructions %d cpu %.3f (whole process %.3f)\n", recs, insts, c1-c0, c1)
}
