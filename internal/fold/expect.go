package fold

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/attkit/attkit/internal/wire"
)

// A ControlError reports a malformed control CSV: the file name, the
// 1-based line of the record (0 when the file as a whole is wrong) and what
// is wrong.
type ControlError struct {
	Name string
	Line int
	Msg  string
}

func (e *ControlError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.Name, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Name, e.Msg)
}

// ExitCode is 1: the control file is bad input.
func (e *ControlError) ExitCode() int { return 1 }

// A Control holds the expected counters of control CSVs (§4.6,
// from_stats_csv): one Entry per PC with its Exp fields summed over every
// row of the PC, text and source from its first row.
type Control struct {
	byPC map[wire.PC]*Entry
	list []*Entry // first-seen order
}

// NewControl returns an empty Control.
func NewControl() *Control { return &Control{byPC: map[wire.PC]*Entry{}} }

// Entries returns the PCs the control files named, in first-seen order,
// with their summed counters in the Exp fields. The slice must not be
// modified.
func (c *Control) Entries() []*Entry { return c.list }

// Len returns the number of PCs the control files named.
func (c *Control) Len() int { return len(c.list) }

// Read reads a control CSV in the stats-CSV form and adds its counters to
// the expectations: a header row
// naming at least CodeObj, Vaddr, Hitcount, Latency, Stall and Idle
// (Instruction and Source are optional), then data rows. Blank rows and
// label rows are skipped. Integers follow Python's int(s, 0): decimal,
// 0x/0o/0b prefixes, "_" between digits; empty counter cells count 0. Rows
// of one PC add up, across files too. The text and source of a PC come from
// its first row.
func (c *Control) Read(r io.Reader, name string) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.ReuseRecord = true
	bad := func(line int, format string, args ...any) error {
		return &ControlError{Name: name, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	head, err := cr.Read()
	if err == io.EOF {
		return bad(0, "empty control CSV: a header row is required")
	}
	if err != nil {
		return csvErr(name, err)
	}
	col := map[string]int{}
	for i, h := range head {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if _, dup := col[h]; !dup {
			col[h] = i
		}
	}
	for _, need := range []string{"CodeObj", "Vaddr", "Hitcount", "Latency", "Stall", "Idle"} {
		if _, ok := col[need]; !ok {
			return bad(1, "not a stats CSV: the header has no %q column (want %s)",
				need, strings.Join(CSVHeader, ","))
		}
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return csvErr(name, err)
		}
		line, _ := cr.FieldPos(0)
		cell := func(name string) (string, bool) {
			i, ok := col[name]
			if !ok || i >= len(rec) {
				return "", false
			}
			return rec[i], true
		}
		empty := true
		for _, c := range rec {
			if strings.TrimSpace(c) != "" {
				empty = false
				break
			}
		}
		if empty {
			continue
		}
		text, _ := cell("Instruction")
		text = strings.TrimSpace(text)
		if strings.HasPrefix(text, ";") || strings.HasPrefix(text, "label") {
			continue
		}
		var p wire.PC
		for _, c := range []struct {
			name string
			dst  *uint64
		}{{"CodeObj", &p.CodeObjectID}, {"Vaddr", &p.Address}} {
			s, _ := cell(c.name)
			v, err := pyUint(strings.TrimSpace(s))
			if err != nil {
				return bad(line, "%s %q: not a non-negative integer", c.name, s)
			}
			*c.dst = v
		}
		var cnt [4]int64
		for i, n := range []string{"Hitcount", "Latency", "Stall", "Idle"} {
			s, _ := cell(n)
			s = strings.TrimSpace(s)
			if s == "" {
				continue
			}
			v, err := pyInt(s)
			if err != nil {
				return bad(line, "%s %q: not an integer", n, s)
			}
			cnt[i] = v
		}
		e := c.byPC[p]
		if e == nil {
			src, _ := cell("Source")
			e = &Entry{PC: p, Text: text, Source: src, Line: int64(len(c.list) + 1)}
			c.byPC[p] = e
			c.list = append(c.list, e)
		}
		e.ExpHit += cnt[0]
		e.ExpLatency += cnt[1]
		e.ExpStall += cnt[2]
		e.ExpIdle += cnt[3]
	}
}

