package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/attkit/attkit/internal/arch"
	"github.com/attkit/attkit/internal/capture"
	"github.com/attkit/attkit/internal/cli"
	"github.com/attkit/attkit/internal/codeobj"
	"github.com/attkit/attkit/internal/driver"
	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/tracename"
	"github.com/attkit/attkit/internal/wire"
)

type flags struct {
	cli.VersionFlag
	Format     string   `enum:"text,json" default:"text" help:"Output: text (a short table per capture) or json (JSON lines: one object per trace, then one per capture)."`
	Backend    string   `enum:"auto,native,rocm" default:"auto" help:"Decoder: auto (ROCm library if found, else native), native, rocm."`
	Lib        string   `placeholder:"LIB" help:"Path of librocprof-trace-decoder.so (first in the lookup)."`
	CodeObject []string `name:"code-object" sep:"none" placeholder:"ID=PATH@ADDR" help:"A code object loaded at ADDR, for a capture made without rocprofv3 (absolute PCs), as att-tool takes it (repeatable)."`
	Group      string   `placeholder:"PID_AGENT" help:"Report only the traces of this <pid>_<agent>."`
	BufferSize string   `name:"buffer-size" placeholder:"SIZE" help:"The capture's --att-buffer-size (B, KB, MB, GB; default: rocprofv3's <pid>_config.json beside the traces, else rocprofv3's default 256 MB), against which a trace with open waves is called full."`
	Lenient    bool     `help:"Skip a code.json's malformed rows and a PC's second row (their count on stderr) instead of failing."`
	Inputs     []string `arg:"" name:"FILE" help:".att traces, code objects (.out, .co, .hsaco), a code.json, or directories holding them (searched recursively)."`
}

const description = `Tell what a thread-trace capture holds: its traces and code objects, what each trace carries, and why a trace may be empty or partial, with the rocprofv3 option to try.

Exit status: 0 some trace holds an instruction to analyse; 1 none does (no instruction in any trace, or only with code objects of another architecture), or an error; 2 bad usage; 3 an input is not a trace (reported with the others); 4 the decoder library is missing (--backend rocm); 130 or 143 interrupted (128 + SIGINT or SIGTERM).`

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &cli.Env{Name: "att-info", Stdin: stdin, Stdout: stdout, Stderr: stderr}
	var f flags
	if code, done := env.Parse(&f, description, args); done {
		return code
	}
	return env.Fail(info(context.Background(), env, &f))
}

func info(ctx context.Context, env *cli.Env, f *flags) error {
	for _, a := range f.CodeObject {
		if _, err := codeobj.ParseInputArg(a); err != nil {
			return &exitcode.Error{Code: exitcode.Usage, Err: err}
		}
	}
	var bufSize int64
	if f.BufferSize != "" {
		n, err := parseSize(f.BufferSize)
		if err != nil {
			return exitcode.Errorf(exitcode.Usage, "--buffer-size: %v", err)
		}
		bufSize = n
	}
	fd, err := capture.Discover(capture.Options{Inputs: f.Inputs, CodeObjects: f.CodeObject, Warn: env.Warnf})
	if err != nil {
		return err
	}
	if len(fd.Traces) == 0 {
		return exitcode.Errorf(exitcode.Failed, "no .att trace among the inputs: nothing to analyse")
	}
	groups, err := capture.GroupInputs(fd, f.Group)
	if err != nil {
		return err
	}
	warns := map[string][]string{}
	drv, err := driver.New(driver.Options{
		Backend: f.Backend, Lib: f.Lib,
		Producer: "att-info " + cli.Version(), AnyArch: true,
		Warn: func(trace, text string) {
			if trace == "" {
				env.Warnf("%s", text)
				return
			}
			warns[trace] = append(warns[trace], text)
		},
	})
	if err != nil {
		return err
	}
	defer drv.Close()

	out := bufio.NewWriter(env.Stdout)
	defer out.Flush()
	var total summary
	for _, g := range groups {
		c, err := loadCode(ctx, env, f, g, fd)
		if err != nil {
			return err
		}
		cfg := readConfig(g)
		if bufSize > 0 {
			cfg.bufferSize, cfg.bufferFrom = bufSize, "--buffer-size"
		}
		var traces []*traceInfo
		order := slices.Clone(g.Traces)
		slices.SortStableFunc(order, func(a, b tracename.Trace) int {
			if a.Run != b.Run {
				return a.Run - b.Run
			}
			return a.SE - b.SE
		})
		for _, t := range order {
			ti, err := decodeTrace(ctx, drv, c, t.Path, t.SE, t.Run)
			if err != nil {
				return err
			}
			ti.Warnings = append(ti.Warnings, warns[t.Path]...)
			if ti.Warnings == nil {
				ti.Warnings = []string{}
			}
			traces = append(traces, ti)
			if f.Format == "json" {
				if err := writeJSON(out, ti); err != nil {
					return err
				}
			}
		}
		v := verdict(g, c, cfg, traces)
		total.add(traces, v)
		if f.Format == "json" {
			err = writeJSON(out, v)
		} else {
			err = writeText(out, v, traces)
		}
		if err != nil {
			return err
		}
	}
	if err := out.Flush(); err != nil {
		return err
	}
	switch {
	case total.notTrace > 0:
		return exitcode.Silent{Code: exitcode.Format}
	case total.analysable == 0:
		return exitcode.Silent{Code: exitcode.Failed}
	}
	return nil
}

// summary decides the exit status over every capture.
type summary struct {
	notTrace   int
	analysable int
}

func (s *summary) add(ts []*traceInfo, v *captureInfo) {
	for _, t := range ts {
		if t.notTrace {
			s.notTrace++
		}
	}
	if v.Analysable {
		s.analysable++
	}
}

