package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/attkit/attkit/internal/arch"
	"github.com/attkit/attkit/internal/capture"
	"github.com/attkit/attkit/internal/sqtt"
	"github.com/attkit/attkit/internal/waveselect"
	"github.com/attkit/attkit/internal/wire"
)

// traceInfo is what one trace holds: its JSON line, and what the capture's
// verdict needs. It is the decode driver's sink.
type traceInfo struct {
	Type             string   `json:"type"`
	Path             string   `json:"path"`
	SE               int      `json:"se"`
	Run              int      `json:"run"`
	Arch             string   `json:"arch"`
	Bytes            int64    `json:"bytes"`
	InstructionTrace bool     `json:"instruction_trace"`
	Waves            int64    `json:"waves"`
	Instructions     int64    `json:"instructions"`
	IncompleteWaves  int64    `json:"incomplete_waves"`
	Cut              bool     `json:"cut"`
	EndsInToken      bool     `json:"ends_in_token"`
	Kernels          []string `json:"kernels"`
	Dispatches       int64    `json:"dispatches"`
	FirstCycle       *int64   `json:"first_cycle"`
	LastCycle        *int64   `json:"last_cycle"`
	DataLost         bool     `json:"data_lost"`
	Warnings         []string `json:"warnings"`
	Error            string   `json:"error,omitempty"`

	gfxip        int
	notTrace     bool
	ending       sqtt.Ending
	reported     int64 // the decoder's wave_incomplete reports
	otherSIMD    int64
	cus          map[int]bool
	outside      int64 // instructions at PCs outside every index range
	wavesOutside int64
	kernelSet    map[string]bool
	kernels      *kernelTable
	first, last  int64
	timed        bool
}

func newTraceInfo(path string, se, run int, c *code) *traceInfo {
	return &traceInfo{Type: "trace", Path: path, SE: se, Run: run, Kernels: []string{},
		cus: map[int]bool{}, kernelSet: map[string]bool{}, kernels: c.kernels}
}

// Header implements driver.Sink.
func (t *traceInfo) Header(h *wire.Header) error {
	if h.Trace.GFXIP != 0 {
		t.gfxip = h.Trace.GFXIP
	}
	return nil
}

func (t *traceInfo) time(v int64) {
	if !t.timed {
		t.first, t.last, t.timed = v, v, true
		return
	}
	t.first, t.last = min(t.first, v), max(t.last, v)
}

// Batch implements driver.Sink.
func (t *traceInfo) Batch(b *wire.Batch) error {
	switch b.Type {
	case wire.TypeGFXIP:
		t.gfxip = int(b.GFXIP)
	case wire.TypeWave:
		for i := range b.Waves {
			w := &b.Waves[i]
			t.Waves++
			t.Instructions += int64(len(w.Instructions))
			t.cus[int(w.CU)] = true
			t.time(w.BeginTime)
			t.time(w.EndTime)
			if len(w.Instructions) == 0 {
				continue
			}
			// An instruction the decoder could not place (PC 0) or placed
			// outside every index range has no code; a wave whose first
			// instruction has none started in code the index lacks (a cut
			// wave's last instruction is unplaced too).
			for j := range w.Instructions {
				if !t.kernels.inside(w.Instructions[j].PC) {
					t.outside++
				}
			}
			if !t.kernels.inside(w.Instructions[0].PC) {
				t.wavesOutside++
			}
			t.kernelSet[t.kernels.name(w.Instructions[0].PC)] = true
		}
	case wire.TypeInfo:
		for _, v := range b.Info {
			switch v {
			case wire.InfoDataLost:
				t.DataLost = true
			case wire.InfoWaveIncomplete:
				t.reported++
			}
		}
	case wire.TypeDispatch:
		for i := range b.Dispatches {
			d := &b.Dispatches[i]
			t.Dispatches++
			t.time(d.Time)
			t.kernelSet[t.kernels.name(d.EntryPoint)] = true
		}
	case wire.TypeOccupancy:
		for i := range b.Occupancy {
			t.time(int64(b.Occupancy[i].Time))
		}
	case wire.TypeEvent:
		for i := range b.Events {
			t.time(b.Events[i].Time)
		}
	case wire.TypePerfEvent:
		for i := range b.PerfEvents {
			t.time(b.PerfEvents[i].Time)
		}
	case wire.TypeShaderData:
		for i := range b.ShaderData {
			t.time(b.ShaderData[i].Time)
		}
	case wire.TypeInstOtherSIMD:
		t.otherSIMD += int64(len(b.OtherSIMD))
	}
	return nil
}

