// Package waveselect picks the waves a tool analyses out of record streams
// (docs/wire.md §1): the waves of some kernels (--kernel GLOB) or dispatches
// (--dispatch N), and one wave (--wave slowest|fastest|ID). Every other
// record passes unchanged. It also bins wave durations per kernel
// (Histogram, att-stats --format histogram). att-stats, att-rcv,
// att-timeline, att-tool and att-report share it.
//
// In: the index (for the kernels' code ranges, see Kernels), the selection
// flags, then the stream's headers and batches in order. Out: the same
// batches with the waves not selected removed (in place), each wave's
// kernel, dispatch and ID, and at the end an error when a selection matched
// nothing, naming what the input holds.
//
// A wave belongs to the kernel whose code range holds its first
// instruction's PC. A wave without instructions (a shader engine outside
// the traced CU sees only starts and ends), or whose first PC no range
// holds, belongs to its dispatch's kernel (the range holding the dispatch's
// entry point) when it has a dispatch, else to the kernel named after its
// first PC.
//
// A wave's dispatch is the last DISPATCH record before it in its part (one
// trace's records, from one header to the next) with the wave's queue
// (me_id = bits 4-6 and pipe_id = bits 0-3 of its dispatcher field) and a
// time at or before the wave's begin_time; decoders deliver a DISPATCH
// record while reading the tokens, before the waves it launched end.
// Dispatch IDs are the position of the DISPATCH record in its part,
// counting from 0 in stream order (so 0 is the first kernel launch a trace
// saw); att-timeline shows it as the "dispatch" argument of its dispatch
// instants.
//
// A wave's ID is "se<SE>.cu<CU>.simd<SIMD>.slot<WAVE_ID>@<BEGIN_TIME>": its
// shader engine (the part's header), the wave record's cu, simd and
// wave_id (its slot) and begin_time, which together tell a wave of one run
// apart from all others. att-timeline shows it as the "id" argument of each
// wave slice, the histogram names the slowest and fastest wave of each
// kernel by it. Within several runs (--merge-runs) the first wave with
// the ID is meant.
//
// Usage, for a tool reading inputs once:
//
//	sel, err := waveselect.New(ix, opts) // usage errors: exit 2
//	for each header h:  sel.BeginPart(h)
//	for each batch b:   sel.Select(b); (other filters, e.g. --jq); sel.Pick(b)
//	at the end:         err = sel.Check() // exit 1: nothing matched
//
// With --wave slowest or fastest (TwoPass), the whole input is read first
// (Selector.FirstPass, on Inputs, which copy standard input and other
// unseekable inputs to an unlinked temporary file), then once more as
// above: the second pass keeps the wave the first chose, by its position
// among the waves that passed every filter.
package waveselect

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/wire"
)

// Options are the selection flags.
type Options struct {
	Kernels    []string // --kernel: globs (path.Match syntax, * also matching /) on kernel names
	Dispatches []string // --dispatch: dispatch IDs (non-negative integers)
	Wave       string   // --wave: "", "slowest", "fastest" or a wave ID
}

