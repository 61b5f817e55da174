package wire

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
)

// The index stream is a header map followed by tagged arrays, one per code
// object, row, kernel and funcmap entry: ["row", kind, codeobj, vaddr, size,
// text, source, line, hit, latency, stall, idle, extra, raw], a row with an
// inline chain followed by ["inline", [function, file, line, …]] (minor 1).
// Readers skip tags they do not know, so minor versions can add some. See
// docs/wire.md.

// WriteIndex writes ix as an index stream.
func WriteIndex(w io.Writer, ix *Index) error {
	bw := bufio.NewWriter(w)
	h := ix.Header
	h.Format, h.Major, h.Minor = IndexFormat, IndexMajor, IndexMinor
	p, err := marshalMap(&h)
	if err != nil {
		return err
	}
	bw.Write(p)
	var b []byte
	d := &ix.Doc
	b = appendArrayLen(b[:0], 6)
	b = appendString(b, "doc")
	b = appendString(b, d.Version)
	b = appendRaw(b, d.HeaderRaw)
	b = appendArrayLen(b, len(d.Hsaco))
	for _, s := range d.Hsaco {
		b = appendString(b, s)
	}
	b = appendArrayLen(b, len(d.Keys))
	for _, s := range d.Keys {
		b = appendString(b, s)
	}
	keys := make([]string, 0, len(d.Unknown))
	for k := range d.Unknown {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = appendMapLen(b, len(keys))
	for _, k := range keys {
		b = appendString(b, k)
		b = appendRaw(b, d.Unknown[k])
	}
	bw.Write(b)
	for _, o := range ix.Objects {
		b = appendArrayLen(b[:0], 5)
		b = appendString(b, "object")
		b = appendUint(b, o.ID)
		b = appendString(b, o.Path)
		b = appendString(b, o.Target)
		b = appendArrayLen(b, 2*len(o.Ranges))
		for _, r := range o.Ranges {
			b = appendUint(b, r.Begin)
			b = appendUint(b, r.End)
		}
		bw.Write(b)
	}
	for i := range ix.Rows {
		r := &ix.Rows[i]
		b = appendArrayLen(b[:0], 14)
		b = appendString(b, "row")
		b = appendUint(b, uint64(r.Kind))
		b = appendUint(b, r.CodeObj)
		b = appendUint(b, r.Vaddr)
		b = appendUint(b, r.Size)
		b = appendString(b, r.Text)
		b = appendStrOrNil(b, r.Source, r.SourceNull)
		b = appendInt(b, r.Line)
		b = appendInt(b, r.Hit)
		b = appendInt(b, r.Latency)
		b = appendInt(b, r.Stall)
		b = appendInt(b, r.Idle)
		b = appendRaw(b, r.Extra)
		b = appendRaw(b, r.Raw)
		if len(r.Inline) > 0 {
			b = appendArrayLen(b, 2)
			b = appendString(b, "inline")
			b = appendArrayLen(b, 3*len(r.Inline))
			for _, f := range r.Inline {
				b = appendString(b, f.Function)
				b = appendString(b, f.File)
				b = appendInt(b, f.Line)
			}
		}
		bw.Write(b)
	}
	for _, k := range ix.Kernels {
		b = appendArrayLen(b[:0], 5)
		b = appendString(b, "kernel")
		b = appendUint(b, k.Address)
		b = appendUint(b, k.CodeObj)
		b = appendString(b, k.Name)
		b = appendString(b, k.Demangled)
		bw.Write(b)
	}
	for _, f := range ix.Funcmap {
		b = appendArrayLen(b[:0], 7)
		b = appendString(b, "funcmap")
		b = appendUint(b, f.CodeObj)
		b = appendUint(b, f.MarkerID)
		b = appendString(b, f.Kind)
		b = appendString(b, f.Name)
		b = appendString(b, f.Source)
		b = appendUint(b, f.Vaddr)
		bw.Write(b)
	}
	for _, f := range ix.FuncmapLayout {
		b = appendArrayLen(b[:0], 4)
		b = appendString(b, "funcmap_layout")
		b = appendUint(b, f.CodeObj)
		b = appendUint(b, uint64(f.Bits))
		b = appendUint(b, uint64(f.Shift))
		bw.Write(b)
	}
	for _, f := range ix.FuncmapPayloads {
		b = appendArrayLen(b[:0], 4)
		b = appendString(b, "funcmap_payload")
		b = appendUint(b, f.CodeObj)
		b = appendUint(b, f.MarkerID)
		b = appendUint(b, uint64(f.Count))
		bw.Write(b)
	}
	return bw.Flush()
}

func appendRaw(b []byte, raw json.RawMessage) []byte {
	if raw == nil {
		return append(b, 0xc0)
	}
	return appendBin(b, raw)
}

// ReadIndexFile reads an index stream or a code.json file, strictly.
func ReadIndexFile(path string) (*Index, error) { return ReadIndexFileWith(path, ReadOptions{}) }

// ReadIndexFileWith reads an index stream or a code.json file.
func ReadIndexFileWith(path string, opt ReadOptions) (*Index, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadIndexWith(f, path, opt)
}

// ReadIndex reads an index strictly (ReadIndexWith with no options).
func ReadIndex(r io.Reader, name string) (*Index, error) {
	return ReadIndexWith(r, name, ReadOptions{})
}

// ReadIndexWith reads an index: an index stream, or a code.json document
// (as written by co-index, att-stats, upstream's tools or rocprofv3), told
// apart by their first byte. opt applies to a code.json.
func ReadIndexWith(r io.Reader, name string, opt ReadOptions) (*Index, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		c, err := br.ReadByte()
		if err != nil {
			if err == io.EOF {
				return nil, &FormatError{Name: name, Err: fmt.Errorf("empty index")}
			}
			return nil, err
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			br.UnreadByte()
			data, err := io.ReadAll(br)
			if err != nil {
				return nil, err
			}
			ix, err := ParseCodeJSONWith(data, opt)
			var ce *CodeJSONError
			if errors.As(err, &ce) {
				ce.Name = name
				return nil, ce
			}
			if err != nil {
				return nil, &FormatError{Name: name, Err: err}
			}
			return ix, nil
		}
		br.UnreadByte()
		return readIndexStream(br, name)
	}
}

