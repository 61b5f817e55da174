package hidden

import "slices"

// A Span is a raw busy interval [Start, Start+Len) of a pipe: one
// instruction's issue window, or one other-SIMD record.
type Span struct{ Start, Len int64 }

// An Interval is a coalesced busy interval, kept as python-layer §8.2
// item 2 represents it: its end and its length, so it covers
// [End-Len, End).
type Interval struct{ End, Len int64 }

// Start returns End - Len.
func (iv Interval) Start() int64 { return iv.End - iv.Len }

// Coalesce is §8.2 item 2 ("util"): it sorts the spans by start (then
// length) and folds each into an accumulator that begins at the first
// start with length 0. A span that starts after the accumulator's end
// begins a new accumulator; any other span, overlapping or touching, adds
// its full length to it, so an interval can reach past the true union of
// its spans (upstream does this for parity with the viewer). Zero-length
// spans take part. Coalesce sorts spans in place.
func Coalesce(spans []Span) []Interval {
	if len(spans) == 0 {
		return nil
	}
	sortSpans(spans)
	var out []Interval
	acc := Span{Start: spans[0].Start}
	for _, s := range spans {
		if s.Start > acc.Start+acc.Len {
			out = append(out, Interval{End: acc.Start + acc.Len, Len: acc.Len})
			acc = s
			continue
		}
		acc.Len += s.Len
	}
	return append(out, Interval{End: acc.Start + acc.Len, Len: acc.Len})
}

// sortSpans sorts by start, then length. Upstream's order; the result of
// coalescing does not depend on the order of spans with equal starts (the
// first decides whether a new accumulator begins, the others then always
// join), but a full order keeps the function deterministic for any input.
func sortSpans(s []Span) {
	if slices.IsSortedFunc(s, cmpSpan) {
		return
	}
	slices.SortFunc(s, cmpSpan)
}

func cmpSpan(a, b Span) int {
	switch {
	case a.Start < b.Start:
		return -1
	case a.Start > b.Start:
		return 1
	case a.Len < b.Len:
		return -1
	case a.Len > b.Len:
		return 1
	}
	return 0
}

// Union is §8.2 item 3: the set union of two interval lists, each sorted
// and disjoint. It merges them by start (on a tie the first list's interval
// comes first), skips empty intervals, and extends the last output
// interval when the next one starts at or before its end (touching
// intervals merge).
func Union(a, b []Interval) []Interval {
	out := make([]Interval, 0, len(a)+len(b))
	add := func(iv Interval) {
		if iv.Len <= 0 {
			return
		}
		if n := len(out); n > 0 && iv.Start() <= out[n-1].End {
			last := &out[n-1]
			if iv.End > last.End {
				start := last.Start()
				last.End = iv.End
				last.Len = last.End - start
			}
			return
		}
		out = append(out, iv)
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if b[j].Start() < a[i].Start() {
			add(b[j])
			j++
		} else {
			add(a[i])
			i++
		}
	}
	for ; i < len(a); i++ {
		add(a[i])
	}
	for ; j < len(b); j++ {
		add(b[j])
	}
	return out
}

// A List is an interval list ready for covered queries (§8.2 item 4):
// the intervals, disjoint and sorted, and the prefix sums of their
// lengths. Its cursor makes the nearly monotone queries of one wave cheap;
// a List is therefore not safe for concurrent use.
type List struct {
	ivs    []Interval
	before []int64 // before[i]: cycles of ivs[:i]
	cur    int     // the index the last query found
}

// NewList returns the list of ivs, which must be sorted and disjoint (what
// Coalesce and Union return). It keeps ivs.
func NewList(ivs []Interval) *List {
	l := &List{ivs: ivs, before: make([]int64, len(ivs)+1)}
	for i, iv := range ivs {
		l.before[i+1] = l.before[i] + iv.Len
	}
	return l
}

// Len returns the number of intervals.
func (l *List) Len() int { return len(l.ivs) }

// Intervals returns the list's intervals; the slice must not be modified.
func (l *List) Intervals() []Interval { return l.ivs }

// Covered returns the cycles of the list's intervals that lie before clock
// c: the lengths of the intervals ending at or before c, plus the part of
// the next one that starts before c.
func (l *List) Covered(c int64) int64 {
	ivs := l.ivs
	n := len(ivs)
	if n == 0 {
		return 0
	}
	// i is the first interval ending after c. Start from the last answer
	// and walk a few steps; jump by binary search when c is far away.
	i := l.cur
	switch {
	case i < n && ivs[i].End <= c:
		for k := 0; i < n && ivs[i].End <= c; k++ {
			if k == 8 {
				i += searchEnd(ivs[i:], c)
				break
			}
			i++
		}
	case i > 0 && ivs[i-1].End > c:
		for k := 0; i > 0 && ivs[i-1].End > c; k++ {
			if k == 8 {
				i = searchEnd(ivs[:i], c)
				break
			}
			i--
		}
	}
	l.cur = i
	sum := l.before[i]
	if i < n {
		if s := ivs[i].Start(); s < c {
			sum += c - s
		}
	}
	return sum
}