// Error is a selection error with its exit status: 2 for a bad flag, 1
// for a selection that matched nothing.
type Error struct {
	Code int
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// ExitCode implements exitcode.Coder.
func (e *Error) ExitCode() int { return e.Code }

func usagef(format string, args ...any) error {
	return &Error{Code: exitcode.Usage, Msg: fmt.Sprintf(format, args...)}
}

func failf(format string, args ...any) error {
	return &Error{Code: exitcode.Failed, Msg: fmt.Sprintf(format, args...)}
}

// WaveKey is what a wave ID names.
type WaveKey struct {
	SE             int
	CU, SIMD, Slot uint8
	Begin          int64
}

// String is the ID: "se0.cu1.simd2.slot3@4500".
func (k WaveKey) String() string {
	return "se" + strconv.Itoa(k.SE) + ".cu" + strconv.Itoa(int(k.CU)) + ".simd" +
		strconv.Itoa(int(k.SIMD)) + ".slot" + strconv.Itoa(int(k.Slot)) + "@" +
		strconv.FormatInt(k.Begin, 10)
}

// ParseWaveKey reads a wave ID as WaveKey.String writes it.
func ParseWaveKey(s string) (WaveKey, error) {
	var k WaveKey
	bad := fmt.Errorf("%q is not a wave ID such as se0.cu1.simd2.slot3@4500 (slowest, fastest, or a wave slice's id in att-timeline)", s)
	at := strings.LastIndexByte(s, '@')
	if at < 0 {
		return k, bad
	}
	begin, err := strconv.ParseInt(s[at+1:], 10, 64)
	if err != nil || strconv.FormatInt(begin, 10) != s[at+1:] {
		return k, bad
	}
	k.Begin = begin
	parts := strings.Split(s[:at], ".")
	if len(parts) != 4 {
		return k, bad
	}
	var v [4]int
	for i, p := range []string{"se", "cu", "simd", "slot"} {
		num, ok := strings.CutPrefix(parts[i], p)
		n, err := strconv.Atoi(num)
		if !ok || err != nil || n < 0 || i > 0 && n > 255 || num != strconv.Itoa(n) {
			return k, bad
		}
		v[i] = n
	}
	k.SE, k.CU, k.SIMD, k.Slot = v[0], uint8(v[1]), uint8(v[2]), uint8(v[3])
	return k, nil
}

// WaveInfo describes one wave.
type WaveInfo struct {
	Key      WaveKey
	Run      int
	Kernel   string // its kernel's name ("" when it has neither instruction nor dispatch)
	Dispatch int    // its dispatch ID, -1 when no DISPATCH record ties to it
	Begin    int64
	End      int64
}

// Duration is end - begin, the duration --wave and the histogram use.
func (w WaveInfo) Duration() int64 { return w.End - w.Begin }

// A Selector applies one selection to a stream; see the package comment.
type Selector struct {
	kernels    *Kernels
	globs      []string
	dispatches map[int]bool
	dispOrder  []int
	wave       string // "", "slowest", "fastest" or "id"
	key        WaveKey

	hdr   wire.Header
	disp  []wire.Dispatch // the current part's DISPATCH records
	keep  []bool
	pass  int // 1 while FirstPass reads, else 2 (or 0 for single-pass)
	n     int64
	best  int64 // the chosen wave's position among those reaching Pick; -1 none
	bestW WaveInfo
	found bool // --wave: the wave was kept (second pass, or ID)

	// what the input holds, for the error of a selection that matched nothing
	seenKernel   map[string]int64
	seenDispatch map[int]int64
	dispKernel   map[int]string
	globHit      []bool
	dispHit      map[int]bool
	waves        int64 // waves read
	waveDisp     int64 // waves tied to a dispatch
}

// New checks the options and returns their selector; ix gives the kernel
// ranges (nil: none, see Kernels). A bad glob, dispatch ID or wave ID is a
// usage error (exit 2).
func New(ix *wire.Index, o Options) (*Selector, error) {
	s := &Selector{kernels: NewKernels(ix), best: -1,
		seenKernel: map[string]int64{}, seenDispatch: map[int]int64{}, dispKernel: map[int]string{}, dispHit: map[int]bool{}}
	for _, g := range o.Kernels {
		if _, err := path.Match(g, ""); err != nil {
			return nil, usagef("--kernel %q: bad pattern (path.Match syntax: * ? [a-z] \\)", g)
		}
		s.globs = append(s.globs, g)
	}
	s.globHit = make([]bool, len(s.globs))
	if len(o.Dispatches) > 0 {
		s.dispatches = map[int]bool{}
		for _, d := range o.Dispatches {
			n, err := strconv.Atoi(strings.TrimSpace(d))
			if err != nil || n < 0 {
				return nil, usagef("--dispatch %q: not a dispatch ID (0, 1, …: the DISPATCH record's position in its trace)", d)
			}
			if !s.dispatches[n] {
				s.dispOrder = append(s.dispOrder, n)
			}
			s.dispatches[n] = true
		}
	}
	switch o.Wave {
	case "", "slowest", "fastest":
		s.wave = o.Wave
	default:
		k, err := ParseWaveKey(o.Wave)
		if err != nil {
			return nil, usagef("--wave: %v", err)
		}
		s.wave, s.key = "id", k
	}
	return s, nil
}

// Kernels returns the kernel ranges the selector uses.
func (s *Selector) Kernels() *Kernels { return s.kernels }

// Active reports whether the selection drops any wave at all.
func (s *Selector) Active() bool { return len(s.globs) > 0 || s.dispatches != nil || s.wave != "" }

// Filters reports whether --kernel or --dispatch is given.
func (s *Selector) Filters() bool { return len(s.globs) > 0 || s.dispatches != nil }

// TwoPass reports whether the input must be read twice (--wave slowest or
// fastest): first FirstPass, then the ordinary pass.
func (s *Selector) TwoPass() bool { return s.wave == "slowest" || s.wave == "fastest" }

// BeginPart starts a part: h is its header.
func (s *Selector) BeginPart(h *wire.Header) {
	s.hdr = *h
	s.disp = s.disp[:0]
}

// Select notes b's DISPATCH records and, with --kernel or --dispatch,
// removes from a wave batch the waves not selected. Call it on every batch
// of the part, before any filter that may drop DISPATCH records (--jq).
func (s *Selector) Select(b *wire.Batch) {
	switch b.Type {
	case wire.TypeDispatch:
		s.disp = append(s.disp, b.Dispatches...)
		if s.pass != 2 {
			for i := range b.Dispatches {
				id := len(s.disp) - len(b.Dispatches) + i
				if _, ok := s.dispKernel[id]; !ok {
					s.dispKernel[id] = s.entryKernel(b.Dispatches[i].EntryPoint)
				}
			}
		}
		return
	case wire.TypeWave:
	default:
		return
	}
	if !s.Filters() {
		return
	}
	note := s.pass != 2 // the second pass saw it all in the first
	s.keep = s.keep[:0]
	for i := range b.Waves {
		w := &b.Waves[i]
		kernel, disp := s.classify(w)
		if note {
			s.count(kernel, disp)
		}
		s.keep = append(s.keep, s.match(kernel, disp, note))
	}
	b.Keep(s.keep)
}

func (s *Selector) count(kernel string, disp int) {
	s.waves++
	s.seenKernel[kernel]++
	if disp >= 0 {
		s.waveDisp++
		s.seenDispatch[disp]++
	}
}

func (s *Selector) match(kernel string, disp int, note bool) bool {
	ok := true
	if len(s.globs) > 0 {
		ok = false
		r := s.kernelRange(kernel)
		for i, g := range s.globs {
			if matchName(g, kernel) || r != nil && r.alias != "" && matchName(g, r.alias) {
				ok = true
				if note {
					s.globHit[i] = true
				}
			}
		}
	}
	if s.dispatches != nil {
		in := s.dispatches[disp]
		if in && note {
			s.dispHit[disp] = true
		}
		ok = ok && in
	}
	return ok
}

// matchName matches a kernel name against a --kernel glob: path.Match,
// but with "/" an ordinary character, so that * spans it (C++ names and
// the default names "1 / 0x1e00" hold slashes).
func matchName(g, name string) bool {
	m, _ := path.Match(strings.ReplaceAll(g, "/", "\x00"), strings.ReplaceAll(name, "/", "\x00"))
	return m
}

// kernelRange finds the range named kernel, for its other name; ranges are
// few, so a scan is fine, but only when a glob missed the shown name.
func (s *Selector) kernelRange(name string) *kernelRange {
	for _, rs := range s.kernels.byObj {
		for i := range rs {
			if rs[i].name == name {
				return &rs[i]
			}
		}
	}
	return nil
}

// entryKernel is the kernel of a dispatch's entry point.
func (s *Selector) entryKernel(pc wire.PC) string {
	if r := s.kernels.lookup(pc); r != nil {
		return r.name
	}
	return DefaultName(pc)
}

// dispatchOf returns the ID of w's dispatch in the current part, -1 if none.
func (s *Selector) dispatchOf(w *wire.Wave) int {
	me, pipe := w.Dispatcher>>4&7, w.Dispatcher&15
	for i := len(s.disp) - 1; i >= 0; i-- {
		d := &s.disp[i]
		if d.MEID == me && d.PipeID == pipe && d.Time <= w.BeginTime {
			return i
		}
	}
	return -1
}

// classify returns w's kernel and dispatch ID.
func (s *Selector) classify(w *wire.Wave) (string, int) {
	disp := s.dispatchOf(w)
	if len(w.Instructions) > 0 {
		if r := s.kernels.lookup(w.Instructions[0].PC); r != nil {
			return r.name, disp
		}
	}
	if disp >= 0 {
		return s.entryKernel(s.disp[disp].EntryPoint), disp
	}
	if len(w.Instructions) > 0 {
		return DefaultName(w.Instructions[0].PC), disp
	}
	return "", disp
}

// Describe returns w's kernel, dispatch and ID (w is a wave of the current
// part).
func (s *Selector) Describe(w *wire.Wave) WaveInfo {
	kernel, disp := s.classify(w)
	return WaveInfo{Key: WaveKey{SE: s.hdr.Trace.SE, CU: w.CU, SIMD: w.SIMD, Slot: w.WaveID, Begin: w.BeginTime},
		Run: s.hdr.Trace.Run, Kernel: kernel, Dispatch: disp, Begin: w.BeginTime, End: w.EndTime}
}

// DispatchID returns the ID of d, a DISPATCH record of the current part
// that Select saw (-1 if it did not).
func (s *Selector) DispatchID(d *wire.Dispatch) int {
	for i := len(s.disp) - 1; i >= 0; i-- {
		if s.disp[i] == *d {
			return i
		}
	}
	return -1
}

// Pick applies --wave to a wave batch that passed every other filter:
// during FirstPass it notes the slowest or fastest wave and drops them
// all; in the pass after it, or with a wave ID, it keeps that one wave
// only. Without --wave it does nothing.
func (s *Selector) Pick(b *wire.Batch) {
	if s.wave == "" || b.Type != wire.TypeWave {
		return
	}
	s.keep = s.keep[:0]
	for i := range b.Waves {
		w := &b.Waves[i]
		keep := false
		switch {
		case s.wave == "id":
			keep = !s.found && w.CU == s.key.CU && w.SIMD == s.key.SIMD && w.WaveID == s.key.Slot &&
				w.BeginTime == s.key.Begin && s.hdr.Trace.SE == s.key.SE
			if keep {
				s.found = true
				s.bestW = s.Describe(w)
			}
		case s.pass == 1:
			d := w.EndTime - w.BeginTime
			if bd := s.bestW.Duration(); s.best < 0 || s.wave == "slowest" && d > bd || s.wave == "fastest" && d < bd {
				s.best, s.bestW = s.n, s.Describe(w)
			}
		default:
			if s.n == s.best {
				keep = true
				s.found = s.Describe(w).Key == s.bestW.Key
			}
		}
		s.n++
		s.keep = append(s.keep, keep)
	}
	b.Keep(s.keep)
}

// Chosen returns the wave --wave kept, once the pass that keeps it read it.
func (s *Selector) Chosen() (WaveInfo, bool) { return s.bestW, s.found }

// Check ends the (last) pass: an error (exit 1) when a --kernel pattern or
// a --dispatch ID matched no wave, or --wave found none, naming what the
// input holds.
func (s *Selector) Check() error {
	var miss []string
	for i, g := range s.globs {
		if !s.globHit[i] {
			miss = append(miss, fmt.Sprintf("--kernel %q", g))
		}
	}
	for _, d := range s.dispOrder {
		if !s.dispHit[d] {
			miss = append(miss, fmt.Sprintf("--dispatch %d", d))
		}
	}
	if len(miss) > 0 {
		return failf("%s matched no wave; %s", strings.Join(miss, " and "), s.holds())
	}
	switch {
	case s.wave == "id" && !s.found:
		return failf("--wave %s: no such wave%s (IDs are se<SE>.cu<CU>.simd<SIMD>.slot<SLOT>@<BEGIN>, as att-timeline's wave slices show them)", s.key, s.filtered())
	case s.TwoPass() && s.best < 0:
		return failf("--wave %s: no wave to choose from%s", s.wave, s.filtered())
	case s.TwoPass() && !s.found:
		return failf("--wave %s: the input changed between its two readings", s.wave)
	}
	return nil
}

func (s *Selector) filtered() string {
	if s.Filters() {
		return " among the waves selected by --kernel/--dispatch (and the other filters)"
	}
	return " in the input (after its other filters)"
}

// holds describes the kernels and dispatches of the waves read.
func (s *Selector) holds() string {
	if s.waves == 0 {
		return "the input holds no wave"
	}
	var ks []string
	for _, k := range slices.Sorted(maps.Keys(s.seenKernel)) {
		name := k
		if name == "" {
			name = "(no instruction and no dispatch)"
		}
		ks = append(ks, fmt.Sprintf("%s (%d waves)", name, s.seenKernel[k]))
	}
	msg := fmt.Sprintf("the input's %d waves belong to kernels %s", s.waves, strings.Join(ks, ", "))
	if s.dispatches != nil || len(s.seenDispatch) > 0 {
		if len(s.seenDispatch) == 0 {
			msg += "; no wave is tied to a DISPATCH record (the decoder gave none: AMD's library 0.1.6 does not)"
		} else {
			var ds []string
			for _, d := range slices.Sorted(maps.Keys(s.seenDispatch)) {
				ds = append(ds, fmt.Sprintf("%d: %s (%d waves)", d, s.dispKernel[d], s.seenDispatch[d]))
			}
			msg += "; to dispatches " + strings.Join(ds, ", ")
			if n := s.waves - s.waveDisp; n > 0 {
				msg += fmt.Sprintf(" (%d waves to none)", n)
			}
		}
	}
	return msg
}

// CheckAll is Check for one selection applied by several selectors (one
// per output, as att-tool writes one folder per run): a --kernel pattern
// or a --dispatch ID must match a wave of one of them, and the error
// names what all of them read.
func CheckAll(sels ...*Selector) error {
	if len(sels) == 0 {
		return nil
	}
	f := sels[0]
	m := &Selector{globs: f.globs, dispatches: f.dispatches, dispOrder: f.dispOrder, wave: f.wave, key: f.key, pass: f.pass,
		best: -1, globHit: make([]bool, len(f.globs)), dispHit: map[int]bool{},
		seenKernel: map[string]int64{}, seenDispatch: map[int]int64{}, dispKernel: map[int]string{}}
	for _, s := range sels {
		for i, h := range s.globHit {
			m.globHit[i] = m.globHit[i] || h
		}
		for d, h := range s.dispHit {
			m.dispHit[d] = m.dispHit[d] || h
		}
		for k, n := range s.seenKernel {
			m.seenKernel[k] += n
		}
		for d, n := range s.seenDispatch {
			m.seenDispatch[d] += n
		}
		for d, k := range s.dispKernel {
			if _, ok := m.dispKernel[d]; !ok {
				m.dispKernel[d] = k
			}
		}
		m.waves += s.waves
		m.waveDisp += s.waveDisp
		if s.found {
			m.found, m.best, m.bestW = true, s.best, s.bestW
		} else if m.best < 0 {
			m.best = s.best
		}
	}
	return m.Check()
}