func readIndexStream(br *bufio.Reader, name string) (*Index, error) {
	m := &mpReader{br: br}
	c, _ := br.Peek(1)
	if len(c) == 0 || !(c[0] >= 0x80 && c[0] <= 0x8f || c[0] == 0xde || c[0] == 0xdf) {
		return nil, &VersionError{Name: name, WantFormat: IndexFormat, WantMajor: IndexMajor}
	}
	hv := m.any(0)
	if m.err != nil {
		return nil, &FormatError{Name: name, Offset: m.off, Err: m.err}
	}
	hm, _ := hv.(map[string]any)
	format, _ := hm["format"].(string)
	major := int(asInt(hm["major"]))
	if format != IndexFormat || major != IndexMajor {
		return nil, &VersionError{Name: name, Format: format, Major: major,
			WantFormat: IndexFormat, WantMajor: IndexMajor}
	}
	ix := &Index{}
	ix.Header = IndexHeader{Format: format, Major: major, Minor: int(asInt(hm["minor"]))}
	ix.Header.Producer, _ = hm["producer"].(string)
	ix.Header.Objdump, _ = hm["objdump"].(string)
	for {
		if _, err := br.Peek(1); err == io.EOF {
			break
		}
		n := m.arrayLen()
		tag := ""
		if n > 0 {
			tag = m.str()
		}
		if m.err != nil {
			return nil, &FormatError{Name: name, Offset: m.off, Err: m.err}
		}
		want := map[string]int{"doc": 6, "object": 5, "row": 14, "inline": 2, "kernel": 5,
			"funcmap": 7, "funcmap_layout": 4, "funcmap_payload": 4}[tag]
		if want != 0 && n != want {
			m.failf("index %s entry: expected %d fields, found %d", tag, want, n)
		}
		switch tag {
		case "doc":
			d := &ix.Doc
			d.Version = m.str()
			d.HeaderRaw = rawOrNil(m.bin(nil))
			for k := m.arrayLen(); k > 0 && m.err == nil; k-- {
				d.Hsaco = append(d.Hsaco, m.str())
			}
			for k := m.arrayLen(); k > 0 && m.err == nil; k-- {
				d.Keys = append(d.Keys, m.str())
			}
			um, _ := m.any(0).(map[string]any)
			for k, v := range um {
				if p, ok := v.([]byte); ok {
					if d.Unknown == nil {
						d.Unknown = map[string]json.RawMessage{}
					}
					d.Unknown[k] = p
				}
			}
		case "object":
			o := CodeObject{ID: m.uint(), Path: m.str(), Target: m.str()}
			k := m.arrayLen()
			for ; k > 1 && m.err == nil; k -= 2 {
				o.Ranges = append(o.Ranges, LoadRange{Begin: m.uint(), End: m.uint()})
			}
			if k != 0 {
				m.failf("index object: odd range list")
			}
			ix.Objects = append(ix.Objects, o)
		case "row":
			r := Row{Kind: RowKind(m.un("row", "kind", 8)), CodeObj: m.uint(), Vaddr: m.uint(), Size: m.uint(),
				Text: m.str()}
			r.Source, r.SourceNull = m.strOrNil()
			r.Line, r.Hit, r.Latency, r.Stall, r.Idle = m.int(), m.int(), m.int(), m.int(), m.int()
			r.Extra = rawOrNil(m.bin(nil))
			r.Raw = rawOrNil(m.bin(nil))
			ix.Rows = append(ix.Rows, r)
		case "inline":
			if len(ix.Rows) == 0 || ix.Rows[len(ix.Rows)-1].Inline != nil {
				m.failf("index inline entry: not right after a row")
				break
			}
			k := m.arrayLen()
			if k%3 != 0 || k == 0 {
				m.failf("index inline entry: %d values, not frames of 3", k)
				break
			}
			fr := make([]InlineFrame, 0, min(k/3, 64))
			for ; k > 0 && m.err == nil; k -= 3 {
				fr = append(fr, InlineFrame{Function: m.str(), File: m.str(), Line: m.int()})
			}
			ix.Rows[len(ix.Rows)-1].Inline = fr
		case "kernel":
			ix.Kernels = append(ix.Kernels, Kernel{Address: m.uint(), CodeObj: m.uint(),
				Name: m.str(), Demangled: m.str()})
		case "funcmap":
			ix.Funcmap = append(ix.Funcmap, FuncmapEntry{CodeObj: m.uint(), MarkerID: m.uint(),
				Kind: m.str(), Name: m.str(), Source: m.str(), Vaddr: m.uint()})
		case "funcmap_layout":
			ix.FuncmapLayout = append(ix.FuncmapLayout, FuncmapLayout{CodeObj: m.uint(),
				Bits: uint32(m.un("funcmap_layout", "bits", 32)), Shift: uint32(m.un("funcmap_layout", "shift", 32))})
		case "funcmap_payload":
			ix.FuncmapPayloads = append(ix.FuncmapPayloads, FuncmapPayload{CodeObj: m.uint(),
				MarkerID: m.uint(), Count: uint32(m.un("funcmap_payload", "count", 32))})
		default:
			for k := 1; k < n && m.err == nil; k++ {
				m.any(0)
			}
		}
		if m.err != nil {
			return nil, &FormatError{Name: name, Offset: m.off, Err: m.err}
		}
	}
	return ix, nil
}

func rawOrNil(p []byte) json.RawMessage {
	if p == nil {
		return nil
	}
	return json.RawMessage(bytes.Clone(p))
}