// searchEnd returns the index of the first interval of ivs ending after c.
func searchEnd(ivs []Interval, c int64) int {
	lo, hi := 0, len(ivs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ivs[m].End <= c {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// Window is §8.2 item 5: the cycles of l that hide an instruction's idle
// time (from last to clock), its stall (from clock to clock+stall) and its
// issue (from clock+stall to clock+cycles). A nil or empty list hides
// nothing.
func Window(l *List, last, clock, stall, cycles int64) Latency {
	var h Latency
	if l == nil || len(l.ivs) == 0 {
		return h
	}
	var atClock int64
	haveClock := false
	if clock > last {
		atClock = l.Covered(clock)
		haveClock = true
		h.Idle = atClock - l.Covered(last)
	}
	if stall > 0 || cycles > stall {
		if !haveClock {
			atClock = l.Covered(clock)
		}
		atStall := atClock
		if stall > 0 {
			atStall = l.Covered(clock + stall)
			h.Stall = atStall - atClock
		}
		if cycles > stall {
			h.Issue = l.Covered(clock+cycles) - atStall
		}
	}
	return h
}

// ownWindow is the own-pipe window of §8.2 item 6: the issue component is
// 0 (an instruction's own issue window is always in its own pipe), so the
// issue query is skipped.
func ownWindow(l *List, last, clock, stall int64) Latency {
	var h Latency
	if l == nil || len(l.ivs) == 0 {
		return h
	}
	if clock <= last && stall <= 0 {
		return h
	}
	atClock := l.Covered(clock)
	if clock > last {
		h.Idle = atClock - l.Covered(last)
	}
	if stall > 0 {
		h.Stall = l.Covered(clock+stall) - atClock
	}
	return h
}

// coalescer coalesces spans as they come, keeping only the coalesced
// intervals and a bounded buffer of pending spans. That gives the same
// result as coalescing all spans at once, because coalescing is
// compositional: in the sorted sweep, a coalesced interval (start S,
// length L) behaves exactly as the spans it came from (all of them end up
// in one accumulator whatever else is added, each other span starting in
// [S, S+L] joins that accumulator either way, and every span starting
// after S+L sees the same accumulated length). TestCoalescerAgrees checks
// it against Coalesce.
type coalescer struct {
	groups []Span // coalesced so far, sorted by start, as (start, length)
	pend   []Span
	tmp    []Span
}

func (c *coalescer) add(s Span) {
	c.pend = append(c.pend, s)
	if len(c.pend) >= max(4096, len(c.groups)) {
		c.flush()
	}
}

// addGroups adds the spans of another coalescer (its groups are spans
// too, by compositionality).
func (c *coalescer) addAll(o *coalescer) {
	o.flush()
	for _, s := range o.groups {
		c.add(s)
	}
}

func (c *coalescer) flush() {
	if len(c.pend) == 0 {
		return
	}
	sortSpans(c.pend)
	merged := c.tmp[:0]
	g, p := c.groups, c.pend
	for len(g) > 0 && len(p) > 0 {
		if cmpSpan(p[0], g[0]) < 0 {
			merged = append(merged, p[0])
			p = p[1:]
		} else {
			merged = append(merged, g[0])
			g = g[1:]
		}
	}
	merged = append(append(merged, g...), p...)
	// Coalesce in place: out never overtakes the read position.
	out := merged[:0]
	acc := Span{Start: merged[0].Start}
	for _, s := range merged {
		if s.Start > acc.Start+acc.Len {
			out = append(out, acc)
			acc = s
			continue
		}
		acc.Len += s.Len
	}
	out = append(out, acc)
	c.tmp = c.groups[:0]
	c.groups = out
	c.pend = c.pend[:0]
}

// intervals returns the coalesced intervals of every span added.
func (c *coalescer) intervals() []Interval {
	c.flush()
	if len(c.groups) == 0 {
		return nil
	}
	out := make([]Interval, len(c.groups))
	for i, g := range c.groups {
		out[i] = Interval{End: g.Start + g.Len, Len: g.Len}
	}
	return out
}