func csvErr(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &ControlError{Name: name, Line: pe.Line, Msg: pe.Err.Error()}
	}
	return fmt.Errorf("reading %s: %w", name, err)
}

// Validate compares the counters with the expectations of c
// (validate_expected, §4.6) and returns one message per PC whose four
// counters differ, sorted by code object id and address. The PCs compared
// are those of the control files and those the trace touched; a PC on one
// side only compares with zeros. Each entry's Exp fields are set from c.
// The message names the instruction by its control text when the control
// has the PC. Neither the entries nor the outputs change otherwise.
func (f *Fold) Validate(c *Control) []string {
	var pcs []wire.PC
	for _, e := range f.entries {
		if x := c.byPC[e.PC]; x != nil {
			e.ExpHit, e.ExpLatency, e.ExpStall, e.ExpIdle = x.ExpHit, x.ExpLatency, x.ExpStall, x.ExpIdle
		} else {
			e.ExpHit, e.ExpLatency, e.ExpStall, e.ExpIdle = 0, 0, 0, 0
		}
		if x := c.byPC[e.PC]; x != nil || e.Hit != 0 || e.Latency != 0 || e.Stall != 0 || e.Idle != 0 {
			pcs = append(pcs, e.PC)
		}
	}
	for _, x := range c.list {
		if f.byPC[x.PC] == nil {
			pcs = append(pcs, x.PC)
		}
	}
	slices.SortFunc(pcs, ComparePC)
	var msgs []string
	for _, p := range pcs {
		var got, want Entry
		text := ""
		if e := f.byPC[p]; e != nil {
			got = *e
			text = e.Text
		}
		if x := c.byPC[p]; x != nil {
			want = *x
			text = x.Text
		}
		if got.Hit == want.ExpHit && got.Latency == want.ExpLatency &&
			got.Stall == want.ExpStall && got.Idle == want.ExpIdle {
			continue
		}
		msgs = append(msgs, fmt.Sprintf("%s - PC: %d,%d\nHitcount: %d/%d, Stall: %d/%d, Latency: %d/%d, Idle: %d/%d",
			text, p.CodeObjectID, p.Address,
			got.Hit, want.ExpHit, got.Stall, want.ExpStall,
			got.Latency, want.ExpLatency, got.Idle, want.ExpIdle))
	}
	return msgs
}

var errPyInt = errors.New("invalid literal for int() with base 0")

// pyInt parses s as Python's int(s, 0) does, within int64: an optional
// sign, then a decimal without leading zeros (all zeros is fine), or a
// 0x/0o/0b prefixed number; single underscores may separate digits and
// follow the prefix.
func pyInt(s string) (int64, error) {
	neg, u, err := pyIntParts(s)
	switch {
	case err != nil:
		return 0, err
	case neg && u <= 1<<63:
		return -int64(u), nil
	case !neg && u <= math.MaxInt64:
		return int64(u), nil
	}
	return 0, errPyInt
}

// pyUint is pyInt for a non-negative value within uint64.
func pyUint(s string) (uint64, error) {
	neg, u, err := pyIntParts(s)
	if err != nil || neg && u != 0 {
		return 0, errPyInt
	}
	return u, nil
}

func pyIntParts(s string) (neg bool, u uint64, err error) {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	base := 10
	if len(s) >= 2 && s[0] == '0' {
		switch s[1] {
		case 'x', 'X':
			base = 16
		case 'o', 'O':
			base = 8
		case 'b', 'B':
			base = 2
		}
		if base != 10 {
			s = strings.TrimPrefix(s[2:], "_")
		}
	}
	if s == "" || s[0] == '_' || s[len(s)-1] == '_' || strings.Contains(s, "__") {
		return false, 0, errPyInt
	}
	digits := strings.ReplaceAll(s, "_", "")
	if base == 10 && len(digits) > 1 && digits[0] == '0' && strings.Trim(digits, "0") != "" {
		return false, 0, errPyInt
	}
	u, err = strconv.ParseUint(digits, base, 64)
	if err != nil {
		return false, 0, errPyInt
	}
	return neg, u, nil
}