// finish fills the derived members once the trace is decoded.
func (t *traceInfo) finish() {
	if t.gfxip != 0 {
		t.Arch = "gfx" + strconv.Itoa(t.gfxip)
	}
	// Only a shader engine whose target CU ran waves carries instruction
	// tokens: the others give occupancy, events and dispatches only.
	t.InstructionTrace = t.Instructions > 0 || t.otherSIMD > 0
	// Waves still running at the end (sqtt.Ending, from the occupancy
	// records of every CU), or those the decoder reported incomplete.
	t.IncompleteWaves = max(int64(t.ending.OpenWaves), t.reported)
	t.EndsInToken = t.ending.InToken
	t.Cut = t.ending.Cut() || t.IncompleteWaves > 0
	for k := range t.kernelSet {
		t.Kernels = append(t.Kernels, k)
	}
	slices.Sort(t.Kernels)
	if t.timed {
		f, l := t.first, t.last
		t.FirstCycle, t.LastCycle = &f, &l
	}
}

// kernelTable names the kernel of a PC by the index's kernel ranges (those
// --kernel selects by); a PC outside every range gets python-layer §5.4's
// default name.
type kernelTable struct {
	k     *waveselect.Kernels
	empty bool
}

func newKernelTable(ix *wire.Index) *kernelTable {
	return &kernelTable{k: waveselect.NewKernels(ix), empty: ix == nil}
}

func (k *kernelTable) inside(pc wire.PC) bool {
	if k.empty {
		return false
	}
	_, ok := k.k.Lookup(pc)
	return ok
}

func (k *kernelTable) name(pc wire.PC) string {
	if n, ok := k.k.Lookup(pc); ok {
		return n
	}
	return waveselect.DefaultName(pc)
}

// captureInfo is the verdict on one capture (one <pid>_<agent> group).
type captureInfo struct {
	Type          string        `json:"type"`
	Group         string        `json:"group"`
	Dir           string        `json:"dir"`
	Traces        int           `json:"traces"`
	ShaderEngines seVerdict     `json:"shader_engines"`
	Buffer        bufferVerdict `json:"buffer"`
	CodeObjects   codeVerdict   `json:"code_objects"`
	Arch          archVerdict   `json:"arch"`
	Analysable    bool          `json:"analysable"`
}

type seVerdict struct {
	All              []int  `json:"all"`
	InstructionTrace []int  `json:"instruction_trace"`
	CUs              []int  `json:"cus"`
	TargetCU         *int64 `json:"configured_target_cu"`
	Mask             *int64 `json:"configured_shader_engine_mask"`
	OK               bool   `json:"ok"`
	Fix              string `json:"fix"`
}

type bufferVerdict struct {
	ProbablyFull    bool     `json:"probably_full"`
	FullTraces      []string `json:"full_traces"`
	CutTraces       []string `json:"cut_traces"`
	IncompleteWaves int64    `json:"incomplete_waves"`
	DataLost        []string `json:"data_lost"`
	ConfiguredBytes int64    `json:"configured_bytes"`
	From            string   `json:"configured_from"`
	Fix             string   `json:"fix"`
}

type codeVerdict struct {
	Source              string `json:"source"`
	Missing             bool   `json:"missing"`
	InstructionsOutside int64  `json:"instructions_outside"`
	WavesOutside        int64  `json:"waves_outside"`
	Fix                 string `json:"fix"`
}

type archVerdict struct {
	Traces      []string `json:"traces"`
	CodeObjects []string `json:"code_objects"`
	Agree       *bool    `json:"agree"`
	Fix         string   `json:"fix"`
}

// defaultBufferSize is rocprofv3's --att-buffer-size default, 256 MB.
const defaultBufferSize = 0x10000000

