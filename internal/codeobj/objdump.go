package codeobj

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// A Tool is an llvm-objdump executable and its version line.
type Tool struct {
	Path    string
	Version string // "Debian LLVM version 19.1.7", "" when unknown
}

// String names the tool as the index header does: "path (version)".
func (t Tool) String() string {
	if t.Version == "" {
		return t.Path
	}
	return t.Path + " (" + t.Version + ")"
}

// An Objdump finds and runs llvm-objdump. The zero value searches the
// process environment; it is safe for concurrent use.
type Objdump struct {
	// Explicit, when set, is the only tool tried (--objdump).
	Explicit string
	// Getenv and LookPath default to os.Getenv and exec.LookPath.
	Getenv   func(string) string
	LookPath func(string) (string, error)
	// Timeout bounds one disassembly (default 5 minutes).
	Timeout time.Duration

	mu       sync.Mutex
	byTarget map[string]Tool   // the tool that worked for a target
	versions map[string]string // version line per tool path
	// Time is the wall time spent running llvm-objdump processes.
	Time time.Duration
}

// pathNames are the names looked up on PATH, in order, after the ROCm
// roots: LLVM 19 first (what attkit is tested with, so indexes stay
// byte-identical wherever it knows the target), older versions that may
// still know the target, newer versions (LLVM 19 aborts on gfx950, MI350:
// "Disassembly not yet supported for subtarget"; Debian's llvm-22 knows
// it), then the unversioned name (Debian's default LLVM 14 cannot open
// gfx942 objects and is skipped when it fails).
var pathNames = []string{"llvm-objdump-19", "llvm-objdump-18", "llvm-objdump-17",
	"llvm-objdump-20", "llvm-objdump-21", "llvm-objdump-22", "llvm-objdump"}

func (o *Objdump) getenv(k string) string {
	if o.Getenv != nil {
		return o.Getenv(k)
	}
	return os.Getenv(k)
}

func (o *Objdump) lookPath(name string) (string, error) {
	if o.LookPath != nil {
		return o.LookPath(name)
	}
	return exec.LookPath(name)
}

func (o *Objdump) expand(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home := o.getenv("HOME"); home != "" {
			return home + p[1:]
		}
	}
	return p
}

// Candidates returns the llvm-objdump executables to try, in order and
// without duplicates: --objdump alone if set; else $LLVM_OBJDUMP alone if
// set; else the ROCm roots ($ROCM_HOME, $ROCM_PATH, TheRock Python package
// roots + /lib, /opt/rocm; each root's llvm/bin then bin), then the PATH
// names. Only existing regular files are returned.
func (o *Objdump) Candidates() []string {
	if o.Explicit != "" {
		return []string{o.Explicit}
	}
	if p := o.getenv("LLVM_OBJDUMP"); p != "" {
		return []string{o.expand(p)}
	}
	var roots []string
	for _, k := range []string{"ROCM_HOME", "ROCM_PATH"} {
		if v := o.getenv(k); v != "" {
			roots = append(roots, o.expand(v))
		}
	}
	for _, r := range o.theRockRoots() {
		roots = append(roots, filepath.Join(r, "lib"))
	}
	roots = append(roots, "/opt/rocm")
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if p == "" || seen[p] {
			return
		}
		seen[p] = true
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			out = append(out, p)
		}
	}
	for _, r := range roots {
		add(filepath.Join(r, "llvm", "bin", "llvm-objdump"))
		add(filepath.Join(r, "bin", "llvm-objdump"))
	}
	for _, n := range pathNames {
		if p, err := o.lookPath(n); err == nil {
			add(p)
		}
	}
	return out
}

// theRockRoots approximates the TheRock Python package roots (python-layer
// §7) without running Python: the directories _rocm_sdk_core,
// _rocm_sdk_devel and _rocm_profiler in the usual site-packages places.
func (o *Objdump) theRockRoots() []string {
	var sites []string
	for _, k := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if v := o.getenv(k); v != "" {
			m, _ := filepath.Glob(filepath.Join(v, "lib", "python3*", "site-packages"))
			sites = append(sites, m...)
		}
	}
	if home := o.getenv("HOME"); home != "" {
		m, _ := filepath.Glob(filepath.Join(home, ".local", "lib", "python3*", "site-packages"))
		sites = append(sites, m...)
	}
	for _, g := range []string{"/usr/local/lib/python3*/dist-packages", "/usr/local/lib/python3*/site-packages",
		"/usr/lib/python3/dist-packages"} {
		m, _ := filepath.Glob(g)
		sites = append(sites, m...)
	}
	var roots []string
	seen := map[string]bool{}
	for _, s := range sites {
		for _, p := range []string{"_rocm_sdk_core", "_rocm_sdk_devel", "_rocm_profiler"} {
			d := filepath.Join(s, p)
			if st, err := os.Stat(d); err == nil && st.IsDir() && !seen[d] {
				seen[d] = true
				roots = append(roots, d)
			}
		}
	}
	return roots
}