// code is a group's index, where it came from, and what it says.
type code struct {
	ix      *wire.Index
	drv     *driver.Code
	source  string   // "code objects", "code.json" or "none"
	targets []string // the code objects' architectures
	kernels *kernelTable
}

// loadCode builds the index of a group's code objects as att-tool does, or
// reads the capture's code.json when it has none.
func loadCode(ctx context.Context, env *cli.Env, f *flags, g *capture.Group, fd *capture.Found) (*code, error) {
	if len(g.Objects) == 0 && len(fd.Placed) == 0 {
		if fd.CodeJSON == "" {
			return &code{drv: driver.NewCode(nil), source: "none", kernels: newKernelTable(nil)}, nil
		}
		ix, err := env.ReadIndex(fd.CodeJSON, f.Lenient)
		if err != nil {
			return nil, err
		}
		return &code{ix: ix, drv: driver.NewIndexCode(ix, fd.CodeJSON), source: "code.json",
			targets: arch.IndexTargets(ix, filepath.Dir(fd.CodeJSON)), kernels: newKernelTable(ix)}, nil
	}
	var inputs []codeobj.Input
	if len(g.Objects) > 0 {
		in, err := codeobj.InferIDs(g.Objects)
		if err != nil {
			return nil, &exitcode.Error{Code: exitcode.Usage, Err: err}
		}
		inputs = in
	}
	inputs = append(inputs, fd.Placed...)
	if err := codeobj.CheckIDs(inputs); err != nil {
		return nil, &exitcode.Error{Code: exitcode.Usage, Err: err}
	}
	inputs, err := codeobj.Normalize(inputs)
	if err != nil {
		return nil, err
	}
	ix, err := codeobj.Build(ctx, inputs, codeobj.Options{Objdump: &codeobj.Objdump{}, Producer: "att-info " + cli.Version()})
	if err != nil {
		return nil, err
	}
	return &code{ix: ix, drv: driver.NewCode(ix), source: "code objects", targets: arch.IndexTargets(ix, ""),
		kernels: newKernelTable(ix)}, nil
}

// decodeTrace decodes one trace into its traceInfo. A trace that is not
// one (exit 3) or fails to decode is reported in the info, not as an
// error; an interrupt or a missing library is an error.
func decodeTrace(ctx context.Context, drv *driver.Driver, c *code, path string, se, runN int) (*traceInfo, error) {
	ti := newTraceInfo(path, se, runN, c)
	in, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	if st, err := in.Stat(); err == nil {
		ti.Bytes = st.Size()
	}
	res, err := drv.Decode(ctx, driver.Trace{Name: path, Header: wire.Trace{Path: path, SE: se, Run: runN},
		Input: in, Code: c.drv, Target: arch.CaptureTarget(path)}, ti)
	ti.ending = res.Ending
	switch code := exitcode.Of(err); {
	case err == nil:
	case errors.Is(err, context.Canceled), code == exitcode.NoLibrary:
		return nil, err
	default:
		ti.notTrace = code == exitcode.Format
		msg := err.Error()
		msg = strings.TrimPrefix(msg, path+": ")
		ti.Error = msg
	}
	ti.finish()
	return ti, nil
}

func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// parseSize reads 1024-based sizes: a number with an optional B, KB, MB or
// GB (K, M, G) suffix, or a 0x hexadecimal byte count as rocprofv3 takes.
func parseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	if strings.HasPrefix(t, "0X") {
		n, err := strconv.ParseInt(t[2:], 16, 64)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("%q is not a size", s)
		}
		return n, nil
	}
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.m
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a size (a number of bytes with B, KB, MB or GB)", s)
	}
	return n * mult, nil
}

// config is what rocprofv3's <pid>_config.json (--output-config) says of
// the capture's thread trace parameters.
type config struct {
	bufferSize int64 // bytes, 0 unknown
	bufferFrom string
	targetCU   *int64
	seMask     *int64
}

// readConfig reads <pid>_config.json beside the group's traces, when
// rocprofv3 wrote one: {"rocprofiler-sdk-tool": [{"metadata": {"config":
// {"att_param_buffer_size": …, "att_param_target_cu": …,
// "att_param_shader_engine_mask": …}}}]}.
func readConfig(g *capture.Group) config {
	var c config
	if len(g.Traces) == 0 || g.Key == "" {
		return c
	}
	pid, _, _ := strings.Cut(g.Key, "_")
	path := filepath.Join(filepath.Dir(g.Traces[0].Path), pid+"_config.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return c
	}
	var doc struct {
		Tool []struct {
			Metadata struct {
				Config map[string]json.RawMessage `json:"config"`
			} `json:"metadata"`
		} `json:"rocprofiler-sdk-tool"`
	}
	if json.Unmarshal(data, &doc) != nil || len(doc.Tool) == 0 {
		return c
	}
	cfg := doc.Tool[0].Metadata.Config
	num := func(k string) *int64 {
		raw, ok := cfg[k]
		if !ok {
			return nil
		}
		var n int64
		if json.Unmarshal(raw, &n) == nil {
			return &n
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			if v, err := strconv.ParseInt(s, 0, 64); err == nil {
				return &v
			}
		}
		return nil
	}
	if n := num("att_param_buffer_size"); n != nil && *n > 0 {
		c.bufferSize, c.bufferFrom = *n, filepath.Base(path)
	}
	c.targetCU = num("att_param_target_cu")
	c.seMask = num("att_param_shader_engine_mask")
	return c
}

// sortedInts returns the keys of a set, sorted.
func sortedInts(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