func verdict(g *capture.Group, c *code, cfg config, ts []*traceInfo) *captureInfo {
	v := &captureInfo{Type: "capture", Group: g.Key, Traces: len(ts)}
	if len(g.Traces) > 0 {
		v.Dir = filepath.Dir(g.Traces[0].Path)
	}
	all, traced, cus := map[int]bool{}, map[int]bool{}, map[int]bool{}
	var instructions int64
	fams := map[string]bool{}
	perRun := map[int]int{}
	for _, t := range ts {
		perRun[t.Run]++
	}
	v.Buffer.FullTraces, v.Buffer.DataLost, v.Buffer.CutTraces = []string{}, []string{}, []string{}
	v.Buffer.ConfiguredBytes, v.Buffer.From = cfg.bufferSize, cfg.bufferFrom
	if cfg.bufferSize == 0 {
		v.Buffer.ConfiguredBytes, v.Buffer.From = defaultBufferSize, "rocprofv3's default"
	}
	var archMismatch []string
	for _, t := range ts {
		all[t.SE] = true
		instructions += t.Instructions
		if t.InstructionTrace {
			traced[t.SE] = true
			for cu := range t.cus {
				cus[cu] = true
			}
		}
		if t.Arch != "" {
			fams[t.Arch] = true
			if err := arch.Check(arch.Trace{GFXIP: t.gfxip}, "", c.targets); err != nil {
				archMismatch = append(archMismatch, t.Path)
			}
		}
		v.Buffer.IncompleteWaves += t.IncompleteWaves
		if t.DataLost {
			v.Buffer.DataLost = append(v.Buffer.DataLost, t.Path)
		}
		// Cut (open waves, or inside a token) at the end of a trace of
		// about its share of the buffer (rocprofv3 divides it among the
		// shader engines), or of a whole number of MiB (sqtt-format.md
		// 1.7); data lost says the buffer overflowed too.
		if t.Cut {
			v.Buffer.CutTraces = append(v.Buffer.CutTraces, t.Path)
		}
		share := v.Buffer.ConfiguredBytes / int64(max(perRun[t.Run], 1))
		if t.Cut && (t.Bytes*10 >= share*9 || sqtt.FullBufferSize(t.Bytes)) || t.DataLost {
			v.Buffer.FullTraces = append(v.Buffer.FullTraces, t.Path)
		}
		v.CodeObjects.InstructionsOutside += t.outside
		v.CodeObjects.WavesOutside += t.wavesOutside
	}
	se := &v.ShaderEngines
	se.All, se.InstructionTrace, se.CUs = sortedInts(all), sortedInts(traced), sortedInts(cus)
	se.TargetCU, se.Mask = cfg.targetCU, cfg.seMask
	se.OK = len(traced) > 0
	if !se.OK {
		se.Fix = "no shader engine carried instruction tokens: the kernel's waves ran on no traced target CU; " +
			"choose them with rocprofv3 --att-target-cu N and --att-shader-engine-mask MASK (a bit per shader engine)"
	}

	b := &v.Buffer
	b.ProbablyFull = len(b.FullTraces) > 0
	if b.ProbablyFull {
		b.Fix = fmt.Sprintf("waves were still open at the end of a trace of its share of the %#x-byte buffer: give rocprofv3 --att-buffer-size %#x, or trace fewer kernels", b.ConfiguredBytes, 2*b.ConfiguredBytes)
	}

	cv := &v.CodeObjects
	cv.Source = c.source
	cv.Missing = cv.WavesOutside > 0
	switch {
	case cv.Missing && c.source == "none":
		cv.Fix = "no code objects and no code.json: give the capture's code objects (rocprofv3 writes <pid>_<agent>_code_object_id_<N>.*), " +
			"or for a capture made without rocprofv3 --code-object ID=PATH@ADDR"
	case cv.Missing:
		cv.Fix = fmt.Sprintf("%d waves start at PCs outside every code object of the index: give the missing code objects; "+
			"a capture without code-object load events has absolute PCs: --code-object ID=PATH@ADDR places each object at its load address",
			cv.WavesOutside)
	}

	a := &v.Arch
	a.Traces = make([]string, 0, len(fams))
	for f := range fams {
		a.Traces = append(a.Traces, f)
	}
	slices.Sort(a.Traces)
	a.CodeObjects = append([]string{}, c.targets...)
	if len(c.targets) > 0 && len(a.Traces) > 0 {
		agree := len(archMismatch) == 0
		a.Agree = &agree
		if !agree {
			a.Fix = fmt.Sprintf("the code objects are for %s, the traces are %s: give the code objects of this trace's GPU",
				strings.Join(c.targets, ", "), strings.Join(a.Traces, ", "))
		}
	}
	v.Analysable = instructions > 0 && (a.Agree == nil || *a.Agree)
	return v
}