// installHint ends the errors of a failed search.
const installHint = "install llvm-19 (and llvm-22 for gfx950) or pass --objdump"

// ErrNoObjdump is returned (wrapped) when no llvm-objdump was found.
var ErrNoObjdump = errors.New("could not locate llvm-objdump")

// disassemble runs llvm-objdump on the code object at path (absolute) of
// the given target, or on data when it is not nil (llvm-objdump then reads
// it from its standard input, "-", and path only names it in errors), and
// parses its output. Without an explicit tool it tries the candidates in
// order, skipping those that fail (a version that does not know the
// target: "can't find target", a crash) or, when hasCode says the object
// has executable bytes, print no instruction; it remembers the tool that
// worked for the target.
func (o *Objdump) disassemble(ctx context.Context, path string, data []byte, target string, hasCode bool) ([]Inst, Tool, error) {
	disasm := func(tool string) ([]Inst, error) {
		out, err := o.run(ctx, tool, path, data)
		if err != nil {
			return nil, err
		}
		insts, err := ParseObjdump(bytes.NewReader(out))
		if err == nil && hasCode && len(insts) == 0 {
			err = fmt.Errorf("%s printed no instructions for %s", tool, path)
		}
		return insts, err
	}
	o.mu.Lock()
	t, known := o.byTarget[target]
	o.mu.Unlock()
	if known {
		if insts, err := disasm(t.Path); err == nil {
			return insts, t, nil
		}
	}
	cands := o.Candidates()
	if len(cands) == 0 {
		if o.Explicit != "" {
			return nil, Tool{}, fmt.Errorf("%w: %s", ErrNoObjdump, o.Explicit)
		}
		return nil, Tool{}, fmt.Errorf("%w (tried $LLVM_OBJDUMP, $ROCM_HOME, $ROCM_PATH, TheRock, /opt/rocm and %s on PATH); %s",
			ErrNoObjdump, strings.Join(pathNames, ", "), installHint)
	}
	var fails []string
	for _, c := range cands {
		insts, err := disasm(c)
		if err != nil {
			if ctx.Err() != nil {
				return nil, Tool{}, ctx.Err()
			}
			if len(cands) == 1 {
				return nil, Tool{}, err
			}
			fails = append(fails, err.Error())
			continue
		}
		t := Tool{Path: c, Version: o.version(ctx, c)}
		o.mu.Lock()
		if o.byTarget == nil {
			o.byTarget = map[string]Tool{}
		}
		o.byTarget[target] = t
		o.mu.Unlock()
		return insts, t, nil
	}
	what := target
	if what == "" {
		what = "its target"
	}
	return nil, Tool{}, fmt.Errorf("no llvm-objdump could disassemble %s (%s); %s:\n  %s",
		path, what, installHint, strings.Join(fails, "\n  "))
}

// run runs one disassembly of the file at path, or of data (see
// disassemble), and returns its standard output.
func (o *Objdump) run(ctx context.Context, tool, path string, data []byte) ([]byte, error) {
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	arg := path
	if data != nil {
		arg = "-"
	}
	cmd := exec.CommandContext(ctx, tool, "-d", "--no-show-raw-insn", arg)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if data != nil {
		cmd.Stdin = bytes.NewReader(data)
	}
	start := time.Now()
	err := cmd.Run()
	o.mu.Lock()
	o.Time += time.Since(start)
	o.mu.Unlock()
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return nil, fmt.Errorf("running %s: %w", tool, err)
		}
		detail := strings.TrimSpace(stderr.String())
		if detail == "" {
			detail = strings.TrimSpace(stdout.String())
		}
		if i := strings.IndexByte(detail, '\n'); i >= 0 {
			detail = detail[:i] // a crash prints a long stack dump
		}
		msg := fmt.Sprintf("%s failed for %s with exit code %d", tool, path, ee.ExitCode())
		if ee.ExitCode() < 0 {
			msg = fmt.Sprintf("%s failed for %s (%v)", tool, path, ee.ProcessState)
		}
		if detail != "" {
			msg += ": " + detail
		}
		return nil, errors.New(msg)
	}
	return stdout.Bytes(), nil
}

// version returns the "LLVM version" line of tool --version.
func (o *Objdump) version(ctx context.Context, tool string) string {
	o.mu.Lock()
	v, ok := o.versions[tool]
	o.mu.Unlock()
	if ok {
		return v
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	start := time.Now()
	out, _ := exec.CommandContext(ctx, tool, "--version").Output()
	d := time.Since(start)
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "LLVM version") || strings.Contains(l, "version ") && v == "" {
			v = strings.TrimSpace(l)
			if strings.Contains(l, "LLVM version") {
				break
			}
		}
	}
	o.mu.Lock()
	o.Time += d
	if o.versions == nil {
		o.versions = map[string]string{}
	}
	o.versions[tool] = v
	o.mu.Unlock()
	return v
}
