package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/attkit/attkit/internal/cli"
	"github.com/attkit/attkit/internal/codeobj"
	"github.com/attkit/attkit/internal/publish"
	"github.com/attkit/attkit/internal/rcv"
)

type flags struct {
	cli.VersionFlag
	Dir             string   `short:"d" placeholder:"DIR" help:"Output directory: the viewer folder of a single run, or the directory that holds one ui_output_<name><run> folder per run (default: beside the traces)."`
	Lib             string   `placeholder:"LIB" help:"Path of librocprof-trace-decoder.so (first in the lookup)."`
	Formats         string   `default:"json,csv" placeholder:"FORMATS" help:"Comma-separated output formats: json (viewer files), csv (stats CSV); default json,csv."`
	BaseName        string   `name:"base-name" placeholder:"NAME" help:"Base of ui_output_<NAME><run> (default: the first input's folder name)."`
	NoDecodeMarkers bool     `name:"no-decode-markers" help:"Keep packed marker values and arrival times."`
	Counters        []string `sep:"none" placeholder:"NAME,..." help:"Perf counters the capture was made with (rocprofv3's --att-perfcounters order; NAME or NAME:MASK): they name the viewer's Counters series. Default: those rocprofv3 recorded in <pid>_config.json beside the traces (--output-config), else none."`
	Backend         string   `enum:"auto,native,rocm" default:"auto" help:"Decoder: auto (ROCm library if found, else native), native, rocm."`
	Compat          string   `enum:"newest,0.1.6" default:"newest" help:"Native decoder: records of the newest library (newest) or exactly those of AMD's 0.1.6 build that ROCm 7.x ships (0.1.6), as att-decode --compat."`
	Jobs            int      `short:"j" default:"-1" placeholder:"N" help:"Decode this many traces (and write this many runs) at once (default: number of cores)."`
	CodeObject      []string `name:"code-object" sep:"none" placeholder:"ID=PATH@ADDR" help:"Index code object PATH with id ID at load address ADDR, for captures without code-object load records (absolute PCs: use id 0); repeatable."`
	Source          string   `placeholder:"DIR" help:"Folder holding the sources the code objects' line tables name, for the viewer's source snapshots: relative paths are looked up there, and absolute ones not found as named by their trailing components; a symbolic link is followed only inside DIR. Snapshots copy regular files of at most 16 MiB (a link is never followed out of the capture or DIR), never more readable than the source; what is skipped is named in a warning."`
	Group           string   `placeholder:"PID_AGENT" help:"Of a capture holding several processes or agents, process only the traces and code objects named <PID_AGENT>_… (default: one output per process and agent)."`
	Force           bool     `help:"Replace outputs that hold an earlier result (folder and stats CSV together)."`
	AllowDuplicates bool     `name:"allow-duplicates" help:"Count a trace whose bytes are those of another input trace (a copy under another name) as often as it is given; the same file under two names (a link, a folder and a file in it) is always counted once."`
	Progress        bool     `help:"Show progress on stderr (default: when stderr is a terminal)."`
	AnyArch         bool     `name:"any-arch" help:"Decode traces of another architecture than the code objects (refused by default, exit 3)."`
	Lenient         bool     `help:"Skip a code.json's malformed rows and a PC's second row (their count on stderr) instead of failing."`
	Inputs          []string `arg:"" optional:"" name:"FILE" help:".att traces, code objects (.out, .co, .hsaco), a code.json, or directories holding them (searched recursively, as rocprofv3 writes <out>/<hostname>/…)."`
}

const description = `Decode AMD GPU thread traces (ATT) into ROCprof Compute Viewer folders and per-instruction statistics.`

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &cli.Env{Name: "att-tool", Stdin: stdin, Stdout: stdout, Stderr: stderr}
	var f flags
	if code, done := env.Parse(&f, description, args); done {
		return code
	}
	if code, ok := checkFlags(env, &f); !ok {
		return code
	}

	// SIGINT and SIGTERM cancel the work; what was written is removed and
	// the process ends with 128 + the signal's number.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigc)
	var mu sync.Mutex
	var got os.Signal
	go func() {
		select {
		case s := <-sigc:
			mu.Lock()
			got = s
			mu.Unlock()
			cancel()
		case <-ctx.Done():
		}
	}()
	err := tool(ctx, env, &f)
	mu.Lock()
	s := got
	mu.Unlock()
	if s != nil && err != nil {
		fmt.Fprintf(env.Stderr, "%s: interrupted: nothing written\n", env.Name)
		return publish.ExitStatus(s)
	}
	return env.Fail(err)
}

