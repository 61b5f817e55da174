package codeobj

import (
	"debug/elf"
	"errors"
	"strings"
)

// Labels are the symbol labels of a code object (§3.4).
type Labels struct {
	// Func maps an address to the first STT_FUNC symbol seen there.
	Func map[uint64]string
	// Debug maps an address to its "label*" STT_NOTYPE symbols, in table
	// order without duplicates.
	Debug map[uint64][]string
	// FuncMin maps a function name to the lowest address of a function
	// label with that name.
	FuncMin map[string]uint64
}

// readLabels reads .symtab then .dynsym, symbols in table order, as §3.4
// says. A missing table is not an error; a malformed one is.
func readLabels(f *elf.File) (Labels, error) {
	l := Labels{Func: map[uint64]string{}, Debug: map[uint64][]string{}, FuncMin: map[string]uint64{}}
	for _, read := range []func() ([]elf.Symbol, error){f.Symbols, f.DynamicSymbols} {
		syms, err := read()
		if errors.Is(err, elf.ErrNoSymbols) {
			continue
		}
		if err != nil {
			return l, err
		}
		for _, s := range syms {
			if s.Name == "" {
				continue
			}
			switch elf.ST_TYPE(s.Info) {
			case elf.STT_FUNC:
				if _, ok := l.Func[s.Value]; !ok {
					l.Func[s.Value] = s.Name
				}
			case elf.STT_NOTYPE:
				if !strings.HasPrefix(s.Name, "label") || s.Section == elf.SHN_UNDEF || s.Section == elf.SHN_ABS {
					continue
				}
				dup := false
				for _, n := range l.Debug[s.Value] {
					dup = dup || n == s.Name
				}
				if !dup {
					l.Debug[s.Value] = append(l.Debug[s.Value], s.Name)
				}
			}
		}
	}
	for a, n := range l.Func {
		if m, ok := l.FuncMin[n]; !ok || a < m {
			l.FuncMin[n] = a
		}
	}
	return l, nil
}

// LabelText returns the code.json text of a label row: "; " + name when the
// name starts with "_", else "; _" + name (the viewer only recognises label
// rows that begin with "; _").
func LabelText(name string) string {
	if strings.HasPrefix(name, "_") {
		return "; " + name
	}
	return "; _" + name
}
