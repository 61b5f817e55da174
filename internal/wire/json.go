package wire

import (
	"encoding/base64"
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
	switch b.Type {
	case TypeGFXIP:
		o.uint("gfxip", b.GFXIP)
	case TypeRTFrequency:
		o.uint("frequency", b.RTFrequency)
	case TypeInfo:
		o.enum("info", b.Info[i].String())
	case TypeOccupancy:
		r := &b.Occupancy[i]
		o.pc("pc", r.PC)
		o.uint("time", r.Time)
		o.uint("cu", uint64(r.CU))
		o.uint("simd", uint64(r.SIMD))
		o.uint("wave_id", uint64(r.WaveID))
		o.uint("start", b2u(r.Start))
		o.uint("me_id", uint64(r.MEID))
		o.uint("pipe_id", uint64(r.PipeID))
		o.uint("is_ext", b2u(r.IsExt))
		o.uint("workgroup_id", uint64(r.WorkgroupID))
		o.uint("cluster_id", uint64(r.ClusterID))
	case TypePerfEvent:
		o.jsonPerfEvent(&b.PerfEvents[i])
	case TypeWave:
		w := &b.Waves[i]
		o.uint("cu", uint64(w.CU))
		o.uint("simd", uint64(w.SIMD))
		o.uint("wave_id", uint64(w.WaveID))
		o.uint("contexts", uint64(w.Contexts))
		o.uint("dispatcher", uint64(w.Dispatcher))
		o.uint("workgroup_id", uint64(w.WorkgroupID))
		o.uint("cluster_id", uint64(w.ClusterID))
		o.int("begin_time", w.BeginTime)
		o.int("end_time", w.EndTime)
		var tl []byte
		tl = append(tl, '[')
		for k, s := range w.Timeline {
			if k > 0 {
				tl = append(tl, ',')
			}
			tl = append(tl, `{"duration":`...)
			tl = strconv.AppendInt(tl, int64(s.Duration), 10)
			tl = append(tl, `,"type":`...)
			tl = appendEnum(tl, s.Type.String())
			tl = append(tl, '}')
		}
		tl = append(tl, ']')
		o.raw("timeline", tl)
		ins := make([]byte, 0, 96*len(w.Instructions)+2)
		ins = append(ins, '[')
		for k := range w.Instructions {
			in := &w.Instructions[k]
			if k > 0 {
				ins = append(ins, ',')
			}
			ins = append(ins, `{"category":`...)
			ins = appendEnum(ins, in.Category.String())
			ins = append(ins, `,"duration":`...)
			ins = strconv.AppendInt(ins, int64(in.Duration), 10)
			ins = append(ins, `,"pc":`...)
			ins = appendPC(ins, in.PC)
			ins = append(ins, `,"stall":`...)
			ins = strconv.AppendUint(ins, uint64(in.Stall), 10)
			ins = append(ins, `,"time":`...)
			ins = strconv.AppendInt(ins, in.Time, 10)
			ins = append(ins, '}')
		}
		ins = append(ins, ']')
		o.raw("instructions", ins)
	case TypeEvent:
		o.jsonEvent(&b.Events[i])
	case TypeShaderData:
		o.jsonShaderData(&b.ShaderData[i])
	case TypeRealtime:
		o.jsonRealtime(&b.Realtime[i])
	case TypeInstOtherSIMD:
		o.jsonOtherSIMD(&b.OtherSIMD[i])
	case TypeDispatch:
		o.jsonDispatch(&b.Dispatches[i])
	case TypeMarker:
		o.jsonMarker(&b.Markers[i])
	default:
		o.uint("count", b.Raw.Count)
		o.uint("elem_size", b.Raw.ElemSize)
		o.str("data", base64.StdEncoding.EncodeToString(b.Raw.Data))
	}
	return o.appendTo(dst)
}

func (o *objBuilder) shaderDataObject(r *ShaderData) []byte {
	o.reset()
	o.jsonShaderData(r)
	return o.appendTo(nil)
}

// appendEnum writes an enum value's String(): a name as a JSON string, the
// number of a value the enum does not know as a number.
func appendEnum(b []byte, name string) []byte {
	if name != "" && (name[0] < '0' || name[0] > '9') && name[0] != '-' {
		return AppendJSONString(b, name)
	}
	return append(b, name...)
}

func b2u(v bool) uint64 {
	if v {
		return 1
	}
	return 0
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
