package wire

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// JSON lines input. A Reader whose input starts with '{' reads the JSON
// projection (att-decode --format json, or jq's output on it) instead of
// msgpack: each line is one record, returned as a batch of one, and a part
// begins at the first line and wherever se or run changes. The projection
// leaves out the size and reserved members, so they read as zero; the
// header of a part carries only se and run.

// jsonState is a Reader's JSON lines state.
type jsonState struct {
	on   bool
	line int    // number of the last line read
	buf  []byte // the line, when it spans bufio's buffer
	held bool   // a batch waits behind the header just returned
}

// scanJSON reads the next line of a JSON lines input.
func (rd *Reader) scanJSON() bool {
	js := &rd.js
	if js.held {
		js.held = false
		rd.kind = KindBatch
		return true
	}
	for {
		line, err := rd.readLine()
		if len(bytes.TrimSpace(line)) == 0 {
			if err == io.EOF {
				return false // rd.sawHdr: the input started with '{'
			}
			if err != nil {
				rd.err = &FormatError{Name: rd.name, Offset: rd.m.off, Line: js.line, Err: err}
				return false
			}
			continue
		}
		if err != nil && err != io.EOF {
			rd.err = &FormatError{Name: rd.name, Offset: rd.m.off, Line: js.line, Err: err}
			return false
		}
		var tr Trace
		if err := parseJSONRecord(line, &tr, &rd.batch); err != nil {
			if !rd.sawHdr { // a JSON document, but not the projection (a code.json?)
				rd.err = &VersionError{Name: rd.name, WantFormat: RecordsFormat, WantMajor: RecordsMajor,
					Detail: fmt.Sprintf("line %d is not a record of its JSON projection: %v", js.line, err)}
				return false
			}
			rd.err = &FormatError{Name: rd.name, Offset: rd.m.off, Line: js.line, Err: err}
			return false
		}
		if !rd.sawHdr || tr.SE != rd.hdr.Trace.SE || tr.Run != rd.hdr.Trace.Run {
			rd.hdr = Header{Format: RecordsFormat, Major: RecordsMajor, Trace: tr}
			rd.sawHdr = true
			rd.part++
			rd.kind = KindHeader
			js.held = true
			return true
		}
		rd.kind = KindBatch
		return true
	}
}

// readLine returns the next line without its newline; err is io.EOF for a
// last line without one (or none at all).
func (rd *Reader) readLine() ([]byte, error) {
	js := &rd.js
	br := rd.m.br
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		js.buf = append(js.buf[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = br.ReadSlice('\n')
			js.buf = append(js.buf, line...)
		}
		line = js.buf
	}
	rd.m.off += int64(len(line))
	if len(line) > 0 {
		js.line++
	}
	return bytes.TrimSuffix(line, []byte{'\n'}), err
}

// parseJSONRecord reads one record of the JSON projection into b (a batch
// of one record) and its se and run into tr.
func parseJSONRecord(line []byte, tr *Trace, b *Batch) error {
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	if m == nil {
		return errors.New("not a JSON object: null")
	}
	if _, err := d.Token(); err != io.EOF {
		return errors.New("more than one JSON value on the line")
	}
	o := jobj{m: m}
	t, err := o.recordType()
	if err != nil {
		return err
	}
	tr.SE = int(o.int("se", 32))
	tr.Run = int(o.int("run", 32))
	b.Reset(t)
	o.jsonBatch(b, t)
	return o.err
}

// jobj reads the members of one decoded JSON object. A missing or null
// member reads as zero; the first bad member is kept in err.
type jobj struct {
	m   map[string]any
	err error
}

func (o *jobj) fail(err error) {
	if o.err == nil && err != nil {
		o.err = err
	}
}

func (o *jobj) failf(format string, args ...any) { o.fail(fmt.Errorf(format, args...)) }

func (o *jobj) recordType() (RecordType, error) {
	switch v := o.m["type"].(type) {
	case string:
		if t, ok := parseRecordType(v); ok {
			return t, nil
		}
		return 0, fmt.Errorf("unknown record type %q", v)
	case json.Number:
		if n, err := strconv.ParseUint(v.String(), 10, 32); err == nil {
			return RecordType(n), nil
		}
		return 0, fmt.Errorf("record type %s is not a 32-bit type id", v)
	case nil:
		return 0, errors.New(`no "type" member`)
	}
	return 0, errors.New(`member "type" is neither a name nor a number`)
}

