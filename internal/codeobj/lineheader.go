package codeobj

import (
	"encoding/binary"
	"errors"
	"strings"

	"github.com/attkit/attkit/internal/pypath"
)

// rawSections are the DWARF sections the line-program header reader needs.
type rawSections struct {
	line, lineStr, str []byte
	order              binary.ByteOrder
}

// A lineHeader is the file part of a line-program header, read raw because
// debug/dwarf only exposes joined paths (python-layer §3.5 wants its own
// joining rules).
type lineHeader struct {
	version int
	dirs    []string // as listed: DWARF 5 includes entry 0 (the compilation directory)
	files   []rawFile
}

type rawFile struct {
	name string
	dir  uint64
	ok   bool // a real entry (DWARF <= 4 leaves slot 0 empty)
}

var (
	errLineHeader = errors.New("malformed line program header")
	// errLineForm: a well-formed header whose file names use a form this
	// reader does not resolve (strx): debug/dwarf's names are used.
	errLineForm = errors.New("unsupported form in line program header")
)

type byteReader struct {
	b     []byte
	off   int
	order binary.ByteOrder
	err   error
}

func (r *byteReader) need(n int) bool {
	if r.err != nil || n < 0 || r.off+n > len(r.b) || r.off+n < r.off {
		r.err = errLineHeader
		return false
	}
	return true
}

func (r *byteReader) u8() uint64 {
	if !r.need(1) {
		return 0
	}
	r.off++
	return uint64(r.b[r.off-1])
}

func (r *byteReader) u16() uint64 {
	if !r.need(2) {
		return 0
	}
	r.off += 2
	return uint64(r.order.Uint16(r.b[r.off-2:]))
}

func (r *byteReader) u32() uint64 {
	if !r.need(4) {
		return 0
	}
	r.off += 4
	return uint64(r.order.Uint32(r.b[r.off-4:]))
}

func (r *byteReader) u64() uint64 {
	if !r.need(8) {
		return 0
	}
	r.off += 8
	return r.order.Uint64(r.b[r.off-8:])
}

func (r *byteReader) skip(n uint64) {
	if n > uint64(len(r.b)) || !r.need(int(n)) {
		r.err = errLineHeader
		return
	}
	r.off += int(n)
}

func (r *byteReader) uleb() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		c := r.u8()
		if r.err != nil {
			return 0
		}
		if shift < 64 {
			v |= (c & 0x7f) << shift
		}
		if c&0x80 == 0 {
			return v
		}
	}
}

func (r *byteReader) cstr() string {
	if r.err != nil {
		return ""
	}
	i := r.off
	for i < len(r.b) && r.b[i] != 0 {
		i++
	}
	if i >= len(r.b) {
		r.err = errLineHeader
		return ""
	}
	s := string(r.b[r.off:i])
	r.off = i + 1
	return s
}

func cstrAt(b []byte, off uint64) (string, bool) {
	if off >= uint64(len(b)) {
		return "", false
	}
	end := off
	for end < uint64(len(b)) && b[end] != 0 {
		end++
	}
	return string(b[off:end]), true
}

// DWARF forms used in DWARF 5 directory and file entry formats.
const (
	formBlock2   = 0x03
	formBlock4   = 0x04
	formData2    = 0x05
	formData4    = 0x06
	formData8    = 0x07
	formString   = 0x08
	formBlock    = 0x09
	formBlock1   = 0x0a
	formData1    = 0x0b
	formUdata    = 0x0f
	formStrp     = 0x0e
	formData16   = 0x1e
	formLineStrp = 0x1f

	lnctPath           = 1
	lnctDirectoryIndex = 2
)

