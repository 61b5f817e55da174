// Command difffuzz is a local differential fuzzer: it mutates the real
// thread traces of ../shared/real at the token level, decodes every mutant
// with the native decoder (internal/sqtt, in 0.1.6 compatibility) and with
// AMD's rocprof-trace-decoder library (internal/cdec), compares their
// records field by field, and writes one minimized reproducer per class of
// divergence. It needs the library (ROCPROF_TRACE_DECODER_LIB, AMD's 0.1.6
// build) and the corpus, and is never run in CI.
//
// Usage:
//
//	ROCPROF_TRACE_DECODER_LIB=/path/to/librocprof-trace-decoder.so \
//	  scripts/difffuzz/run [-n 20000] [-seed 1] [-arch gfx9|rdna|all] [-out /tmp/difffuzz] [-corpus ../shared/real]
//
// (scripts/difffuzz/run builds it, runs it on one core with GOMAXPROCS=1
// and passes the flags on; `go run ./scripts/difffuzz` works too.)
//
// Inputs. Each trace is framed into tokens with the harness's own tables,
// written from docs/spec/sqtt-format.md (gfx9: 16-bit-aligned tokens of
// §2.2.2 after the 8-byte software header; RDNA: the nibble-aligned prefix
// codes of §2.3.2 per header version, ALU_EXEC and VMEM_EXEC included, gfx12
// WAVE_START_EXT extension bytes and 72-bit NEW_PC), independent of the
// decoder's. An input is a corpus trace of the family after one to eight
// mutations: drop a token or a run of them, duplicate, swap, change a
// token's time delta or one of its fields (§2.2.4, §2.3.4; the change must
// leave the token the same kind), cut the stream (possibly inside a token or
// without the zero padding), change the padding, splice the rest of another
// trace of the same architecture in, or insert tokens from one. The header
// token is never changed. Input i depends only on -seed, the family and i,
// so a run is deterministic (resuming is not supported).
//
// Comparison. The native decoder runs as `att-decode --backend native
// --compat 0.1.6`, the library as `--backend rocm`, both with the capture's
// code.json as ISA; both record lists go through sqttgen.Normalize016 and
// are compared per record type (sqttgen.Records), field by field. A native
// panic is recovered and is a class of its own, named by where it happened;
// so is a native decode that does not return (-timeout). The library runs
// in a worker process (this program again), so that its crash or hang is
// reported and the worker restarted (the worker also keeps the library's
// results independent of the inputs decoded before; see decode.go).
//
// Classes. A difference is named without its values ("wave.instruction.Duration",
// "occupancy.count (native fewer)", "status: native ok / library invalid
// shader data", "batching: ..."). The corpus traces are decoded unmodified
// first; an input is classed by its first difference that its seed (and
// splice donors) do not already show, together with its first differing
// token: the kind of the token at which the difference appears when the
// input is cut after ever more tokens (bisection). The smallest input of
// each class is minimized (drop runs of tokens while the same difference
// appears at a token of the same kind) and written to -out as
// NNN-<gen>-<class>.att with a .txt that says what differs, the tokens, and
// the att-decode commands that show it; summary.txt lists the classes, most
// frequent first, and per family the inputs tried, divergent inputs,
// classes and throughput. -out must be outside the repository: reproducers
// are derived from the corpus, which must not be committed.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/attkit/attkit/internal/cdec"
)

