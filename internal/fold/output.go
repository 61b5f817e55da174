package fold

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/attkit/attkit/internal/wire"
)

// CSVHeader is the header row of the stats CSV (§4.3).
var CSVHeader = []string{"CodeObj", "Vaddr", "Instruction", "Hitcount", "Latency", "Stall", "Idle", "Source"}

// WriteCSV writes the stats CSV (§4.3) in the bytes Python's csv module
// writes: CRLF line ends, a field quoted only when it holds a comma, a
// quote, CR or LF. Rows: every label and instruction row of the index in
// order (instruction rows with the counters of their PC), then every PC the
// index lacks, sorted by code object id and address.
func (f *Fold) WriteCSV(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var buf []byte
	buf = appendCSVRow(buf, CSVHeader...)
	row := func(codeobj, vaddr uint64, text string, hit, lat, stall, idle int64, source string) {
		buf = appendCSVField(buf, strconv.FormatUint(codeobj, 10), ',')
		buf = appendCSVField(buf, strconv.FormatUint(vaddr, 10), ',')
		buf = appendCSVField(buf, text, ',')
		buf = strconv.AppendInt(buf, hit, 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, lat, 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, stall, 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, idle, 10)
		buf = append(buf, ',')
		buf = appendCSVField(buf, source, '\r')
		buf = append(buf, '\n')
	}
	if f.ix != nil {
		for i := range f.ix.Rows {
			r := &f.ix.Rows[i]
			if r.Raw != nil {
				continue
			}
			if r.IsLabel() {
				row(r.CodeObj, r.Vaddr, r.Text, 0, 0, 0, 0, r.Source)
			} else if e := f.byPC[r.PC()]; e != nil {
				row(e.PC.CodeObjectID, e.PC.Address, e.Text, e.Hit, e.Latency, e.Stall, e.Idle, e.Source)
			}
			if len(buf) > 32<<10 {
				if _, err := bw.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
	}
	var rest []*Entry
	for _, e := range f.entries {
		if !e.InIndex {
			rest = append(rest, e)
		}
	}
	for _, e := range sortedByPC(rest) {
		row(e.PC.CodeObjectID, e.PC.Address, e.Text, e.Hit, e.Latency, e.Stall, e.Idle, e.Source)
	}
	if _, err := bw.Write(buf); err != nil {
		return err
	}
	return bw.Flush()
}

// AppendCSVRow appends one CSV row in the stats CSV's bytes (Python's csv
// "excel" dialect: minimal quoting, CRLF), for the other CSV layouts of
// the tools (att-stats --format hidden.csv).
func AppendCSVRow(dst []byte, fields ...string) []byte { return appendCSVRow(dst, fields...) }

func appendCSVRow(dst []byte, fields ...string) []byte {
	for i, s := range fields {
		sep := byte(',')
		if i == len(fields)-1 {
			sep = '\r'
		}
		dst = appendCSVField(dst, s, sep)
	}
	return append(dst, '\n')
}

// appendCSVField appends s, quoted the way Python's csv "excel" dialect
// quotes (QUOTE_MINIMAL), and then sep.
func appendCSVField(dst []byte, s string, sep byte) []byte {
	if strings.ContainsAny(s, ",\"\r\n") {
		dst = append(dst, '"')
		for i := 0; i < len(s); i++ {
			if s[i] == '"' {
				dst = append(dst, '"')
			}
			dst = append(dst, s[i])
		}
		dst = append(dst, '"')
	} else {
		dst = append(dst, s...)
	}
	return append(dst, sep)
}

// CodeIndex returns a copy of the index whose instruction rows carry the
// fold's counters, followed by one row per PC the index lacks, in line
// order (§4.5). Label rows and rows not of the ten-column form are copied
// unchanged, and so is everything else the index holds. With no index the
// document is {"code": [...], "header": ...}, as CodeIndex([]) writes.
func (f *Fold) CodeIndex() *wire.Index {
	var ix wire.Index
	if f.ix != nil {
		ix = *f.ix
	} else {
		ix.Doc.Keys = []string{"code", "header"}
	}
	rest := f.newEntries()
	ix.Rows = make([]wire.Row, 0, len(ix.Rows)+len(rest))
	if f.ix != nil {
		for i := range f.ix.Rows {
			r := f.ix.Rows[i]
			if r.Raw == nil && !r.IsLabel() {
				if e := f.byPC[r.PC()]; e != nil {
					r.Hit, r.Latency, r.Stall, r.Idle = e.Hit, e.Latency, e.Stall, e.Idle
				}
			}
			ix.Rows = append(ix.Rows, r)
		}
	}
	for _, e := range rest {
		ix.Rows = append(ix.Rows, wire.Row{
			Kind: wire.RowInstruction, CodeObj: e.PC.CodeObjectID, Vaddr: e.PC.Address,
			Text: e.Text, Source: e.Source, Line: e.Line,
			Hit: e.Hit, Latency: e.Latency, Stall: e.Stall, Idle: e.Idle,
		})
	}
	return &ix
}

// CodeJSON returns the viewer's code.json with the fold's counters (§4.5)
// in the byte format of §5.1, without a trailing newline.
func (f *Fold) CodeJSON() []byte { return f.CodeIndex().CodeJSON() }

// Ordered returns each entry once in the order of the stats CSV: the
// index's instruction rows in document order, then the PCs the index lacks
// by code object id and address.
func (f *Fold) Ordered() []*Entry {
	out := make([]*Entry, 0, len(f.entries))
	seen := make(map[*Entry]bool, len(f.entries))
	var rest []*Entry
	if f.ix != nil {
		for i := range f.ix.Rows {
			r := &f.ix.Rows[i]
			if r.Raw != nil || r.IsLabel() {
				continue
			}
			if e := f.byPC[r.PC()]; e != nil && !seen[e] {
				seen[e] = true
				out = append(out, e)
			}
		}
	}
	for _, e := range f.entries {
		if !seen[e] {
			rest = append(rest, e)
		}
	}
	return append(out, sortedByPC(rest)...)
}