// header reads the line-program header at offset off of .debug_line.
func (s *rawSections) header(off int64) (*lineHeader, error) {
	if off < 0 || off >= int64(len(s.line)) {
		return nil, errLineHeader
	}
	r := &byteReader{b: s.line, off: int(off), order: s.order}
	dwarf64 := false
	length := r.u32()
	if length == 0xffffffff {
		dwarf64 = true
		length = r.u64()
	}
	if r.err != nil || length > uint64(len(s.line)-r.off) {
		return nil, errLineHeader
	}
	r.b = r.b[:r.off+int(length)]
	h := &lineHeader{version: int(r.u16())}
	if h.version < 2 || h.version > 5 {
		return nil, errLineHeader
	}
	if h.version >= 5 {
		r.u8() // address_size
		r.u8() // segment_selector_size
	}
	if dwarf64 {
		r.u64()
	} else {
		r.u32()
	}
	r.u8() // minimum_instruction_length
	if h.version >= 4 {
		r.u8() // maximum_operations_per_instruction
	}
	r.u8() // default_is_stmt
	r.u8() // line_base
	r.u8() // line_range
	opBase := r.u8()
	if opBase > 0 {
		r.skip(opBase - 1)
	}
	if r.err != nil {
		return nil, r.err
	}
	if h.version < 5 {
		for {
			d := r.cstr()
			if r.err != nil {
				return nil, r.err
			}
			if d == "" {
				break
			}
			h.dirs = append(h.dirs, d)
		}
		h.files = append(h.files, rawFile{}) // files are numbered from 1
		for {
			name := r.cstr()
			if r.err != nil {
				return nil, r.err
			}
			if name == "" {
				break
			}
			f := rawFile{name: name, dir: r.uleb(), ok: true}
			r.uleb() // mtime
			r.uleb() // length
			h.files = append(h.files, f)
		}
		return h, r.err
	}
	read := func(each func(path string, dir uint64)) error {
		type pair struct{ lnct, form uint64 }
		n := r.u8()
		format := make([]pair, 0, n)
		for i := uint64(0); i < n; i++ {
			format = append(format, pair{r.uleb(), r.uleb()})
		}
		count := r.uleb()
		if r.err != nil {
			return r.err
		}
		if count > uint64(len(r.b)) {
			return errLineHeader
		}
		for i := uint64(0); i < count; i++ {
			var path string
			var dir uint64
			for _, p := range format {
				var val uint64
				var str string
				switch p.form {
				case formString:
					str = r.cstr()
				case formLineStrp, formStrp:
					var o uint64
					if dwarf64 {
						o = r.u64()
					} else {
						o = r.u32()
					}
					sec := s.lineStr
					if p.form == formStrp {
						sec = s.str
					}
					v, ok := cstrAt(sec, o)
					if !ok {
						return errLineHeader
					}
					str = v
				case formUdata:
					val = r.uleb()
				case formData1:
					val = r.u8()
				case formData2:
					val = r.u16()
				case formData4:
					val = r.u32()
				case formData8:
					val = r.u64()
				case formData16:
					r.skip(16)
				case formBlock:
					r.skip(r.uleb())
				case formBlock1:
					r.skip(r.u8())
				case formBlock2:
					r.skip(r.u16())
				case formBlock4:
					r.skip(r.u32())
				default:
					// strx and others: not resolvable here.
					return errLineForm
				}
				switch p.lnct {
				case lnctPath:
					path = str
				case lnctDirectoryIndex:
					dir = val
				}
			}
			if r.err != nil {
				return r.err
			}
			each(path, dir)
		}
		return nil
	}
	if err := read(func(p string, _ uint64) { h.dirs = append(h.dirs, p) }); err != nil {
		return nil, err
	}
	if err := read(func(p string, d uint64) { h.files = append(h.files, rawFile{name: p, dir: d, ok: true}) }); err != nil {
		return nil, err
	}
	return h, nil
}

// resolve returns the path of file number idx by the rules of §3.5.
func (h *lineHeader) resolve(idx int) (string, bool) {
	if idx < 0 || idx >= len(h.files) || !h.files[idx].ok {
		return "", false
	}
	f := h.files[idx]
	dir, found := "", false
	if h.version >= 5 {
		if f.dir < uint64(len(h.dirs)) {
			dir, found = h.dirs[f.dir], true
		}
	} else if f.dir > 0 && f.dir-1 < uint64(len(h.dirs)) {
		dir, found = h.dirs[f.dir-1], true
	}
	name := f.name
	if found {
		name = joinPath(dir, name)
	}
	return pypath.Normpath(name), true
}

// joinPath joins like Python's posixpath.join(a, b): an absolute b wins.
func joinPath(a, b string) string {
	if strings.HasPrefix(b, "/") || a == "" {
		return b
	}
	if strings.HasSuffix(a, "/") {
		return a + b
	}
	return a + "/" + b
}
