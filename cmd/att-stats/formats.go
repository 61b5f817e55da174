package main

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/attkit/attkit/internal/fold"
	"github.com/attkit/attkit/internal/hidden"
	"github.com/attkit/attkit/internal/pyjson"
	"github.com/attkit/attkit/internal/rollup"
	"github.com/attkit/attkit/internal/wire"
)

// writeJSON writes one JSON object per PC a line, in the order of the stats
// CSV. Keys: codeobj, vaddr, line, instruction, source, hitcount, latency,
// stall, idle, and with --expect an "expected" object of the four
// expected counters.
func writeJSON(w io.Writer, fo *fold.Fold, control *fold.Control) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var b []byte
	withExp := control != nil
	if withExp {
		fo.Validate(control) // fills the Exp fields
	}
	for _, e := range fo.Ordered() {
		b = append(b[:0], `{"codeobj":`...)
		b = strconv.AppendUint(b, e.PC.CodeObjectID, 10)
		b = append(b, `,"vaddr":`...)
		b = strconv.AppendUint(b, e.PC.Address, 10)
		b = append(b, `,"line":`...)
		b = strconv.AppendInt(b, e.Line, 10)
		b = append(b, `,"instruction":`...)
		b = pyjson.AppendString(b, e.Text)
		b = append(b, `,"source":`...)
		b = pyjson.AppendString(b, e.Source)
		b = append(b, ',')
		b = appendCounters(b, e.Hit, e.Latency, e.Stall, e.Idle)
		if withExp {
			b = append(b, `,"expected":{`...)
			b = appendCounters(b, e.ExpHit, e.ExpLatency, e.ExpStall, e.ExpIdle)
			b = append(b, '}')
		}
		b = append(b, "}\n"...)
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func appendCounters(b []byte, hit, lat, stall, idle int64) []byte {
	b = append(b, `"hitcount":`...)
	b = strconv.AppendInt(b, hit, 10)
	b = append(b, `,"latency":`...)
	b = strconv.AppendInt(b, lat, 10)
	b = append(b, `,"stall":`...)
	b = strconv.AppendInt(b, stall, 10)
	b = append(b, `,"idle":`...)
	return strconv.AppendInt(b, idle, 10)
}

// writePprof writes the counters as a gzipped pprof profile: sample
// types hits, latency (the default), stall, idle, exposed and hidden (the
// split of §8.1, see exposure). Each PC with a non-zero counter is one
// sample at one location, whose address is the PC's address in one mapping
// per code object. Kernels are the functions: a location's outermost frame
// is its kernel (named by its symbol, at the file and first line of the
// kernel's own source, from the index's DWARF lines) at the PC's line of
// that file; the inner frames of an inlined source chain ("helper.h:8 ->
// kernels.cl:24") are inline frames (one profile.Location with several
// Lines, innermost first), each the function the index's inline chain
// names ("mix" in helper.h, line 8), so that -traces, -peek and the flame
// graph show who inlined what; an index without chains (a code.json)
// names them by their file ("(inlined) helper.h"). A PC outside every
// kernel of the index belongs to a function named by its code object
// ("codeobj 1"). Sample labels: codeobj and vaddr (numbers), instruction
// (the ISA text).
func writePprof(w io.Writer, fo *fold.Fold, hid map[wire.PC]hidden.Latency) error {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "hits", Unit: "count"},
			{Type: "latency", Unit: "cycles"},
			{Type: "stall", Unit: "cycles"},
			{Type: "idle", Unit: "cycles"},
			{Type: "exposed", Unit: "cycles"},
			{Type: "hidden", Unit: "cycles"},
		},
		DefaultSampleType: "latency",
		PeriodType:        &profile.ValueType{Type: "instructions", Unit: "count"},
		Period:            1,
	}
	// One mapping per code object, flagged as fully symbolized so that
	// pprof never tries to symbolize the addresses itself.
	paths := map[uint64]string{}
	ix := fo.Index()
	if ix != nil {
		for _, o := range ix.Objects {
			paths[o.ID] = o.Path
		}
	}
	maps := map[uint64]*profile.Mapping{}
	mapping := func(e *fold.Entry) *profile.Mapping {
		co := e.PC.CodeObjectID
		m := maps[co]
		if m == nil {
			file := paths[co]
			if file == "" {
				file = fmt.Sprintf("codeobj %d", co)
			}
			m = &profile.Mapping{ID: uint64(len(p.Mapping) + 1), Start: e.PC.Address, Limit: e.PC.Address + 1,
				File: file, HasFunctions: true, HasFilenames: true, HasLineNumbers: true, HasInlineFrames: true}
			maps[co] = m
			p.Mapping = append(p.Mapping, m)
		}
		m.Start = min(m.Start, e.PC.Address)
		m.Limit = max(m.Limit, e.PC.Address+1)
		return m
	}
	kernels := rollup.KernelsOf(ix)
	chains := rollup.InlineOf(ix)
	funcs := map[[2]string]*profile.Function{}
	function := func(name, file string, start int64) *profile.Function {
		k := [2]string{name, file}
		fn := funcs[k]
		if fn == nil {
			fn = &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name, Filename: file, StartLine: start}
			funcs[k] = fn
			p.Function = append(p.Function, fn)
		}
		return fn
	}
	for _, e := range fo.Ordered() {
		h := hid[e.PC]
		x := exposureOf(e, h)
		if e.Hit == 0 && e.Latency == 0 && e.Stall == 0 && e.Idle == 0 && h.Total() == 0 {
			continue
		}
		frames := sourceFrames(e.Source)
		chain := chains[e.PC]
		if len(chain) != len(frames) {
			chain = nil // not the chain of this source text
		}
		var lines []profile.Line
		k := kernels[e.PC]
		var outer *profile.Function
		if k != nil {
			outer = function(k.Name, k.File, k.Line)
		} else {
			file := ""
			if len(frames) > 0 {
				file = frames[len(frames)-1].file
			}
			outer = function(fmt.Sprintf("codeobj %d", e.PC.CodeObjectID), file, 0)
		}
		for i, fr := range frames {
			if i == len(frames)-1 {
				lines = append(lines, profile.Line{Function: outer, Line: fr.line})
				break
			}
			name := "(inlined) " + filepath.Base(fr.file)
			if chain != nil && chain[i].Function != "" {
				name = chain[i].Function
			}
			lines = append(lines, profile.Line{Function: function(name, fr.file, 0), Line: fr.line})
		}
		if len(lines) == 0 {
			lines = []profile.Line{{Function: outer}}
		}
		loc := &profile.Location{ID: uint64(len(p.Location) + 1), Address: e.PC.Address, Mapping: mapping(e), Line: lines}
		p.Location = append(p.Location, loc)
		smp := &profile.Sample{
			Location: []*profile.Location{loc},
			Value:    []int64{e.Hit, e.Latency, e.Stall, e.Idle, x.exposed, x.hidden},
			NumLabel: map[string][]int64{
				"codeobj": {int64(e.PC.CodeObjectID)},
				"vaddr":   {int64(e.PC.Address)},
			},
		}
		if e.Text != "" {
			smp.Label = map[string][]string{"instruction": {e.Text}}
		}
		p.Sample = append(p.Sample, smp)
	}
	if err := p.CheckValid(); err != nil {
		return fmt.Errorf("pprof profile: %w", err)
	}
	return p.Write(w)
}

type frame struct {
	file string
	line int64
}

// sourceFrames splits a source chain ("file:line -> caller:line …",
// innermost first) into frames; an empty source has none.
func sourceFrames(src string) []frame {
	if strings.TrimSpace(src) == "" || src == "None" {
		return nil
	}
	var out []frame
	for _, part := range strings.Split(src, " -> ") {
		f, l := sourceLine(part)
		out = append(out, frame{f, l})
	}
	return out
}

// sourceLine splits the first element of a source chain
// ("file:line -> caller:line …") into file and line; "?" or no line gives
// line 0.
func sourceLine(src string) (string, int64) {
	if i := strings.Index(src, " -> "); i >= 0 {
		src = src[:i]
	}
	src = strings.TrimSpace(src)
	i := strings.LastIndexByte(src, ':')
	if i < 0 {
		return src, 0
	}
	n, err := strconv.ParseInt(src[i+1:], 10, 64)
	if err != nil {
		if src[i+1:] == "?" {
			return src[:i], 0
		}
		return src, 0
	}
	return src[:i], n
}
