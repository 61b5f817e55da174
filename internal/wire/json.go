package wire

import (
	"sort"
	"strconv"
	"unicode/utf8"
)

// objBuilder collects the members of one JSON object and writes them with
// their keys sorted, so that every consumer (jq -c, gojq) prints the same
// key order.
type objBuilder struct {
	keys []string
	vals [][2]int // value spans in scratch
	scr  []byte
}

func (o *objBuilder) reset() {
	o.keys, o.vals, o.scr = o.keys[:0], o.vals[:0], o.scr[:0]
}

func (o *objBuilder) raw(k string, v []byte) {
	s := len(o.scr)
	o.scr = append(o.scr, v...)
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, [2]int{s, len(o.scr)})
}

func (o *objBuilder) uint(k string, v uint64) {
	s := len(o.scr)
	o.scr = strconv.AppendUint(o.scr, v, 10)
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, [2]int{s, len(o.scr)})
}

func (o *objBuilder) int(k string, v int64) {
	s := len(o.scr)
	o.scr = strconv.AppendInt(o.scr, v, 10)
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, [2]int{s, len(o.scr)})
}

func (o *objBuilder) str(k, v string) {
	s := len(o.scr)
	o.scr = AppendJSONString(o.scr, v)
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, [2]int{s, len(o.scr)})
}

// bool writes a bit as 0 or 1.
func (o *objBuilder) bool(k string, v bool) {
	var n uint64
	if v {
		n = 1
	}
	o.uint(k, n)
}

// strOrNull writes a string, or null for a NULL pointer.
func (o *objBuilder) strOrNull(k, v string, null bool) {
	if null {
		o.raw(k, []byte("null"))
		return
	}
	o.str(k, v)
}

// end adds member k whose value was appended to o.scr from offset s on.
func (o *objBuilder) end(k string, s int) {
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, [2]int{s, len(o.scr)})
}

// enum writes a known enum value as its name and an unknown one as a number.
func (o *objBuilder) enum(k, name string) {
	s := len(o.scr)
	o.scr = appendEnum(o.scr, name)
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, [2]int{s, len(o.scr)})
}

func (o *objBuilder) pc(k string, pc PC) {
	s := len(o.scr)
	o.scr = appendPC(o.scr, pc)
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, [2]int{s, len(o.scr)})
}

func appendPC(b []byte, pc PC) []byte {
	b = append(b, `{"address":`...)
	b = strconv.AppendUint(b, pc.Address, 10)
	b = append(b, `,"code_object_id":`...)
	b = strconv.AppendUint(b, pc.CodeObjectID, 10)
	return append(b, '}')
}

func (o *objBuilder) appendTo(dst []byte) []byte {
	idx := make([]int, len(o.keys))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return o.keys[idx[a]] < o.keys[idx[b]] })
	dst = append(dst, '{')
	for n, i := range idx {
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = AppendJSONString(dst, o.keys[i])
		dst = append(dst, ':')
		dst = append(dst, o.scr[o.vals[i][0]:o.vals[i][1]]...)
	}
	return append(dst, '}')
}

const hexDigits = "0123456789abcdef"

// AppendJSONString appends s as a JSON string, as jq writes it: UTF-8
// kept, control characters and DEL as \u00XX (\b \f \n \r \t short),
// invalid bytes as U+FFFD.
func AppendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\f':
				b = append(b, '\\', 'f')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		b = utf8.AppendRune(b, r)
		i += size
	}
	return append(b, '"')
}

func (o *objBuilder) record(dst []byte, h *Header, b *Batch, i int) []byte {
	o.reset()
	o.enum("type", b.Type.String())
	o.int("se", int64(h.Trace.SE))
	o.int("run", int64(h.Trace.Run))
	o.jsonRecord(b, i)
	return o.appendTo(dst)
}

// sub returns the JSON object fill makes, for a nested record.
func (o *objBuilder) sub(fill func(s *objBuilder)) []byte {
	var s objBuilder
	fill(&s)
	return s.appendTo(nil)
}

// appendEnum writes an enum value's String(): a name as a JSON string, the
// number of a value the enum does not know as a number.
func appendEnum(b []byte, name string) []byte {
	if name != "" && (name[0] < '0' || name[0] > '9') && name[0] != '-' {
		return AppendJSONString(b, name)
	}
	return append(b, name...)
}

// A JSONWriter writes the JSON projection of batches, one record per line.
type JSONWriter struct {
	o objBuilder
}

// AppendRecord appends the JSON projection of record i of batch b, decoded
// from a trace with header h, to dst: one object, keys sorted, no newline.
// An unknown batch has one record, its raw bytes. See the package
// documentation for the fields of each record type.
func (j *JSONWriter) AppendRecord(dst []byte, h *Header, b *Batch, i int) []byte {
	return j.o.record(dst, h, b, i)
}

// AppendBatch appends every record of b as a line to dst.
func (j *JSONWriter) AppendBatch(dst []byte, h *Header, b *Batch) []byte {
	n := b.Len()
	if !b.Type.Known() {
		n = 1 // an unknown batch projects as one object carrying its raw bytes
	}
	for i := 0; i < n; i++ {
		dst = j.o.record(dst, h, b, i)
		dst = append(dst, '\n')
	}
	return dst
}
