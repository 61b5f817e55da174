package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/attkit/attkit/internal/fold"
	"github.com/attkit/attkit/internal/pyjson"
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

// writePprof writes the counters as a gzipped pprof profile. Each PC with
// a non-zero counter is one sample at one location; the location's function
// is named by the ISA text (or "codeobj C 0xADDR" without text) and placed
// at the first file:line of the index's source chain, so pprof's -list
// shows source lines. Sample labels codeobj and vaddr name the PC.
func writePprof(w io.Writer, fo *fold.Fold) error {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "hits", Unit: "count"},
			{Type: "latency", Unit: "cycles"},
			{Type: "stall", Unit: "cycles"},
			{Type: "idle", Unit: "cycles"},
		},
		DefaultSampleType: "latency",
		PeriodType:        &profile.ValueType{Type: "instructions", Unit: "count"},
		Period:            1,
	}
	// One mapping per code object, flagged as fully symbolized so that
	// pprof never tries to symbolize the addresses itself.
	paths := map[uint64]string{}
	if ix := fo.Index(); ix != nil {
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
	for _, e := range fo.Ordered() {
		if e.Hit == 0 && e.Latency == 0 && e.Stall == 0 && e.Idle == 0 {
			continue
		}
		name := e.Text
		if name == "" {
			name = fmt.Sprintf("codeobj %d 0x%x", e.PC.CodeObjectID, e.PC.Address)
		}
		file, line := sourceLine(e.Source)
		id := uint64(len(p.Location) + 1)
		fn := &profile.Function{ID: id, Name: name, SystemName: name, Filename: file}
		loc := &profile.Location{ID: id, Address: e.PC.Address, Mapping: mapping(e),
			Line: []profile.Line{{Function: fn, Line: line}}}
		p.Function = append(p.Function, fn)
		p.Location = append(p.Location, loc)
		p.Sample = append(p.Sample, &profile.Sample{
			Location: []*profile.Location{loc},
			Value:    []int64{e.Hit, e.Latency, e.Stall, e.Idle},
			NumLabel: map[string][]int64{
				"codeobj": {int64(e.PC.CodeObjectID)},
				"vaddr":   {int64(e.PC.Address)},
			},
		})
	}
	if err := p.CheckValid(); err != nil {
		return fmt.Errorf("pprof profile: %w", err)
	}
	return p.Write(w)
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