// usage prints a usage error as kong's are printed and returns 2.
func usage(env *cli.Env, format string, args ...any) int {
	fmt.Fprintf(env.Stderr, "%s: %s\n", env.Name, fmt.Sprintf(format, args...))
	fmt.Fprintf(env.Stderr, "Run '%s --help' for usage.\n", env.Name)
	return cli.ExitUsage
}

func checkFlags(env *cli.Env, f *flags) (int, bool) {
	if len(f.Inputs) == 0 && len(f.CodeObject) == 0 {
		return usage(env, "the following arguments are required: FILE"), false
	}
	if f.Jobs == -1 {
		f.Jobs = runtime.NumCPU()
	}
	if f.Jobs <= 0 {
		return usage(env, "-j takes a positive whole number, not %d", f.Jobs), false
	}
	if _, err := rcv.ParseCounters(f.Counters); err != nil {
		return usage(env, "--counters: %v", err), false
	}
	for _, a := range f.CodeObject {
		if _, err := codeobj.ParseInputArg(a); err != nil {
			return usage(env, "%v", err), false
		}
	}
	return 0, true
}

// parseFormats reads --formats as upstream does (python-layer §6.2):
// case and spaces ignored, unknown names listed sorted.
func parseFormats(s string) (json, csv bool, err error) {
	var unknown []string
	for _, p := range strings.Split(s, ",") {
		switch p = strings.ToLower(strings.TrimSpace(p)); p {
		case "":
		case "json":
			json = true
		case "csv":
			csv = true
		default:
			if !slices.Contains(unknown, p) {
				unknown = append(unknown, p)
			}
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return false, false, upstreamf("Unsupported output format(s): %s. Expected one or more of: csv, json", strings.Join(unknown, ", "))
	}
	if !json && !csv {
		return false, false, upstreamf("No output formats requested.")
	}
	return json, csv, nil
}

// found is what input discovery found, in discovery order, with absolute,
// symlink-resolved paths.
type found struct {
	env      *cli.Env
	files    []seenFile // every input file, for their identity
	traces   []string
	objects  []string
	codeJSON string
	placed   []codeobj.Input
}

// discover classifies the inputs (python-layer §6.4), except that
// directories are searched recursively: rocprofv3 writes
// <out>/<hostname>/<pid>_<agent>_…. Hidden entries and earlier outputs
// (ui_output_* folders) are skipped.
func discover(env *cli.Env, f *flags) (*found, error) {
	fd := found{env: env}
	for _, a := range f.Inputs {
		p, err := absInput(a)
		if err != nil {
			return nil, err
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			if !fd.add(p, st) {
				return nil, upstreamf("Unsupported input type: %s. Expected .att, code.json, or a code object (.out, .co, .hsaco).", p)
			}
			continue
		}
		err = filepath.WalkDir(p, func(q string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if q == p {
				return nil
			}
			name := d.Name()
			if strings.HasPrefix(name, ".") || d.IsDir() && strings.HasPrefix(name, "ui_output_") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				return nil
			}
			if st, err := os.Stat(q); err == nil && !st.IsDir() {
				fd.add(q, st)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	for _, a := range f.CodeObject {
		in, _ := codeobj.ParseInputArg(a) // checked by checkFlags
		p, err := absInput(in.Path)
		if err != nil {
			return nil, err
		}
		in.Path = p
		// PATH among the inputs (under any name) is not indexed twice.
		if st, err := os.Stat(p); err == nil {
			fd.objects = slices.DeleteFunc(fd.objects, func(o string) bool {
				ot, err := os.Stat(o)
				return err == nil && os.SameFile(st, ot)
			})
		}
		fd.placed = append(fd.placed, in)
	}
	if err := fd.sameContent(f.AllowDuplicates); err != nil {
		return nil, err
	}
	if len(fd.traces) == 0 && len(fd.objects) == 0 && len(fd.placed) == 0 && fd.codeJSON == "" {
		return nil, upstreamf("No .att files, code.json, or code object files were provided or discovered.")
	}
	return &fd, nil
}

// absInput expands ~, makes p absolute and resolves symbolic links.
func absInput(p string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = home + p[1:]
		}
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(abs); err != nil {
		return "", upstreamf("Input does not exist: %s", p)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return abs, nil
}

// A seenFile is an input file and its identity (device and inode).
type seenFile struct {
	path, group string
	st          os.FileInfo
}

// inputGroup is the kind of input p and the process and agent its name
// carries: one file under the names of two processes (hard links, as tests
// make captures) is an input of each.
func inputGroup(p string) string {
	if strings.HasSuffix(strings.ToLower(p), ".att") {
		return "trace " + groupKey(traceGroupRE, p)
	}
	return "object " + groupKey(objectGroupRE, p)
}

// add classifies the file p unless it is one already found under another
// name (given twice, a folder and a file in it, a symbolic or hard link):
// that is warned of and counted once. False for a name of no known kind.
func (fd *found) add(p string, st os.FileInfo) bool {
	g := inputGroup(p)
	for _, s := range fd.files {
		if s.group == g && os.SameFile(s.st, st) {
			if s.path == p {
				fd.env.Warnf("%s given twice: counted once", p)
			} else {
				fd.env.Warnf("%s and %s are the same file: counted once", s.path, p)
			}
			return true
		}
	}
	if !fd.classify(p) {
		return false
	}
	fd.files = append(fd.files, seenFile{p, g, st})
	return true
}

// sameContent finds traces of the same bytes under two names of one
// process and agent (a copy of a capture inside it, a copied trace): each
// is warned of and, unless allow, counted once. Only traces of equal size
// are read.
func (fd *found) sameContent(allow bool) error {
	type key struct {
		group string
		size  int64
	}
	sizes := make([]key, len(fd.traces))
	n := map[key]int{}
	for i, t := range fd.traces {
		st, err := os.Stat(t)
		if err != nil {
			return err
		}
		sizes[i] = key{groupKey(traceGroupRE, t), st.Size()}
		n[sizes[i]]++
	}
	drop := map[string]bool{}
	type sum struct {
		group string
		sum   [sha256.Size]byte
	}
	first := map[sum]string{}
	for i, t := range fd.traces {
		if n[sizes[i]] < 2 {
			continue
		}
		h, err := fileSum(t)
		if err != nil {
			return err
		}
		k := sum{sizes[i].group, h}
		o, ok := first[k]
		switch {
		case !ok:
			first[k] = t
		case allow:
			fd.env.Warnf("%s has the same content as %s: counted twice (--allow-duplicates)", t, o)
		default:
			fd.env.Warnf("%s has the same content as %s: counted once (--allow-duplicates counts both)", t, o)
			drop[t] = true
		}
	}
	fd.traces = slices.DeleteFunc(fd.traces, func(t string) bool { return drop[t] })
	return nil
}

func fileSum(path string) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	f, err := os.Open(path)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return sum, err
	}
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

// classify files p by its name; false for a name of no known kind.
func (fd *found) classify(p string) bool {
	lower := strings.ToLower(filepath.Base(p))
	switch {
	case strings.HasSuffix(lower, ".att"):
		fd.traces = append(fd.traces, p)
	case lower == "code.json":
		fd.codeJSON = p
	case strings.HasSuffix(lower, ".out"), strings.HasSuffix(lower, ".co"), strings.HasSuffix(lower, ".hsaco"):
		fd.objects = append(fd.objects, p)
	default:
		return false
	}
	return true
}

// An upstreamError is a message of att_tool.py, word for word
// (python-layer §6.4), capital letter and final period included.
type upstreamError struct{ msg string }

func (e *upstreamError) Error() string { return e.msg }

func upstreamf(format string, args ...any) error {
	return &upstreamError{msg: fmt.Sprintf(format, args...)}
}
