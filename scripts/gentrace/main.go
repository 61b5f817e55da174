// Command gentrace writes a synthetic gfx9 or RDNA (gfx10, gfx11, gfx12;
// -arch) thread trace (.att) of waves running a real kernel, and optionally the records a correct decoder must
// produce from it, for benchmarks and sample data.
//
// Usage:
//
//	go run ./scripts/gentrace -index IDX -seed N -o out.att [-expect out.rec] [flags]
//
// IDX is an index stream from co-index (or a code.json). -size 100MB keeps
// starting waves until the trace has that size. -expect writes the expected
// records as an attkit record stream (the att-decode format), so that
// `att-decode out.att --index IDX` can be compared with it. The trace is
// made with package internal/sqttgen; see its documentation for what the
// generated traces contain.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/attkit/attkit/internal/cli"
	"github.com/attkit/attkit/internal/sqttgen"
	"github.com/attkit/attkit/internal/wire"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gentrace", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		index    = fs.String("index", "", "index stream (co-index) or code.json with the kernels `FILE`")
		kernel   = fs.String("kernel", "", "run only the kernels with these comma-separated `NAMES` (default: all, at most 8)")
		seed     = fs.Uint64("seed", 1, "seed for paths, trip counts and timings")
		out      = fs.String("o", "", "write the trace to `FILE` (required)")
		expect   = fs.String("expect", "", "write the expected records to `FILE` (attkit record stream)")
		size     = fs.String("size", "", "keep starting waves until the trace has this `SIZE` (e.g. 100MB)")
		simds    = fs.Int("simds", 4, "SIMDs with traced waves (1..4)")
		waves    = fs.Int("waves", 4, "wave slots per SIMD (1..10)")
		perSlot  = fs.Int("per-slot", 2, "waves per slot, one after another (without -size)")
		others   = fs.Int("other-cus", 2, "CUs with occupancy-only waves")
		trips    = fs.Int("max-trips", 64, "largest loop trip count")
		version2 = fs.Uint("version2", 5, "header version2: 4 MI200, 5 MI300, 6 MI350")
		target   = fs.Uint("target-cu", 0, "traced CU (0..15)")
		plain    = fs.Bool("no-instrument", false, "no '\\0ROC' instrumentation (only for code object 0)")
		late     = fs.Bool("late-load", false, "announce the code objects after the first waves")
		all      = fs.Bool("all", false, "enable dispatch, perf, shader data, events and barrier messages")
		quiet    = fs.Bool("q", false, "do not print the summary")
		v016     = fs.Bool("compat016", false, "-expect records as AMD's 0.1.6 library reports them (spec A.3 and observed differences; gfx9 and RDNA)")
		wild     = fs.Bool("wild", false, "gfx9: also pipelined INST tokens, XNACK replays, traps, context switches, merged ISSUE tokens, packet loss")
		arch     = fs.String("arch", "gfx9", "trace architecture: gfx9, gfx10, gfx11 or gfx12 (or a target such as gfx1100)")
	)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *index == "" || *out == "" || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "gentrace: -index and -o are required, and no arguments are taken")
		return 2
	}
	gfxip := archGFXIP(*arch)
	if gfxip == 0 {
		fmt.Fprintf(stderr, "gentrace: -arch %q: want gfx9, gfx10, gfx11, gfx12 or a target of those\n", *arch)
		return 2
	}
	ix, err := wire.ReadIndexFile(*index)
	if err != nil {
		fmt.Fprintf(stderr, "gentrace: %v\n", err)
		return 1
	}
	cfg := sqttgen.Config{
		Index: ix, Seed: *seed, WavesPerSIMD: *waves, WavesPerSlot: *perSlot,
		OtherCUs: *others, MaxTrips: *trips, Instrument: !*plain, LateLoad: *late,
		GFX9: sqttgen.GFX9{SIMDs: *simds, Version2: uint8(*version2), TargetCU: uint8(*target)},
	}
	if *others == 0 {
		cfg.OtherCUs = -1
	}
	if *all {
		cfg.Dispatch, cfg.GFX9.Perf, cfg.ShaderData, cfg.Events, cfg.GFX9.BarrierMessages = true, true, true, true, true
	}
	if *wild {
		cfg.GFX9.Pipeline, cfg.GFX9.Replays, cfg.GFX9.Traps, cfg.GFX9.ContextSwitch, cfg.GFX9.MergeIssues, cfg.PacketLoss = true, true, true, true, true, true
	}
	cfg.Compat016 = *v016
	if *kernel != "" {
		for _, name := range strings.Split(*kernel, ",") {
			found := false
			for _, k := range ix.Kernels {
				if k.Name == name || k.Demangled == name {
					cfg.Kernels = append(cfg.Kernels, sqttgen.Kernel{Entry: k.Address, CodeObjectID: k.CodeObj})
					found = true
				}
			}
			if !found {
				fmt.Fprintf(stderr, "gentrace: no kernel %q in %s\n", name, *index)
				return 1
			}
		}
	}
	if *size != "" {
		n, err := parseSize(*size)
		if err != nil {
			fmt.Fprintf(stderr, "gentrace: -size: %v\n", err)
			return 2
		}
		cfg.TargetBytes = n
	}
	start := time.Now()
	var st sqttgen.Stats
	gen := func(tw io.Writer, ew io.Writer) error {
		if ew != nil {
			rw := wire.NewWriter(ew)
			if err := rw.WriteHeader(&wire.Header{Producer: "gentrace " + cli.Version(), Backend: "sqttgen",
				Trace: wire.Trace{Path: *out, GFXIP: gfxip}}); err != nil {
				return err
			}
			cfg.Emit = rw.WriteBatch
			defer func() {
				if e := rw.Flush(); err == nil {
					err = e
				}
			}()
		}
		if gfxip >= 10 {
			// -simds, -version2 and -target-cu are gfx9 options; RDNA
			// traces one SIMD of one WGP.
			o := sqttgen.RDNA{GFXIP: gfxip, ExtStarts: *all, OtherSIMD: *all, Noise: *all}
			st, err = sqttgen.GenerateRDNATo(tw, cfg, o)
			return err
		}
		st, err = sqttgen.GenerateTo(tw, cfg)
		return err
	}
	err = cli.WriteFileAtomic(*out, func(tw io.Writer) error {
		if *expect == "" {
			return gen(tw, nil)
		}
		return cli.WriteFileAtomic(*expect, func(ew io.Writer) error { return gen(tw, ew) })
	})
	if err != nil {
		fmt.Fprintf(stderr, "gentrace: %v\n", err)
		return 1
	}
	if !*quiet {
		el := time.Since(start).Seconds()
		fmt.Fprintf(stdout, "%s: %d bytes, %d waves, %d instructions, %.2f s, %.1f MB/s\n",
			*out, st.Bytes, st.Waves, st.Instructions, el, float64(st.Bytes)/1e6/el)
	}
	return 0
}

// archGFXIP maps gfx9, gfx10, gfx11, gfx12 or a target name (gfx90a,
// gfx1030, gfx1201...) to the GFXIP major, 0 when unknown.
func archGFXIP(s string) int {
	d, ok := strings.CutPrefix(strings.ToLower(s), "gfx")
	switch {
	case !ok || d == "":
		return 0
	case d[0] == '9':
		return 9
	case strings.HasPrefix(d, "10"):
		return 10
	case strings.HasPrefix(d, "11"):
		return 11
	case strings.HasPrefix(d, "12"):
		return 12
	}
	return 0
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	u := strings.ToUpper(s)
	for _, x := range []struct {
		suf string
		m   int64
	}{{"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"G", 1e9}, {"M", 1e6}, {"K", 1e3}, {"B", 1}} {
		if strings.HasSuffix(u, x.suf) {
			mult, u = x.m, strings.TrimSuffix(u, x.suf)
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(u), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}
