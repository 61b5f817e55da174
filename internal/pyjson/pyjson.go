// Package pyjson writes JSON byte for byte as Python's json.dumps(obj,
// indent=2) does with its defaults (ensure_ascii on, no trailing newline),
// the format of every file upstream's viewer writer produces (spec:
// python-layer.md §5.1). It also decodes JSON into the same ordered values,
// so a document read from disk can be written back with its key order.
//
// Values: nil, bool, all Go integer types, float64, json.Number (written as
// its literal), string, Object (ordered members), []any and any other slice
// or array (by reflection), and json.RawMessage (decoded, then written in
// this layout). A map[string]V is written with sorted keys.
package pyjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"sort"
	"strconv"
	"unicode/utf8"
)

// An Appender writes its own encoding in this package's layout, for values
// too large to build as a tree first (level is the value's nesting depth).
type Appender interface {
	AppendPyJSON(dst []byte, level int) []byte
}

// AppendList appends a list of n elements between open and end ('[' and
// ']', or '{' and '}') in this package's layout: elem(dst, i) writes element
// i on a line of its own at level+1, and end stands on a line at level; an
// empty list is "[]" or "{}". Appenders use it.
func AppendList(dst []byte, open, end byte, n, level int, elem func(dst []byte, i int) []byte) []byte {
	if n == 0 {
		return append(dst, open, end)
	}
	dst = append(dst, open)
	for i := 0; i < n; i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = newline(dst, level+1)
		dst = elem(dst, i)
	}
	dst = newline(dst, level)
	return append(dst, end)
}

// Member is one key and value of an Object.
type Member struct {
	Key   string
	Value any
}

// Object is a JSON object whose members keep their order.
type Object []Member

// Get returns the value of the first member named key.
func (o Object) Get(key string) (any, bool) {
	for _, m := range o {
		if m.Key == key {
			return m.Value, true
		}
	}
	return nil, false
}

// Set replaces the value of the member named key, or appends it.
func (o *Object) Set(key string, v any) {
	for i := range *o {
		if (*o)[i].Key == key {
			(*o)[i].Value = v
			return
		}
	}
	*o = append(*o, Member{key, v})
}

// Marshal returns the indented encoding of v. It panics on a value of a
// type the package does not write (a programming error, never input).
func Marshal(v any) []byte {
	return Append(nil, v)
}

// Append appends the indented encoding of v to dst.
func Append(dst []byte, v any) []byte {
	return appendValue(dst, v, 0)
}

// AppendAt appends the indented encoding of v as it reads at nesting depth
// level of a document (its inner lines indented from level+1), for writers
// that put the pieces of a large document together themselves.
func AppendAt(dst []byte, v any, level int) []byte {
	return appendValue(dst, v, level)
}

// Encode writes the indented encoding of v to w.
func Encode(w io.Writer, v any) error {
	_, err := w.Write(Marshal(v))
	return err
}

func newline(dst []byte, level int) []byte {
	dst = append(dst, '\n')
	for i := 0; i < level; i++ {
		dst = append(dst, ' ', ' ')
	}
	return dst
}

func appendValue(dst []byte, v any, level int) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case Appender:
		return x.AppendPyJSON(dst, level)
	case bool:
		if x {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case int:
		return strconv.AppendInt(dst, int64(x), 10)
	case int8:
		return strconv.AppendInt(dst, int64(x), 10)
	case int16:
		return strconv.AppendInt(dst, int64(x), 10)
	case int32:
		return strconv.AppendInt(dst, int64(x), 10)
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case uint:
		return strconv.AppendUint(dst, uint64(x), 10)
	case uint8:
		return strconv.AppendUint(dst, uint64(x), 10)
	case uint16:
		return strconv.AppendUint(dst, uint64(x), 10)
	case uint32:
		return strconv.AppendUint(dst, uint64(x), 10)
	case uint64:
		return strconv.AppendUint(dst, x, 10)
	case float64:
		return appendFloat(dst, x)
	case json.Number:
		return append(dst, x...)
	case string:
		return AppendString(dst, x)
	case Object:
		return AppendList(dst, '{', '}', len(x), level, func(dst []byte, i int) []byte {
			dst = AppendString(dst, x[i].Key)
			dst = append(dst, ':', ' ')
			return appendValue(dst, x[i].Value, level+1)
		})
	case []any:
		return AppendList(dst, '[', ']', len(x), level, func(dst []byte, i int) []byte {
			return appendValue(dst, x[i], level+1)
		})
	case []int64:
		return AppendList(dst, '[', ']', len(x), level, func(dst []byte, i int) []byte {
			return strconv.AppendInt(dst, x[i], 10)
		})
	case json.RawMessage:
		val, err := Decode(x)
		if err != nil {
			panic(fmt.Sprintf("pyjson: invalid raw JSON: %v", err))
		}
		return appendValue(dst, val, level)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		// A nil slice is "[]" too: Python has no nil list.
		return AppendList(dst, '[', ']', rv.Len(), level, func(dst []byte, i int) []byte {
			return appendValue(dst, rv.Index(i).Interface(), level+1)
		})
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			break
		}
		keys := make([]string, 0, rv.Len())
		for _, k := range rv.MapKeys() {
			keys = append(keys, k.String())
		}
		sort.Strings(keys)
		obj := make(Object, 0, len(keys))
		for _, k := range keys {
			obj = append(obj, Member{k, rv.MapIndex(reflect.ValueOf(k).Convert(rv.Type().Key())).Interface()})
		}
		return appendValue(dst, obj, level)
	case reflect.Pointer:
		if rv.IsNil() {
			return append(dst, "null"...)
		}
		return appendValue(dst, rv.Elem().Interface(), level)
	}
	panic(fmt.Sprintf("pyjson: cannot encode %T", v))
}

// appendFloat writes a float as Python's repr would for the common cases.
func appendFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !bytes.ContainsAny([]byte(s), ".eEn") {
		s += ".0"
	}
	return append(dst, s...)
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string with Python's ensure_ascii
// escaping: every character outside 0x20..0x7e as \uXXXX (lower-case hex,
// surrogate pairs beyond the BMP), except the short escapes \" \\ \n \r \t
// \b \f. Invalid UTF-8 bytes are written as U+FFFD.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			dst = append(dst, c)
			i++
			continue
		}
		if e := shortEscape(c); e != 0 {
			dst = append(dst, '\\', e)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r >= 0x10000 {
			r -= 0x10000
			dst = appendU(dst, 0xd800+(r>>10))
			dst = appendU(dst, 0xdc00+(r&0x3ff))
			continue
		}
		dst = appendU(dst, r)
	}
	return append(dst, '"')
}

// shortEscape returns the letter of c's two-character escape (\" \\ \n \r
// \t \b \f), or 0 if c has none.
func shortEscape(c byte) byte {
	switch c {
	case '"', '\\':
		return c
	case '\n':
		return 'n'
	case '\r':
		return 'r'
	case '\t':
		return 't'
	case '\b':
		return 'b'
	case '\f':
		return 'f'
	}
	return 0
}

func appendU(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hexDigits[r>>12&15], hexDigits[r>>8&15], hexDigits[r>>4&15], hexDigits[r&15])
}

// Decode parses JSON into ordered values: Object, []any, json.Number,
// string, bool and nil.
func Decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("unexpected data after the top-level value")
	}
	return v, nil
}

const maxDepth = 512

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("JSON nested deeper than %d", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := Object{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key is not a string")
				}
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				obj = append(obj, Member{k, v})
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return obj, nil
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return arr, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	}
	return tok, nil
}
