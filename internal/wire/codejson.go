package wire

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/pyjson"
)

// ReadOptions choose how a code.json is read.
type ReadOptions struct {
	// Lenient keeps a malformed row, or a second row of one PC, whole in
	// Raw (written back unchanged, never looked up) instead of failing;
	// Index.Skipped counts them.
	Lenient bool
}

// A CodeJSONError is a code.json that attkit refuses: a malformed row, two
// instruction rows of one PC (exit 1), or a version it does not know (exit
// 3). Row is the 1-based position of the row in "code" (0 for the
// version).
type CodeJSONError struct {
	Name    string // the input's name ("" until ReadIndex sets it)
	Row     int
	Msg     string
	Version bool
}

func (e *CodeJSONError) Error() string {
	name := e.Name
	if name == "" {
		name = "code.json"
	}
	if e.Row == 0 {
		return name + ": " + e.Msg
	}
	return fmt.Sprintf("%s: code row %d: %s (--lenient skips such rows)", name, e.Row, e.Msg)
}

// ExitCode implements exitcode.Coder.
func (e *CodeJSONError) ExitCode() int {
	if e.Version {
		return exitcode.Format
	}
	return exitcode.Failed
}

// knownVersion matches the code.json versions attkit reads: upstream's
// "snapshot_dwarf-1.1" (and other 1.x snapshots) and "1.0"-style numbers of
// major 1. A document without "version" is read too (the viewer never
// checks it).
var knownVersion = regexp.MustCompile(`^((snapshot|snapshot_dwarf)-)?1(\.[0-9]+)*$`)

// ParseCodeJSON reads a viewer code.json document into an Index, strictly
// (ParseCodeJSONWith with no options).
func ParseCodeJSON(data []byte) (*Index, error) { return ParseCodeJSONWith(data, ReadOptions{}) }

// ParseCodeJSONWith reads a viewer code.json document into an Index. Rows
// of the ten-column form (python-layer §4.4) become Rows, with any further
// columns kept raw in Extra. A null Source or counter reads as "" or 0. Row
// sizes are left 0 (unknown). A row of another form (not an array of at
// least ten columns: text, 0, line >= 0, source or null, code object and
// address non-negative integers, four integer counters), a second
// instruction row of one (code object, address), or a version that is not
// of major 1 is an error naming the row; with opt.Lenient such a row is
// kept whole in Raw and counted in Skipped.
func ParseCodeJSONWith(data []byte, opt ReadOptions) (*Index, error) {
	v, err := pyjson.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("code.json: %v", err)
	}
	doc, ok := v.(pyjson.Object)
	if !ok {
		return nil, fmt.Errorf("code.json: top level is not an object")
	}
	ix := &Index{}
	codeSeen := false
	for _, m := range doc {
		ix.Doc.Keys = append(ix.Doc.Keys, m.Key)
		switch m.Key {
		case "code":
			rows, ok := m.Value.([]any)
			if !ok {
				return nil, fmt.Errorf("code.json: \"code\" is not an array")
			}
			codeSeen = true
			seen := map[PC]int{}
			for i, rv := range rows {
				r, bad := parseCodeRow(rv)
				if bad == "" && r.Raw == nil && !r.IsLabel() {
					if first, dup := seen[r.PC()]; dup {
						bad = fmt.Sprintf("code object %d address %#x again (first in row %d)", r.CodeObj, r.Vaddr, first)
						r = Row{Raw: json.RawMessage(compact(rv))}
					} else {
						seen[r.PC()] = i + 1
					}
				}
				if bad != "" {
					if !opt.Lenient {
						return nil, &CodeJSONError{Row: i + 1, Msg: bad}
					}
					ix.Skipped++
				}
				ix.Rows = append(ix.Rows, r)
			}
		case "version":
			s, ok := m.Value.(string)
			if !ok {
				return nil, fmt.Errorf("code.json: \"version\" is not a string")
			}
			if !knownVersion.MatchString(s) {
				return nil, &CodeJSONError{Version: true,
					Msg: fmt.Sprintf("unsupported code.json version %q (this build reads version 1.x and snapshot_dwarf-1.x)", s)}
			}
			ix.Doc.Version = s
		case "header":
			ix.Doc.HeaderRaw = json.RawMessage(compact(m.Value))
		case "hsaco":
			list, ok := m.Value.([]any)
			if !ok {
				return nil, fmt.Errorf("code.json: \"hsaco\" is not an array")
			}
			for _, e := range list {
				s, ok := e.(string)
				if !ok {
					return nil, fmt.Errorf("code.json: \"hsaco\" entry is not a string")
				}
				ix.Doc.Hsaco = append(ix.Doc.Hsaco, s)
			}
		case "kernels":
			list, ok := m.Value.([]any)
			if !ok {
				return nil, fmt.Errorf("code.json: \"kernels\" is not an array")
			}
			for _, e := range list {
				o, ok := e.(pyjson.Object)
				if !ok {
					return nil, fmt.Errorf("code.json: \"kernels\" entry is not an object")
				}
				var k Kernel
				k.Address, _ = uintOf(get(o, "address"))
				k.CodeObj, _ = uintOf(get(o, "codeobj"))
				k.Name, _ = get(o, "name").(string)
				k.Demangled, _ = get(o, "demangled").(string)
				ix.Kernels = append(ix.Kernels, k)
			}
		case "sqtt_funcmap", "sqtt_funcmap_layout", "sqtt_funcmap_payloads":
			if err := parseFuncmapTable(ix, m.Key, m.Value); err != nil {
				return nil, err
			}
		default:
			if ix.Doc.Unknown == nil {
				ix.Doc.Unknown = map[string]json.RawMessage{}
			}
			ix.Doc.Unknown[m.Key] = json.RawMessage(compact(m.Value))
		}
	}
	if !codeSeen {
		return nil, fmt.Errorf("code.json: no \"code\" array")
	}
	return ix, nil
}