func main() {
	if os.Getenv(envWorker) != "" {
		os.Exit(workerMain())
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("difffuzz", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		n       = fs.Int("n", 1000, "mutated inputs per family")
		seed    = fs.Uint64("seed", 1, "seed of the mutations")
		arch    = fs.String("arch", "all", "families to fuzz: gfx9, rdna or all")
		out     = fs.String("out", "/tmp/difffuzz", "write reproducers and summary.txt to `DIR` (outside the repository)")
		corpusF = fs.String("corpus", "../shared/real", "the real-hardware corpus `DIR` (capture folders)")
		timeout = fs.Duration("timeout", 10*time.Second, "a decode taking longer is a hang")
		budget  = fs.Int("min-evals", 3000, "decode pairs spent minimizing each class at most")
	)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprintln(stderr, "difffuzz: no arguments are taken, only flags (see -help)")
		return 2
	}
	var fams []string
	switch *arch {
	case "gfx9", "rdna":
		fams = []string{*arch}
	case "all":
		fams = []string{"gfx9", "rdna"}
	default:
		fmt.Fprintf(stderr, "difffuzz: -arch %q: want gfx9, rdna or all\n", *arch)
		return 2
	}
	libPath := os.Getenv(cdec.EnvLib)
	if libPath == "" {
		fmt.Fprintf(stderr, "difffuzz: %s is not set: set it to the path of AMD's librocprof-trace-decoder.so (the 0.1.6 build) to compare the native decoder with it\n", cdec.EnvLib)
		return 4
	}
	if err := checkOutside(*out); err != nil {
		fmt.Fprintf(stderr, "difffuzz: %v\n", err)
		return 2
	}
	if err := fuzzMain(stdout, stderr, fams, *n, *seed, *out, *corpusF, *timeout, *budget, libPath); err != nil {
		fmt.Fprintf(stderr, "difffuzz: %v\n", err)
		return 1
	}
	return 0
}

// checkOutside refuses an output folder inside the repository (the module
// root above the working directory).
func checkOutside(out string) error {
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil // not inside a module
		}
		dir = parent
	}
	if rel, err := filepath.Rel(dir, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("-out %s is inside the repository %s: reproducers derive from the real corpus and must stay outside it", out, dir)
	}
	return nil
}

func fuzzMain(stdout, stderr io.Writer, fams []string, n int, seed uint64, out, corpusDir string,
	timeout time.Duration, budget int, libPath string) error {
	// Absolute paths, so that the att-decode commands in the
	// descriptions work from anywhere.
	corpusDir, err := filepath.Abs(corpusDir)
	if err != nil {
		return err
	}
	if out, err = filepath.Abs(out); err != nil {
		return err
	}
	c, err := loadCorpus(corpusDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := clearOut(out); err != nil {
		return err
	}
	log, err := os.Create(filepath.Join(out, "library.log"))
	if err != nil {
		return err
	}
	defer log.Close()
	lib, err := newWorkerLibrary(c.isaPaths, log, timeout)
	if err != nil {
		return err
	}
	defer lib.close()
	if v := lib.version(); v != "0.1" && !strings.HasPrefix(v, "0.1.") {
		fmt.Fprintf(stderr, "difffuzz: warning: library version %q: the native decoder's compatibility mode follows 0.1.6\n", v)
	}
	h := &harness{c: c, lib: lib, timeout: timeout, classes: map[string]*class{}}
	var stats []famStats
	for fi, fam := range fams {
		st, err := h.fuzz(fam, fi, n, seed, stderr)
		if err != nil {
			return err
		}
		stats = append(stats, st)
		fmt.Fprintf(stderr, "difffuzz: %s: %d inputs in %.1fs (%.0f inputs/s), %d divergent\n",
			fam, st.inputs+st.seeds, st.elapsed.Seconds(), float64(st.inputs+st.seeds)/st.elapsed.Seconds(), st.divergent)
	}
	classes := h.sorted()
	fmt.Fprintf(stderr, "difffuzz: minimizing %d classes\n", len(classes))
	minStart := time.Now()
	for i, cl := range classes {
		if err := h.minimize(cl, budget); err != nil {
			return err
		}
		if err := h.writeClass(out, i+1, cl, libPath); err != nil {
			return err
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "difffuzz -seed %d -n %d -arch %s; corpus %s; library %s (version %s)\n\n",
		seed, n, strings.Join(fams, ","), corpusDir, libPath, lib.version())
	h.summary(&b, stats, classes)
	fmt.Fprintf(&b, "\nminimizing took %.1fs\n", time.Since(minStart).Seconds())
	if lib.starts > 1 {
		fmt.Fprintf(&b, "the library worker was started %d times (crashes and hangs)\n", lib.starts)
	}
	if err := os.WriteFile(filepath.Join(out, "summary.txt"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	_, err = io.WriteString(stdout, b.String())
	return err
}
