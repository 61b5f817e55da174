// Command gen writes the inputs of the bench-cdec comparison: a large
// generated gfx9 trace (trace.att), its instructions as an attkit index
// (index.msgpack, for att-decode --index) and as the text table the C
// benchmark reads (isa.txt: "CODE_OBJECT_ID ADDRESS SIZE TEXT" a line).
//
// Usage:
//
//	go run ./scripts/bench-cdec/gen -o DIR [-mib N] [-seed S]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/attkit/attkit/internal/cli"
	"github.com/attkit/attkit/internal/sqttgen"
	"github.com/attkit/attkit/internal/wire"
)

func main() {
	out := flag.String("o", ".", "output directory")
	mib := flag.Int64("mib", 64, "approximate trace size in MiB")
	seed := flag.Uint64("seed", 1, "generator seed")
	flag.Parse()
	if err := run(*out, *mib, *seed); err != nil {
		fmt.Fprintf(os.Stderr, "gen: %v\n", err)
		os.Exit(1)
	}
}

func run(dir string, mib int64, seed uint64) error {
	ix := sqttgen.LoopIndex(0) // a loop, so that waves run long
	err := cli.WriteFileAtomic(filepath.Join(dir, "isa.txt"), func(w0 io.Writer) error {
		w := bufio.NewWriter(w0)
		for _, r := range ix.Rows {
			fmt.Fprintf(w, "%d %#x %d %s\n", r.CodeObj, r.Vaddr, r.Size, r.Text)
		}
		return w.Flush()
	})
	if err != nil {
		return err
	}
	err = cli.WriteFileAtomic(filepath.Join(dir, "index.msgpack"), func(w io.Writer) error {
		return wire.WriteIndex(w, ix)
	})
	if err != nil {
		return err
	}
	var st sqttgen.Stats
	err = cli.WriteFileAtomic(filepath.Join(dir, "trace.att"), func(w0 io.Writer) error {
		w := bufio.NewWriterSize(w0, 1<<20)
		var err error
		st, err = sqttgen.GenerateTo(w, sqttgen.Config{Index: ix, Kernels: []sqttgen.Kernel{{Entry: 0x100}},
			Seed: seed, TargetBytes: mib << 20, ShaderData: true, GFX9: sqttgen.GFX9{Perf: true}})
		if err != nil {
			return err
		}
		return w.Flush()
	})
	if err != nil {
		return err
	}
	fmt.Printf("trace %d bytes, %d waves, %d instructions\n", st.Bytes, st.Waves, st.Instructions)
	return nil
}