func get(o pyjson.Object, k string) any {
	v, _ := o.Get(k)
	return v
}

func compact(v any) []byte {
	b, err := json.Marshal(toPlain(v))
	if err != nil {
		panic(err) // values come from pyjson.Decode: always encodable
	}
	return b
}

// toPlain turns ordered values into values encoding/json writes in order.
func toPlain(v any) any {
	switch x := v.(type) {
	case pyjson.Object:
		return orderedJSON(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toPlain(e)
		}
		return out
	}
	return v
}

type orderedJSON pyjson.Object

func (o orderedJSON) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.Key)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(toPlain(m.Value))
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

func uintOf(v any) (uint64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	u, err := strconv.ParseUint(string(n), 10, 64)
	return u, err == nil
}

func intOf(v any) (int64, bool) {
	if v == nil {
		return 0, true
	}
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	return i, err == nil
}

// parseCodeRow reads one row of "code"; a row of another form comes back
// whole in Raw, with what is wrong with it.
func parseCodeRow(rv any) (Row, string) {
	raw := Row{Raw: json.RawMessage(compact(rv))}
	cols, ok := rv.([]any)
	if !ok {
		return raw, "not an array"
	}
	if len(cols) < 10 {
		return raw, fmt.Sprintf("%d columns, fewer than the 10 of [ISA, _, LineNumber, Source, Codeobj, Vaddr, Hit, Latency, Stall, Idle]", len(cols))
	}
	show := func(v any) string { return string(compact(v)) }
	var r Row
	if r.Text, ok = cols[0].(string); !ok {
		return raw, "ISA " + show(cols[0]) + " is not a string"
	}
	if z, ok := intOf(cols[1]); !ok || z != 0 {
		return raw, "column 1 " + show(cols[1]) + " is not 0"
	}
	if r.Line, ok = intOf(cols[2]); !ok || r.Line < 0 {
		return raw, "LineNumber " + show(cols[2]) + " is not a non-negative integer"
	}
	switch s := cols[3].(type) {
	case string:
		r.Source = s
	case nil:
		r.SourceNull = true
	default:
		return raw, "Source " + show(cols[3]) + " is not a string or null"
	}
	if r.CodeObj, ok = uintOf(cols[4]); !ok {
		return raw, "Codeobj " + show(cols[4]) + " is not a non-negative integer"
	}
	if r.Vaddr, ok = uintOf(cols[5]); !ok {
		return raw, "Vaddr " + show(cols[5]) + " is not a non-negative integer"
	}
	for i, p := range []*int64{&r.Hit, &r.Latency, &r.Stall, &r.Idle} {
		if *p, ok = intOf(cols[6+i]); !ok {
			return raw, []string{"Hit", "Latency", "Stall", "Idle"}[i] + " " + show(cols[6+i]) + " is not an integer"
		}
	}
	if len(cols) > 10 {
		r.Extra = json.RawMessage(compact(cols[10:]))
	}
	if r.IsLabel() {
		r.Kind = RowLabel
		if r.Source != "" {
			r.Kind = RowFunction
		}
	}
	return r, ""
}

func parseFuncmapTable(ix *Index, key string, v any) error {
	rows, ok := v.([]any)
	if !ok {
		return fmt.Errorf("code.json: %q is not an array", key)
	}
	// A malformed row is skipped, as the viewer and upstream's marker
	// correction skip it (python-layer §3.6, §5.11).
	for _, rv := range rows {
		c, ok := rv.([]any)
		if !ok {
			continue
		}
		u := func(i int) uint64 {
			if i >= len(c) {
				ok = false
				return 0
			}
			x, good := uintOf(c[i])
			ok = ok && good
			return x
		}
		s := func(i int) string {
			if i >= len(c) {
				ok = false
				return ""
			}
			if c[i] == nil {
				return ""
			}
			x, good := c[i].(string)
			ok = ok && good
			return x
		}
		switch key {
		case "sqtt_funcmap":
			e := FuncmapEntry{CodeObj: u(0), MarkerID: u(1), Kind: s(2), Name: s(3), Source: s(4), Vaddr: u(5)}
			if !ok {
				continue
			}
			ix.Funcmap = append(ix.Funcmap, e)
		case "sqtt_funcmap_layout":
			e := FuncmapLayout{CodeObj: u(0), Bits: uint32(u(1)), Shift: uint32(u(2))}
			if !ok {
				continue
			}
			ix.FuncmapLayout = append(ix.FuncmapLayout, e)
		default:
			e := FuncmapPayload{CodeObj: u(0), MarkerID: u(1), Count: uint32(u(2))}
			if !ok {
				continue
			}
			ix.FuncmapPayloads = append(ix.FuncmapPayloads, e)
		}
	}
	return nil
}

