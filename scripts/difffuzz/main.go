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
//	  scripts/difffuzz/run [-n 20000] [-from 0] [-seed 1] [-arch gfx9|rdna|all] [-out /tmp/difffuzz] [-corpus ../shared/real] [-only divergent.txt]
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
// classes and throughput; divergent.txt lists every divergent input
// ("family index difference"). -out must be outside the repository:
// reproducers are derived from the corpus, which must not be committed.
//
// Rechecking. Since an input depends only on -seed, the family and its
// index, -from splits a run into parts, and -only divergent.txt decodes
// again exactly the inputs a run found divergent (after a fix, none should
// be left).
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
		from    = fs.Int("from", 0, "index of the first mutated input (inputs depend only on -seed, the family and the index, so runs can be split)")
		onlyF   = fs.String("only", "", "decode only the inputs listed in `FILE` (lines \"family index ...\", as divergent.txt writes them), to recheck a run's divergent inputs after a fix")
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
	var only map[string][]int
	if *onlyF != "" {
		var err error
		if only, err = readOnly(*onlyF); err != nil {
			fmt.Fprintf(stderr, "difffuzz: -only: %v\n", err)
			return 2
		}
	}
	if err := fuzzMain(stdout, stderr, fams, *n, *from, only, *seed, *out, *corpusF, *timeout, *budget, libPath); err != nil {
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

// readOnly reads the input indices of -only per family.
func readOnly(path string) (map[string][]int, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	only := map[string][]int{}
	for i, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		var k int
		if len(f) < 2 || (f[0] != "gfx9" && f[0] != "rdna") {
			return nil, fmt.Errorf("%s:%d: want \"family index ...\"", path, i+1)
		}
		if _, err := fmt.Sscan(f[1], &k); err != nil || k < 0 {
			return nil, fmt.Errorf("%s:%d: bad input index %q", path, i+1, f[1])
		}
		only[f[0]] = append(only[f[0]], k)
	}
	return only, nil
}

func fuzzMain(stdout, stderr io.Writer, fams []string, n, from int, only map[string][]int, seed uint64, out, corpusDir string,
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
		var idx []int
		if only != nil {
			idx = append([]int{}, only[fam]...) // not nil: only these
		}
		st, err := h.fuzz(fam, fi, n, from, idx, seed, stderr)
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
	sel := fmt.Sprintf("-n %d -from %d", n, from)
	if only != nil {
		sel = "-only (listed inputs)"
	}
	fmt.Fprintf(&b, "difffuzz -seed %d %s -arch %s; corpus %s; library %s (version %s)\n\n",
		seed, sel, strings.Join(fams, ","), corpusDir, libPath, lib.version())
	h.summary(&b, stats, classes)
	fmt.Fprintf(&b, "\nminimizing took %.1fs\n", time.Since(minStart).Seconds())
	if lib.starts > 1 {
		fmt.Fprintf(&b, "the library worker was started %d times (crashes and hangs)\n", lib.starts)
	}
	div := strings.Join(h.divergent, "\n")
	if div != "" {
		div += "\n"
	}
	if err := os.WriteFile(filepath.Join(out, "divergent.txt"), []byte(div), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "summary.txt"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	_, err = io.WriteString(stdout, b.String())
	return err
}
