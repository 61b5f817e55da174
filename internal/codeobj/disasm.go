package codeobj

import (
	"bufio"
	"bytes"
	"io"
	"strconv"
	"strings"
)

// An Inst is one instruction line of llvm-objdump's output.
type Inst struct {
	Addr    uint64
	Text    string // normalised (§3.3)
	Raw     string // as printed, before normalisation
	Words   int    // encoding words printed after the address (0 with none)
	Section int    // ordinal of the "Disassembly of section" block, from 0
	Size    uint64 // bytes to the next instruction (see SetSizes)
}

// ParseObjdump parses the output of `llvm-objdump -d` for an AMDGPU object
// as python-layer §3.2 says: instruction lines start with white space and
// contain "//", followed by the address, ":", the encoding words and an
// optional <symbol+offset>. Other lines are ignored; so are instruction
// lines whose address does not parse. Sizes are set by SetSizes.
func ParseObjdump(r io.Reader) ([]Inst, error) {
	var out []Inst
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	section := -1
	for sc.Scan() {
		line := sc.Bytes()
		line = bytes.TrimRight(line, " \t\r\n\v\f")
		if len(line) == 0 {
			continue
		}
		if line[0] != ' ' && line[0] != '\t' {
			if bytes.HasPrefix(line, []byte("Disassembly of section")) {
				section++
			}
			continue
		}
		trimmed := bytes.TrimLeft(line, " \t\r\n\v\f")
		if len(trimmed) == 0 || trimmed[0] == ';' {
			continue
		}
		in, ok := parseInstLine(string(line))
		if !ok {
			continue
		}
		if section < 0 {
			section = 0
		}
		in.Section = section
		out = append(out, in)
	}
	if err := sc.Err(); err != nil {
		return out, err
	}
	SetSizes(out)
	return out, nil
}

func parseInstLine(line string) (Inst, bool) {
	i := strings.Index(line, "//")
	if i < 0 {
		return Inst{}, false
	}
	text := strings.TrimSpace(line[:i])
	rest := line[i+2:]
	j := strings.IndexByte(rest, ':')
	if j < 0 {
		return Inst{}, false
	}
	addr, err := strconv.ParseUint(strings.TrimSpace(rest[:j]), 16, 64)
	if err != nil {
		return Inst{}, false
	}
	words := strings.TrimSpace(rest[j+1:])
	n := 0
	for _, w := range strings.Fields(words) {
		if !isHexWord(w) {
			break
		}
		n++
	}
	return Inst{Addr: addr, Raw: text, Text: NormalizeBranch(text, words), Words: n}, true
}

func isHexWord(w string) bool {
	if len(w) != 8 {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// SetSizes sets each instruction's Size: the byte distance to the next
// instruction of the same section. Where objdump printed the encoding words
// and their length disagrees with that distance (the last instruction of a
// section, or bytes objdump skipped), the encoding length wins; with neither
// the size is 4, upstream's estimate.
func SetSizes(insts []Inst) {
	for i := range insts {
		in := &insts[i]
		var d uint64
		if i+1 < len(insts) && insts[i+1].Section == in.Section && insts[i+1].Addr > in.Addr {
			d = insts[i+1].Addr - in.Addr
		}
		switch {
		case in.Words > 0:
			in.Size = uint64(in.Words) * 4
		case d > 0:
			in.Size = d
		default:
			in.Size = 4
		}
	}
}

// NormalizeBranch rewrites the last operand of a branch instruction to the
// unsigned decimal value of the low 16 bits of its first encoding word,
// exactly as python-layer §3.3 says (any text containing "branch" whose last
// operand is not a decimal integer). words is what follows the address on
// the objdump line.
func NormalizeBranch(inst, words string) string {
	if !strings.Contains(inst, "branch") {
		return inst
	}
	k := strings.LastIndexAny(inst, " \t\n\r\v\f")
	if k < 0 {
		return inst
	}
	head := inst[:k]
	for len(head) > 0 && strings.ContainsRune(" \t\n\r\v\f", rune(head[len(head)-1])) {
		head = head[:len(head)-1]
	}
	last := inst[k+1:]
	if isDecimal(last) {
		return inst
	}
	f := strings.Fields(words)
	if len(f) == 0 || len(f[0]) < 4 {
		return inst
	}
	v, err := strconv.ParseUint(f[0][len(f[0])-4:], 16, 16)
	if err != nil {
		return inst
	}
	return head + " " + strconv.FormatUint(v, 10)
}

func isDecimal(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