var defaultKeys = []string{"code", "version", "header", "kernels", "hsaco",
	"sqtt_funcmap", "sqtt_funcmap_layout", "sqtt_funcmap_payloads"}

// CodeDocument returns ix as an ordered code.json document: the keys of the
// document it was read from, in their order (plus "header" when missing),
// or for a fresh index code, version, header, kernels, hsaco and the
// non-empty funcmap tables. Rows carry their counters.
func (ix *Index) CodeDocument() pyjson.Object {
	keys := ix.Doc.Keys
	if len(keys) == 0 {
		keys = defaultKeys
	}
	has := map[string]bool{}
	for _, k := range keys {
		has[k] = true
	}
	if !has["header"] {
		keys = append(keys[:len(keys):len(keys)], "header")
	}
	fresh := len(ix.Doc.Keys) == 0
	doc := pyjson.Object{}
	for _, k := range keys {
		switch k {
		case "code":
			rows := make([]any, 0, len(ix.Rows))
			for i := range ix.Rows {
				rows = append(rows, ix.Rows[i].codeRow())
			}
			doc = append(doc, pyjson.Member{Key: k, Value: rows})
		case "version":
			v := ix.Doc.Version
			if fresh && v == "" {
				v = CodeVersion
			}
			doc = append(doc, pyjson.Member{Key: k, Value: v})
		case "header":
			var v any = CodeHeader
			if ix.Doc.HeaderRaw != nil {
				v = ix.Doc.HeaderRaw
			}
			doc = append(doc, pyjson.Member{Key: k, Value: v})
		case "kernels":
			list := make([]any, 0, len(ix.Kernels))
			for _, kn := range ix.Kernels {
				list = append(list, pyjson.Object{{Key: "address", Value: kn.Address},
					{Key: "codeobj", Value: kn.CodeObj}, {Key: "name", Value: kn.Name},
					{Key: "demangled", Value: kn.Demangled}})
			}
			doc = append(doc, pyjson.Member{Key: k, Value: list})
		case "hsaco":
			list := make([]any, 0, len(ix.Doc.Hsaco))
			for _, s := range ix.Doc.Hsaco {
				list = append(list, s)
			}
			doc = append(doc, pyjson.Member{Key: k, Value: list})
		case "sqtt_funcmap":
			if fresh && len(ix.Funcmap) == 0 {
				continue
			}
			list := make([]any, 0, len(ix.Funcmap))
			for _, f := range ix.Funcmap {
				list = append(list, []any{f.CodeObj, f.MarkerID, f.Kind, f.Name, f.Source, f.Vaddr})
			}
			doc = append(doc, pyjson.Member{Key: k, Value: list})
		case "sqtt_funcmap_layout":
			if fresh && len(ix.FuncmapLayout) == 0 {
				continue
			}
			list := make([]any, 0, len(ix.FuncmapLayout))
			for _, f := range ix.FuncmapLayout {
				list = append(list, []any{f.CodeObj, f.Bits, f.Shift})
			}
			doc = append(doc, pyjson.Member{Key: k, Value: list})
		case "sqtt_funcmap_payloads":
			if fresh && len(ix.FuncmapPayloads) == 0 {
				continue
			}
			list := make([]any, 0, len(ix.FuncmapPayloads))
			for _, f := range ix.FuncmapPayloads {
				list = append(list, []any{f.CodeObj, f.MarkerID, f.Count})
			}
			doc = append(doc, pyjson.Member{Key: k, Value: list})
		default:
			if raw, ok := ix.Doc.Unknown[k]; ok {
				doc = append(doc, pyjson.Member{Key: k, Value: raw})
			}
		}
	}
	return doc
}

func (r *Row) codeRow() any {
	if r.Raw != nil {
		return r.Raw
	}
	var src any = r.Source
	if r.SourceNull {
		src = nil
	}
	row := []any{r.Text, 0, r.Line, src, r.CodeObj, r.Vaddr, r.Hit, r.Latency, r.Stall, r.Idle}
	if r.Extra != nil {
		if v, err := pyjson.Decode(r.Extra); err == nil {
			if extra, ok := v.([]any); ok {
				row = append(row, extra...)
			}
		}
	}
	return row
}

// CodeJSON returns ix as code.json bytes in the byte format of python-layer
// §5.1 (two-space indent, ASCII escapes, no trailing newline).
func (ix *Index) CodeJSON() []byte {
	return pyjson.Marshal(ix.CodeDocument())
}