// writeText prints one capture as a short table and its verdict.
func writeText(w io.Writer, v *captureInfo, ts []*traceInfo) error {
	name := v.Dir
	if v.Group != "" {
		name += " (" + v.Group + ")"
	}
	fmt.Fprintf(w, "capture %s: %d traces, code from %s", name, v.Traces, v.CodeObjects.Source)
	if len(v.Arch.CodeObjects) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(v.Arch.CodeObjects, ", "))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "SE\tRUN\tARCH\tBYTES\tINSTR\tWAVES\tINSTRUCTIONS\tCUT\tDISPATCHES\tCYCLES\t\tKERNELS")
	for _, t := range ts {
		instr := "no"
		if t.InstructionTrace {
			instr = "yes"
		}
		cycles := "-"
		if t.FirstCycle != nil {
			cycles = fmt.Sprintf("%d-%d", *t.FirstCycle, *t.LastCycle)
		}
		arch := t.Arch
		if t.Error != "" {
			arch = "error"
		}
		if arch == "" {
			arch = "-"
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%d\t%s\t%d\t%d\t%d\t%d\t%s\t\t%s\n", t.SE, t.Run, arch, t.Bytes, instr,
			t.Waves, t.Instructions, t.IncompleteWaves, t.Dispatches, cycles, strings.Join(t.Kernels, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, t := range ts {
		if t.Error != "" {
			fmt.Fprintf(w, "  %s: %s\n", filepath.Base(t.Path), t.Error)
		}
		for _, s := range t.Warnings {
			fmt.Fprintf(w, "  %s: %s\n", filepath.Base(t.Path), s)
		}
	}
	se := v.ShaderEngines
	if se.OK {
		fmt.Fprintf(w, "shader engines: SE %s of %d carried instructions (CUs %s)\n", ints(se.InstructionTrace), len(se.All), ints(se.CUs))
	} else {
		fmt.Fprintf(w, "shader engines: none of %d carried instructions\n  fix: %s\n", len(se.All), se.Fix)
	}
	switch {
	case v.Buffer.ProbablyFull:
		fmt.Fprintf(w, "buffer: probably full (%d waves cut, %d traces)\n  fix: %s\n", v.Buffer.IncompleteWaves, len(v.Buffer.FullTraces), v.Buffer.Fix)
	case len(v.Buffer.CutTraces) > 0:
		fmt.Fprintf(w, "buffer: %d traces cut (%d waves open), below their share of the buffer: cut after the capture?\n",
			len(v.Buffer.CutTraces), v.Buffer.IncompleteWaves)
	default:
		fmt.Fprintln(w, "buffer: no trace cut")
	}
	if v.CodeObjects.Missing {
		fmt.Fprintf(w, "code objects: missing\n  fix: %s\n", v.CodeObjects.Fix)
	} else {
		fmt.Fprintln(w, "code objects: every instruction is in the index")
	}
	switch {
	case v.Arch.Agree == nil:
		fmt.Fprintf(w, "architecture: %s traces; the code names no architecture: not checked\n", strings.Join(v.Arch.Traces, ", "))
	case *v.Arch.Agree:
		fmt.Fprintf(w, "architecture: %s traces, code objects %s: they agree\n", strings.Join(v.Arch.Traces, ", "), strings.Join(v.Arch.CodeObjects, ", "))
	default:
		fmt.Fprintf(w, "architecture: mismatch\n  fix: %s\n", v.Arch.Fix)
	}
	if v.Analysable {
		fmt.Fprintln(w, "verdict: something to analyse")
	} else {
		fmt.Fprintln(w, "verdict: nothing to analyse")
	}
	_, err := fmt.Fprintln(w)
	return err
}

func ints(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
