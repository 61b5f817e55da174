package wire

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
)

// This file holds the hand-written msgpack primitives of the record stream.
// The record stream is the bulk of every pipeline (millions of instructions),
// so it is encoded with append-style helpers and decoded by a reader that
// tracks its byte offset; msgpack/v5 serves the small header maps.

// appendUint, appendInt, appendU32 and appendI32 write a small value
// themselves, so that the compiler inlines them (most fields of most
// records are small: an instruction's category, stall, duration and code
// object), and call on for a larger one.
func appendUint(b []byte, v uint64) []byte {
	if v <= 0x7f {
		return append(b, byte(v))
	}
	return appendUintLong(b, v)
}

func appendUintLong(b []byte, v uint64) []byte {
	switch {
	case v <= math.MaxUint8:
		return append(b, 0xcc, byte(v))
	case v <= math.MaxUint16:
		return append(b, 0xcd, byte(v>>8), byte(v))
	case v <= math.MaxUint32:
		return append(b, 0xce, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return append(b, 0xcf, byte(v>>56), byte(v>>48), byte(v>>40), byte(v>>32),
		byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

func appendInt(b []byte, v int64) []byte {
	if v >= 0 && v <= 0x7f {
		return append(b, byte(v))
	}
	return appendIntLong(b, v)
}

func appendIntLong(b []byte, v int64) []byte {
	switch {
	case v >= 0:
		return appendUintLong(b, uint64(v))
	case v >= -32:
		return append(b, byte(v))
	case v >= math.MinInt8:
		return append(b, 0xd0, byte(v))
	case v >= math.MinInt16:
		return append(b, 0xd1, byte(v>>8), byte(v))
	case v >= math.MinInt32:
		return append(b, 0xd2, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return append(b, 0xd3, byte(v>>56), byte(v>>48), byte(v>>40), byte(v>>32),
		byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// appendU8, appendU16, appendU32 and appendI32 write a value of a narrow
// field as appendUint and appendInt do, minus the ranges it cannot reach.
// appendU8 and appendU16 are small enough to be inlined whole.
func appendU8(b []byte, v uint8) []byte {
	if v <= 0x7f {
		return append(b, v)
	}
	return append(b, 0xcc, v)
}

func appendU16(b []byte, v uint16) []byte {
	switch {
	case v <= 0x7f:
		return append(b, byte(v))
	case v <= math.MaxUint8:
		return append(b, 0xcc, byte(v))
	}
	return append(b, 0xcd, byte(v>>8), byte(v))
}

func appendU32(b []byte, v uint32) []byte {
	if v <= 0x7f {
		return append(b, byte(v))
	}
	return appendU32Long(b, v)
}

func appendU32Long(b []byte, v uint32) []byte {
	switch {
	case v <= math.MaxUint8:
		return append(b, 0xcc, byte(v))
	case v <= math.MaxUint16:
		return append(b, 0xcd, byte(v>>8), byte(v))
	}
	return append(b, 0xce, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

func appendI32(b []byte, v int32) []byte {
	if v >= 0 && v <= 0x7f {
		return append(b, byte(v))
	}
	return appendI32Long(b, v)
}

func appendI32Long(b []byte, v int32) []byte {
	switch {
	case v >= 0:
		return appendU32Long(b, uint32(v))
	case v >= -32:
		return append(b, byte(v))
	case v >= math.MinInt8:
		return append(b, 0xd0, byte(v))
	case v >= math.MinInt16:
		return append(b, 0xd1, byte(v>>8), byte(v))
	}
	return append(b, 0xd2, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

func appendArrayLen(b []byte, n int) []byte {
	switch {
	case n <= 15:
		return append(b, 0x90|byte(n))
	case n <= math.MaxUint16:
		return append(b, 0xdc, byte(n>>8), byte(n))
	}
	return append(b, 0xdd, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

func appendMapLen(b []byte, n int) []byte {
	switch {
	case n <= 15:
		return append(b, 0x80|byte(n))
	case n <= math.MaxUint16:
		return append(b, 0xde, byte(n>>8), byte(n))
	}
	return append(b, 0xdf, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

func appendString(b []byte, s string) []byte {
	n := len(s)
	switch {
	case n <= 31:
		b = append(b, 0xa0|byte(n))
	case n <= math.MaxUint8:
		b = append(b, 0xd9, byte(n))
	case n <= math.MaxUint16:
		b = append(b, 0xda, byte(n>>8), byte(n))
	default:
		b = append(b, 0xdb, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(b, s...)
}

func appendBin(b []byte, p []byte) []byte {
	n := len(p)
	switch {
	case n <= math.MaxUint8:
		b = append(b, 0xc4, byte(n))
	case n <= math.MaxUint16:
		b = append(b, 0xc5, byte(n>>8), byte(n))
	default:
		b = append(b, 0xc6, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(b, p...)
}

// errShort marks input that ended inside a value.
var errShort = errors.New("unexpected end of stream")

// Limits on what garbage input can make the reader allocate.
const (
	maxString = 1 << 20
	maxBin    = 1 << 28
	maxDepth  = 64
)

// mpReader decodes msgpack primitives and counts the bytes it consumed.
type mpReader struct {
	br  *bufio.Reader
	off int64
	err error // first error; every later call returns zero values
	buf []byte
}

func (m *mpReader) fail(err error) {
	if m.err == nil {
		m.err = err
	}
}

func (m *mpReader) failf(format string, args ...any) {
	m.fail(fmt.Errorf(format, args...))
}

func (m *mpReader) byte1() byte {
	if m.err != nil {
		return 0
	}
	c, err := m.br.ReadByte()
	if err != nil {
		if err == io.EOF {
			err = errShort
		}
		m.fail(err)
		return 0
	}
	m.off++
	return c
}

func (m *mpReader) bytesN(n int) []byte {
	if m.err != nil {
		return nil
	}
	if n <= m.br.Size() {
		p, err := m.br.Peek(n)
		if err != nil {
			if err == io.EOF {
				err = errShort
			}
			m.fail(err)
			return nil
		}
		m.br.Discard(n)
		m.off += int64(n)
		return p
	}
	m.buf = m.buf[:0]
	for len(m.buf) < n && m.err == nil {
		chunk := min(n-len(m.buf), m.br.Size())
		p := m.bytesN(chunk)
		m.buf = append(m.buf, p...)
	}
	return m.buf
}

func be(p []byte) uint64 {
	var v uint64
	for _, c := range p {
		v = v<<8 | uint64(c)
	}
	return v
}

// uint reads an integer that must be non-negative.
func (m *mpReader) uint() uint64 {
	c := m.byte1()
	switch {
	case c <= 0x7f:
		return uint64(c)
	case c == 0xcc:
		return uint64(m.byte1())
	case c == 0xcd:
		return be(m.bytesN(2))
	case c == 0xce:
		return be(m.bytesN(4))
	case c == 0xcf:
		return be(m.bytesN(8))
	case c >= 0xd0 && c <= 0xd3:
		m.off--
		m.br.UnreadByte()
		v := m.int()
		if v < 0 {
			m.failf("negative integer %d where unsigned expected", v)
			return 0
		}
		return uint64(v)
	}
	if m.err == nil {
		m.failf("expected unsigned integer, found byte 0x%02x", c)
	}
	return 0
}

// int reads a signed integer; a uint64 above MaxInt64 is an error, as it
// would not encode back to the same bytes.
func (m *mpReader) int() int64 {
	c := m.byte1()
	switch {
	case c <= 0x7f:
		return int64(c)
	case c >= 0xe0:
		return int64(int8(c))
	case c == 0xd0:
		return int64(int8(m.byte1()))
	case c == 0xd1:
		return int64(int16(be(m.bytesN(2))))
	case c == 0xd2:
		return int64(int32(be(m.bytesN(4))))
	case c == 0xd3:
		return int64(be(m.bytesN(8)))
	case c >= 0xcc && c <= 0xcf:
		m.off--
		m.br.UnreadByte()
		v := m.uint()
		if v > math.MaxInt64 {
			m.failf("integer %d does not fit int64", v)
			return 0
		}
		return int64(v)
	}
	if m.err == nil {
		m.failf("expected integer, found byte 0x%02x", c)
	}
	return 0
}

// field wraps an error met while reading field of record rec, a value that
// starts at byte offset off, so that it names all three.
func (m *mpReader) field(rec, field string, off int64, before error) {
	if before == nil && m.err != nil {
		m.err = &FieldError{Record: rec, Field: field, Offset: off, Err: m.err}
	}
}

// un reads field of record rec, an unsigned integer of bits bits (8, 16,
// 32 or 64): a value that does not fit is an error, never truncated, so
// that what is read encodes back to the bytes it came from.
func (m *mpReader) un(rec, field string, bits uint) uint64 {
	off, before := m.off, m.err
	v := m.uint()
	if m.err == nil && bits < 64 && v>>bits != 0 {
		m.failf("%d does not fit uint%d", v, bits)
		v = 0
	}
	m.field(rec, field, off, before)
	return v
}

// in reads field of record rec, a signed integer of bits bits.
func (m *mpReader) in(rec, field string, bits uint) int64 {
	off, before := m.off, m.err
	v := m.int()
	if m.err == nil && bits < 64 {
		if lim := int64(1) << (bits - 1); v < -lim || v >= lim {
			m.failf("%d does not fit int%d", v, bits)
			v = 0
		}
	}
	m.field(rec, field, off, before)
	return v
}

// A FieldError is a record field the reader could not take: a value that
// does not fit the field's width, of the wrong kind, or cut short. Offset
// is where the value starts in the stream.
type FieldError struct {
	Record string // the record type ("occupancy") or array ("wave instruction")
	Field  string // the field's name in docs/wire.md ("cu")
	Offset int64
	Err    error
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s record, field %s (value at byte offset %d): %v", e.Record, e.Field, e.Offset, e.Err)
}

func (e *FieldError) Unwrap() error { return e.Err }

// arrayLen reads an array header.
func (m *mpReader) arrayLen() int {
	c := m.byte1()
	switch {
	case c >= 0x90 && c <= 0x9f:
		return int(c & 0x0f)
	case c == 0xdc:
		return int(be(m.bytesN(2)))
	case c == 0xdd:
		return int(be(m.bytesN(4)))
	}
	if m.err == nil {
		m.failf("expected array, found byte 0x%02x", c)
	}
	return 0
}

// wantArray reads an array header and checks its length.
func (m *mpReader) wantArray(what string, n int) bool {
	got := m.arrayLen()
	if m.err == nil && got != n {
		m.failf("%s: expected %d fields, found %d", what, n, got)
	}
	return m.err == nil
}

func (m *mpReader) strLen(c byte) (int, bool) {
	switch {
	case c >= 0xa0 && c <= 0xbf:
		return int(c & 0x1f), true
	case c == 0xd9:
		return int(m.byte1()), true
	case c == 0xda:
		return int(be(m.bytesN(2))), true
	case c == 0xdb:
		return int(be(m.bytesN(4))), true
	}
	return 0, false
}

// strOrNil reads a string or nil; null reports a nil.
func (m *mpReader) strOrNil() (s string, null bool) {
	c := m.byte1()
	if c == 0xc0 {
		return "", true
	}
	n, ok := m.strLen(c)
	if !ok {
		if m.err == nil {
			m.failf("expected string, found byte 0x%02x", c)
		}
		return "", false
	}
	if n > maxString {
		m.failf("string of %d bytes is over the limit of %d", n, maxString)
		return "", false
	}
	return string(m.bytesN(n)), false
}

func (m *mpReader) str() string {
	s, null := m.strOrNil()
	if null {
		m.failf("expected string, found nil")
	}
	return s
}

// bin reads a bin value (or nil, as an empty slice) and appends it to dst.
func (m *mpReader) bin(dst []byte) []byte {
	c := m.byte1()
	var n int
	switch c {
	case 0xc0:
		return dst
	case 0xc4:
		n = int(m.byte1())
	case 0xc5:
		n = int(be(m.bytesN(2)))
	case 0xc6:
		n = int(be(m.bytesN(4)))
	default:
		if m.err == nil {
			m.failf("expected bin, found byte 0x%02x", c)
		}
		return dst
	}
	if n > maxBin {
		m.failf("bin of %d bytes is over the limit of %d", n, maxBin)
		return dst
	}
	return append(dst, m.bytesN(n)...)
}

// any decodes a generic value: nil, bool, int64, uint64, float64, string,
// []byte, []any or map[string]any.
func (m *mpReader) any(depth int) any {
	if depth > maxDepth {
		m.failf("values nested deeper than %d", maxDepth)
		return nil
	}
	c := m.byte1()
	if m.err != nil {
		return nil
	}
	switch {
	case c <= 0x7f:
		return int64(c)
	case c >= 0xe0:
		return int64(int8(c))
	case c >= 0x80 && c <= 0x8f, c == 0xde, c == 0xdf:
		n := 0
		switch c {
		case 0xde:
			n = int(be(m.bytesN(2)))
		case 0xdf:
			n = int(be(m.bytesN(4)))
		default:
			n = int(c & 0x0f)
		}
		out := map[string]any{}
		for i := 0; i < n && m.err == nil; i++ {
			k, ok := m.any(depth + 1).(string)
			if !ok && m.err == nil {
				m.failf("map key is not a string")
			}
			out[k] = m.any(depth + 1)
		}
		return out
	case c >= 0x90 && c <= 0x9f, c == 0xdc, c == 0xdd:
		m.off--
		m.br.UnreadByte()
		n := m.arrayLen()
		var out []any
		for i := 0; i < n && m.err == nil; i++ {
			out = append(out, m.any(depth+1))
		}
		return out
	case c >= 0xa0 && c <= 0xbf, c >= 0xd9 && c <= 0xdb:
		m.off--
		m.br.UnreadByte()
		return m.str()
	case c == 0xc0:
		return nil
	case c == 0xc2:
		return false
	case c == 0xc3:
		return true
	case c >= 0xc4 && c <= 0xc6:
		m.off--
		m.br.UnreadByte()
		return m.bin(nil)
	case c == 0xca:
		return float64(math.Float32frombits(uint32(be(m.bytesN(4)))))
	case c == 0xcb:
		return math.Float64frombits(be(m.bytesN(8)))
	case c >= 0xcc && c <= 0xcf:
		m.off--
		m.br.UnreadByte()
		return m.uint()
	case c >= 0xd0 && c <= 0xd3:
		m.off--
		m.br.UnreadByte()
		return m.int()
	}
	m.failf("unsupported msgpack type byte 0x%02x", c)
	return nil
}

// fitsU reports whether x, decoded by decodeIntAt, fits an unsigned
// field of bits bits; a value that does not is left to the byte-wise
// path, which reports it.
func fitsU(x uint64, neg bool, bits uint) bool {
	return !neg && (bits == 64 || x>>bits == 0)
}

// fitsI reports whether x, decoded by decodeIntAt (negative: the bits of
// an int64), fits a signed field of bits bits.
func fitsI(x uint64, neg bool, bits uint) bool {
	if bits == 64 {
		return neg || x <= math.MaxInt64
	}
	lim := int64(1) << (bits - 1)
	return neg && int64(x) >= -lim || !neg && x < uint64(lim)
}

// extend returns s one element longer, reusing its capacity (and the
// slices an element already holds there).
func extend[T any](s []T) []T {
	if len(s) < cap(s) {
		return s[:len(s)+1]
	}
	var zero T
	return append(s, zero)
}

// decodeIntAt decodes one msgpack integer at the start of p: its value (as
// the bits of an int64 when negative), its length (0 when p does not hold a
// whole integer) and whether it is negative.
func decodeIntAt(p []byte) (v uint64, n int, neg bool) {
	if len(p) == 0 {
		return 0, 0, false
	}
	c := p[0]
	switch {
	case c <= 0x7f:
		return uint64(c), 1, false
	case c >= 0xe0:
		return uint64(int64(int8(c))), 1, true
	}
	var size int
	switch c {
	case 0xcc, 0xd0:
		size = 1
	case 0xcd, 0xd1:
		size = 2
	case 0xce, 0xd2:
		size = 4
	case 0xcf, 0xd3:
		size = 8
	default:
		return 0, 0, false
	}
	if len(p) < 1+size {
		return 0, 0, false
	}
	x := be(p[1 : 1+size])
	if c >= 0xd0 {
		shift := 64 - 8*uint(size)
		s := int64(x<<shift) >> shift
		return uint64(s), 1 + size, s < 0
	}
	return x, 1 + size, false
}
