package codeobj

import (
	"bufio"
	"encoding/json"
	"io"

	"github.com/attkit/attkit/internal/wire"
)

type jsonHeader struct {
	Type     string `json:"type"`
	Format   string `json:"format"`
	Major    int    `json:"major"`
	Minor    int    `json:"minor"`
	Producer string `json:"producer"`
	Objdump  string `json:"objdump"`
}

type jsonObject struct {
	Type   string      `json:"type"`
	ID     uint64      `json:"id"`
	Path   string      `json:"path"`
	Target string      `json:"target"`
	Ranges [][2]uint64 `json:"ranges"`
}

type jsonRow struct {
	Type    string      `json:"type"`
	Kind    string      `json:"kind"`
	CodeObj uint64      `json:"codeobj"`
	Vaddr   uint64      `json:"vaddr"`
	Size    uint64      `json:"size"`
	Line    int64       `json:"line"`
	Text    string      `json:"text"`
	Source  string      `json:"source"`
	Hit     int64       `json:"hit,omitempty"`
	Latency int64       `json:"latency,omitempty"`
	Stall   int64       `json:"stall,omitempty"`
	Idle    int64       `json:"idle,omitempty"`
	Inline  []jsonFrame `json:"inline,omitempty"`
}

type jsonFrame struct {
	Function string `json:"function"`
	File     string `json:"file"`
	Line     int64  `json:"line"`
}

type jsonKernel struct {
	Type      string `json:"type"`
	Address   uint64 `json:"address"`
	CodeObj   uint64 `json:"codeobj"`
	Name      string `json:"name"`
	Demangled string `json:"demangled"`
}

type jsonFuncmap struct {
	Type     string `json:"type"`
	CodeObj  uint64 `json:"codeobj"`
	MarkerID uint64 `json:"marker_id"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
	Source   string `json:"source"`
	Vaddr    uint64 `json:"vaddr"`
}

type jsonLayout struct {
	Type    string `json:"type"`
	CodeObj uint64 `json:"codeobj"`
	Bits    uint32 `json:"bits"`
	Shift   uint32 `json:"shift"`
}

type jsonPayload struct {
	Type     string `json:"type"`
	CodeObj  uint64 `json:"codeobj"`
	MarkerID uint64 `json:"marker_id"`
	Count    uint32 `json:"count"`
}

var rowKinds = map[wire.RowKind]string{wire.RowInstruction: "instruction", wire.RowFunction: "function", wire.RowLabel: "label"}

// WriteJSON writes ix as JSON lines (see the format above).
func WriteJSON(w io.Writer, ix *wire.Index) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	h := ix.Header
	if h.Format == "" {
		h.Format, h.Major, h.Minor = wire.IndexFormat, wire.IndexMajor, wire.IndexMinor
	}
	if err := enc.Encode(jsonHeader{"header", h.Format, h.Major, h.Minor, h.Producer, h.Objdump}); err != nil {
		return err
	}
	for _, o := range ix.Objects {
		jo := jsonObject{Type: "object", ID: o.ID, Path: o.Path, Target: o.Target, Ranges: [][2]uint64{}}
		for _, r := range o.Ranges {
			jo.Ranges = append(jo.Ranges, [2]uint64{r.Begin, r.End})
		}
		if err := enc.Encode(jo); err != nil {
			return err
		}
	}
	for i := range ix.Rows {
		r := &ix.Rows[i]
		kind, ok := rowKinds[r.Kind]
		if !ok {
			kind = "unknown"
		}
		var frames []jsonFrame
		for _, f := range r.Inline {
			frames = append(frames, jsonFrame{f.Function, f.File, f.Line})
		}
		if err := enc.Encode(jsonRow{"row", kind, r.CodeObj, r.Vaddr, r.Size, r.Line, r.Text, r.Source,
			r.Hit, r.Latency, r.Stall, r.Idle, frames}); err != nil {
			return err
		}
	}
	for _, k := range ix.Kernels {
		if err := enc.Encode(jsonKernel{"kernel", k.Address, k.CodeObj, k.Name, k.Demangled}); err != nil {
			return err
		}
	}
	for _, f := range ix.Funcmap {
		if err := enc.Encode(jsonFuncmap{"funcmap", f.CodeObj, f.MarkerID, f.Kind, f.Name, f.Source, f.Vaddr}); err != nil {
			return err
		}
	}
	for _, f := range ix.FuncmapLayout {
		if err := enc.Encode(jsonLayout{"funcmap_layout", f.CodeObj, f.Bits, f.Shift}); err != nil {
			return err
		}
	}
	for _, f := range ix.FuncmapPayloads {
		if err := enc.Encode(jsonPayload{"funcmap_payload", f.CodeObj, f.MarkerID, f.Count}); err != nil {
			return err
		}
	}
	return bw.Flush()
}
