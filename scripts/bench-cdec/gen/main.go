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

// loopKernel is a small gfx9 kernel with a loop, so that waves run long.
var loopKernel = []struct {
	a, size uint64
	text    string
}{
	{0x100, 8, "s_load_dwordx2 s[0:1], s[4:5], 0x0"},
	{0x108, 4, "s_mov_b32 s2, 0"},
	{0x10c, 4, "v_mov_b32_e32 v1, 0"},
	{0x110, 4, "s_waitcnt lgkmcnt(0)"},
	{0x114, 8, "global_load_dword v2, v[0:1], off"},
	{0x11c, 4, "v_add_u32_e32 v1, v1, v2"},
	{0x120, 4, "s_add_u32 s2, s2, 1"},
	{0x124, 4, "s_cmp_lt_u32 s2, 10"},
	{0x128, 8, "ds_write_b32 v0, v1"},
	{0x130, 4, "s_cbranch_scc1 65530"},
	{0x134, 4, "s_cbranch_execz 2"},
	{0x138, 4, "s_barrier"},
	{0x13c, 4, "s_nop 0"},
	{0x140, 8, "global_store_dword v[0:1], v1, off"},
	{0x148, 4, "s_endpgm"},
}

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
	ix := &wire.Index{}
	for _, r := range loopKernel {
		ix.Rows = append(ix.Rows, wire.Row{Vaddr: r.a, Size: r.size, Text: r.text})
	}
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
			Seed: seed, TargetBytes: mib << 20, Perf: true, ShaderData: true})
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
