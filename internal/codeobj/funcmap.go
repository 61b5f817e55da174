package codeobj

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// A Funcmap is the parsed .sqtt_funcmap section of one code object
// (python-layer §3.6).
type Funcmap struct {
	// Bits and Shift are the accepted shader clock layout; Bits 0 is the
	// legacy layout.
	Bits, Shift uint32
	Entries     []FuncmapEntry
	// Payloads maps a marker id to its extra payload count.
	Payloads map[uint32]uint32
}

// A FuncmapEntry is one K, F, U or P row.
type FuncmapEntry struct {
	Kind     byte // 'K', 'F', 'U' or 'P'
	MarkerID uint32
	Name     string
	Source   string
}

// Packed reports whether the section declared a packed layout (bits != 0),
// the only case in which its tables go into code.json.
func (m *Funcmap) Packed() bool { return m != nil && m.Bits != 0 }

// ParseFuncmap parses a .sqtt_funcmap section. It never fails: malformed
// rows are ignored.
func ParseFuncmap(data []byte) *Funcmap {
	m := &Funcmap{Payloads: map[uint32]uint32{}}
	text := strings.ToValidUTF8(string(data), string(utf8.RuneError))
	lines := strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == 0 })
	for _, line := range lines {
		line = strings.TrimRight(line, "\r \t")
		if len(line) < 2 || line[1] != ':' {
			continue
		}
		kind, body := line[0], line[2:]
		switch kind {
		case 'M':
			m.parseLayout(body)
		case 'R':
			id, attrs, ok := strings.Cut(body, ":")
			mid, okID := parseU32(id)
			if !ok || !okID {
				continue
			}
			for _, a := range strings.Split(attrs, ";") {
				k, v, ok := strings.Cut(a, "=")
				if ok && k == "extra_payload_count" {
					if n, ok := parseU32(v); ok {
						m.Payloads[mid] = n
					}
				}
			}
		case 'K':
			name, src, _ := strings.Cut(body, "@")
			if name != "" {
				m.Entries = append(m.Entries, FuncmapEntry{Kind: 'K', Name: name, Source: src})
			}
		case 'F', 'U', 'P':
			id, rest, ok := strings.Cut(body, ":")
			mid, okID := parseU32(id)
			if !ok || !okID {
				continue
			}
			name, src, _ := strings.Cut(rest, "@")
			if name != "" {
				m.Entries = append(m.Entries, FuncmapEntry{Kind: kind, MarkerID: mid, Name: name, Source: src})
			}
		}
	}
	return m
}

func (m *Funcmap) parseLayout(body string) {
	var bits, shift uint32
	hasBits, hasShift := false, false
	for _, a := range strings.Split(body, ";") {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			continue
		}
		switch k {
		case "shader_clock_bits":
			n, ok := parseU32(v)
			if !ok {
				return
			}
			bits, hasBits = n, true
		case "shader_clock_shift":
			n, ok := parseU32(v)
			if !ok {
				return
			}
			shift, hasShift = n, true
		}
	}
	if !hasBits || bits != 0 && !hasShift || bits > 29 {
		return
	}
	if bits != 0 && (shift >= 32 || bits > 32-shift) {
		return
	}
	if bits == 0 {
		shift = 0
	}
	m.Bits, m.Shift = bits, shift
}

// parseU32 accepts a non-empty run of ASCII digits worth at most 0xFFFFFFFF.
func parseU32(s string) (uint32, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(s, 10, 32)
	return uint32(v), err == nil
}