// number returns member k as a JSON number, ok false when it is missing.
func (o *jobj) number(k string) (json.Number, bool) {
	switch v := o.m[k].(type) {
	case nil:
		return "", false
	case json.Number:
		return v, true
	case bool: // occupancy flags, should jq have made them booleans
		if v {
			return "1", true
		}
		return "0", true
	default:
		o.failf("member %q: %v is not a number", k, v)
		return "", false
	}
}

// uint returns member k, an unsigned integer of at most bits bits.
func (o *jobj) uint(k string, bits int) uint64 {
	n, ok := o.number(k)
	if !ok {
		return 0
	}
	v, err := strconv.ParseUint(n.String(), 10, 64)
	if err != nil || bits < 64 && v >= 1<<bits {
		o.failf("member %q: %s is not an integer of 0 to 2^%d-1", k, n, bits)
		return 0
	}
	return v
}

// int returns member k, a signed integer of at most bits bits.
func (o *jobj) int(k string, bits int) int64 {
	n, ok := o.number(k)
	if !ok {
		return 0
	}
	v, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil || bits < 64 && (v < -1<<(bits-1) || v >= 1<<(bits-1)) {
		o.failf("member %q: %s is not a %d-bit integer", k, n, bits)
		return 0
	}
	return v
}

func (o *jobj) bit(k string) bool { return o.uint(k, 1) != 0 }

// enum returns member k: one of names (its index), or a number of at most
// bits bits.
func (o *jobj) enum(k string, names []string, bits int, signed bool) int64 {
	if s, ok := o.m[k].(string); ok {
		for i, n := range names {
			if n == s {
				return int64(i)
			}
		}
		o.failf("member %q: unknown name %q", k, s)
		return 0
	}
	if signed {
		return o.int(k, bits)
	}
	return int64(o.uint(k, bits))
}

func (o *jobj) object(k string) (jobj, bool) {
	switch v := o.m[k].(type) {
	case nil:
		return jobj{}, false
	case map[string]any:
		return jobj{m: v}, true
	default:
		o.failf("member %q: %v is not an object", k, v)
		return jobj{}, false
	}
}

func (o *jobj) pc(k string) PC {
	sub, ok := o.object(k)
	if !ok {
		return PC{}
	}
	pc := PC{Address: sub.uint("address", 64), CodeObjectID: sub.uint("code_object_id", 64)}
	if sub.err != nil {
		o.failf("member %q: %v", k, sub.err)
	}
	return pc
}

func (o *jobj) strOrNull(k string) (string, bool) {
	switch v := o.m[k].(type) {
	case nil:
		return "", true
	case string:
		return v, false
	default:
		o.failf("member %q: %v is not a string", k, v)
		return "", false
	}
}

// array returns member k as the objects of a JSON array.
func (o *jobj) array(k string) []any {
	switch v := o.m[k].(type) {
	case nil:
		return nil
	case []any:
		return v
	default:
		o.failf("member %q: %v is not an array", k, v)
		return nil
	}
}

// bin returns member k, a base64 string (null or missing: none),
// decoded and appended to dst.
func (o *jobj) bin(k string, dst []byte) []byte {
	s, _ := o.strOrNull(k)
	data, err := base64.StdEncoding.AppendDecode(dst, []byte(s))
	if err != nil {
		o.failf("member %q: %v", k, err)
	}
	return data
}

// jsonElems reads member k, an array of objects, appending an element
// read from each to dst.
func jsonElems[T any](o *jobj, k string, dst []T, read func(*jobj, *T)) []T {
	for i, v := range o.array(k) {
		m, ok := v.(map[string]any)
		if !ok {
			o.failf("member %q: element %d is not an object", k, i)
			return dst
		}
		e := jobj{m: m}
		dst = extend(dst)
		read(&e, &dst[len(dst)-1])
		if e.err != nil {
			o.failf("member %q: element %d: %v", k, i, e.err)
			return dst
		}
	}
	return dst
}
