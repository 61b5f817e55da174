package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"

	"github.com/attkit/attkit/internal/cli"
	"github.com/attkit/attkit/internal/codeobj"
	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/publish"
	"github.com/attkit/attkit/internal/rcv"
	"github.com/attkit/attkit/internal/sqtt"
	"github.com/attkit/attkit/internal/waveselect"
)

type flags struct {
	cli.VersionFlag
	selectFlags
	Dir             string      `short:"d" placeholder:"DIR" help:"Output directory: the viewer folder of a single run, or the directory that holds one ui_output_<name><run> folder per run (default: beside the traces)."`
	Lib             string      `placeholder:"LIB" help:"Path of librocprof-trace-decoder.so (first in the lookup)."`
	Formats         string      `default:"json,csv" placeholder:"FORMATS" help:"Comma-separated output formats: json (viewer files), csv (stats CSV), html (att-report's page, report_<folder>.html beside the folder); default json,csv."`
	BaseName        string      `name:"base-name" placeholder:"NAME" help:"Base of ui_output_<NAME><run> (default: the first input's folder name)."`
	NoDecodeMarkers bool        `name:"no-decode-markers" help:"Keep packed marker values and arrival times."`
	Counters        []string    `sep:"none" placeholder:"NAME,..." help:"Perf counters the capture was made with (rocprofv3's --att-perfcounters order; NAME or NAME:MASK): they name the viewer's Counters series. Default: those rocprofv3 recorded in <pid>_config.json beside the traces (--output-config), else none."`
	Backend         string      `enum:"auto,native,rocm" default:"auto" help:"Decoder: auto (ROCm library if found, else native), native, rocm."`
	Compat          sqtt.Compat `enum:"newest,0.1.6" default:"newest" help:"Native decoder: records of the newest library (newest) or exactly those of AMD's 0.1.6 build that ROCm 7.x ships (0.1.6), as att-decode --compat."`
	Jobs            int         `short:"j" default:"-1" placeholder:"N" help:"Decode this many traces (and write this many runs) at once (default: number of cores); a trace decodes on two cores (decoder and output side by side, the same output) while the decodes and writers leave a core spare."`
	CodeObject      []string    `name:"code-object" sep:"none" placeholder:"ID=PATH@ADDR" help:"Index code object PATH with id ID at load address ADDR, for captures without code-object load records (absolute PCs: use id 0); repeatable."`
	Source          string      `placeholder:"DIR" help:"Folder holding the sources the code objects' line tables name, for the viewer's source snapshots: relative paths are looked up there, and absolute ones not found as named by their trailing components; a symbolic link is followed only inside DIR. Snapshots copy regular files of at most 16 MiB (a link is never followed out of the capture or DIR), never more readable than the source; what is skipped is named in a warning."`
	Group           string      `placeholder:"PID_AGENT" help:"Of a capture holding several processes or agents, process only the traces and code objects named <PID_AGENT>_… (default: one output per process and agent)."`
	KeepGoing       bool        `name:"keep-going" help:"When a trace fails to decode (bad data, not a trace, another GPU's), report it, leave it out of its run and still write the other traces and runs; the exit status is then 1 and a summary names what was skipped."`
	Force           bool        `help:"Replace outputs that hold an earlier result (folder and stats CSV together)."`
	AllowDuplicates bool        `name:"allow-duplicates" help:"Count a trace whose bytes are those of another input trace (a copy under another name) as often as it is given; the same file under two names (a link, a folder and a file in it) is always counted once."`
	Progress        bool        `help:"Show progress on stderr (default: when stderr is a terminal)."`
	AnyArch         bool        `name:"any-arch" help:"Decode traces of another architecture than the code objects (refused by default, exit 3)."`
	Lenient         bool        `help:"Skip a code.json's malformed rows and a PC's second row (their count on stderr) instead of failing."`
	Inputs          []string    `arg:"" optional:"" name:"FILE" help:".att traces, code objects (.out, .co, .hsaco), a code.json, or directories holding them (searched recursively, as rocprofv3 writes <out>/<hostname>/…)."`
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

	// SIGINT, SIGTERM, SIGHUP and SIGQUIT cancel the work (publish.Catch);
	// what was written is removed and the process ends with 128 + the
	// signal's number.
	ctx, intr := publish.Catch(env.Name, env.Stderr)
	defer intr.Stop()
	err := tool(ctx, env, &f)
	if code, ok := intr.Status(); ok {
		return code
	}
	return env.Fail(err)
}

// usage prints a usage error as kong's are printed and returns 2.
func usage(env *cli.Env, format string, args ...any) int {
	fmt.Fprintf(env.Stderr, "%s: %s\n", env.Name, fmt.Sprintf(format, args...))
	fmt.Fprintf(env.Stderr, "Run '%s --help' for usage.\n", env.Name)
	return exitcode.Usage
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
	if _, err := waveselect.New(nil, f.selectOptions()); err != nil {
		return usage(env, "%v", err), false
	}
	return 0, true
}

// parseFormats reads --formats as upstream does (python-layer §6.2):
// case and spaces ignored, unknown names listed sorted.
func parseFormats(s string) (json, csv, html bool, err error) {
	var unknown []string
	for _, p := range strings.Split(s, ",") {
		switch p = strings.ToLower(strings.TrimSpace(p)); p {
		case "":
		case "json":
			json = true
		case "csv":
			csv = true
		case "html":
			html = true
		default:
			if !slices.Contains(unknown, p) {
				unknown = append(unknown, p)
			}
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return false, false, false, upstreamf("Unsupported output format(s): %s. Expected one or more of: csv, html, json", strings.Join(unknown, ", "))
	}
	if !json && !csv && !html {
		return false, false, false, upstreamf("No output formats requested.")
	}
	return json, csv, html, nil
}

// An upstreamError is a message of att_tool.py, word for word
// (python-layer §6.4), capital letter and final period included.
type upstreamError struct{ msg string }

func (e *upstreamError) Error() string { return e.msg }

func upstreamf(format string, args ...any) error {
	return &upstreamError{msg: fmt.Sprintf(format, args...)}
}
