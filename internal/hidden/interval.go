package hidden

import (
	"cmp"
	"slices"
)

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
func Coalesce(spans []Span) []Interval { return coalesceTo(nil, spans) }

// coalesceTo is Coalesce appending to dst.
func coalesceTo(out []Interval, spans []Span) []Interval {
	if len(spans) == 0 {
		return out
	}
	sortSpans(spans)
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
	// The spans of one wave come nearly sorted: insertion sort is linear
	// then, and the fallback bounds the worst case.
	moves := 0
	for i := 1; i < len(s); i++ {
		v := s[i]
		j := i
		for j > 0 && cmpSpan(v, s[j-1]) < 0 {
			s[j] = s[j-1]
			j--
			moves++
		}
		s[j] = v
		if moves > 8*len(s) {
			slices.SortFunc(s, cmpSpan)
			return
		}
	}
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
	// One empty side: the other, unless it holds an empty interval to
	// skip (coalesced intervals never touch, so nothing else changes).
	if len(b) == 0 && !hasEmpty(a) {
		return a
	}
	if len(a) == 0 && !hasEmpty(b) {
		return b
	}
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

func hasEmpty(ivs []Interval) bool {
	for _, iv := range ivs {
		if iv.Len <= 0 {
			return true
		}
	}
	return false
}

// A List is an interval list ready for covered queries (§8.2 item 4):
// the intervals, disjoint and sorted, and the prefix sums of their
// lengths. Its cursor makes the nearly monotone queries of one wave cheap;
// a List is therefore not safe for concurrent use.
type List struct {
	ivs    []Interval
	before []int64 // before[i]: cycles of ivs[:i]
	cur    int     // the index the last query found
	// The last query and its answer: an instruction's idle window often
	// starts where the previous one's issue ended.
	lastC, lastV int64
	haveLast     bool
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
	if l.haveLast && c == l.lastC {
		return l.lastV
	}
	ivs := l.ivs
	n := len(ivs)
	if n == 0 {
		return 0
	}
	// i is the first interval ending after c. Start from the last answer
	// and gallop: the queries of one wave are nearly monotone.
	i := min(l.cur, n)
	if i < n && ivs[i].End <= c {
		lo, step := i+1, 1
		for lo < n && ivs[lo].End <= c {
			i = lo
			lo += step
			step *= 2
		}
		i += searchEnd(ivs[i:min(lo, n)], c)
	} else if i > 0 && ivs[i-1].End > c {
		hi, step := i-1, 1
		for hi > 0 && ivs[hi-1].End > c {
			i = hi
			hi -= step
			step *= 2
		}
		hi = max(hi, 0)
		i = hi + searchEnd(ivs[hi:i], c)
	}
	l.cur = i
	sum := l.before[i]
	if i < n {
		if s := ivs[i].Start(); s < c {
			sum += c - s
		}
	}
	l.lastC, l.lastV, l.haveLast = c, sum, true
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
//
// The intervals are kept in chunks: frozen chunks that no span added so
// far reaches, then the active intervals, the only ones a flush merges
// into (waves come roughly in time order, so a flush rarely reaches back
// further). That way growing the storage copies only the active part.
type coalescer struct {
	frozen [][]Interval // coalesced so far, sorted, before groups
	groups []Interval   // the active intervals, sorted
	nFroz  int          // intervals in frozen
	chunk  int          // intervals per frozen chunk (0: defaultChunk)
	pend   []Span
	tmp    []Span // radix sort buffer
}

const defaultChunk = 16 << 10

// radix sorts p by start, least significant 11-bit digit of start - min
// first, in as many passes as the range of starts needs. It returns the
// sorted spans, in p or in the coalescer's buffer.
func (c *coalescer) radix(p []Span) []Span {
	lo, hi := p[0].Start, p[0].Start
	for _, s := range p {
		lo, hi = min(lo, s.Start), max(hi, s.Start)
	}
	span := uint64(hi) - uint64(lo)
	if len(p) < 256 {
		slices.SortFunc(p, func(a, b Span) int { return cmp.Compare(a.Start, b.Start) })
		return p
	}
	c.tmp = slices.Grow(c.tmp[:0], len(p))[:len(p)]
	src, dst := p, c.tmp
	const bits = 11
	var count [1 << bits]int
	for shift := uint(0); shift < 64 && span>>shift != 0; shift += bits {
		clear(count[:])
		for _, s := range src {
			count[(uint64(s.Start)-uint64(lo))>>shift&(1<<bits-1)]++
		}
		sum := 0
		for i, n := range count {
			count[i] = sum
			sum += n
		}
		for _, s := range src {
			d := (uint64(s.Start) - uint64(lo)) >> shift & (1<<bits - 1)
			dst[count[d]] = s
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &p[0] {
		c.tmp = p // keep both buffers
		c.pend = src
	}
	return src
}

func (c *coalescer) add(s Span) {
	c.pend = append(c.pend, s)
	if len(c.pend) >= max(4096, len(c.groups)/4) {
		c.flush()
	}
}

// addAll adds the intervals of another coalescer (its intervals are spans
// too, by compositionality).
func (c *coalescer) addAll(o *coalescer) {
	for _, iv := range o.intervals() {
		c.add(Span{Start: iv.Start(), Len: iv.Len})
	}
}

// flush sorts the pending spans, merges them into the intervals from the
// back (in place) and coalesces the result in place.
func (c *coalescer) flush() {
	p := c.pend
	if len(p) == 0 {
		return
	}
	// Sorted runs of many waves: radix sort by start (the order of equal
	// starts does not matter, see sortSpans).
	p = c.radix(p)
	// Thaw the frozen chunks the earliest pending span can reach (it
	// joins an interval when it starts at or before that interval's end).
	for len(c.frozen) > 0 {
		f := c.frozen[len(c.frozen)-1]
		if p[0].Start > f[len(f)-1].End {
			break
		}
		c.frozen = c.frozen[:len(c.frozen)-1]
		c.nFroz -= len(f)
		c.groups = append(f[:len(f):len(f)], c.groups...)
	}
	n := len(c.groups)
	g := c.groups
	if cap(g) < n+len(p) {
		// Grow by half as much again as needed: the next flushes then fit
		// (a flush adds at most a quarter, see add) instead of copying
		// every interval at each flush.
		g = slices.Grow(g, len(p)+n/2)
	}
	g = g[:n+len(p)]
	i, j := n-1, len(p)-1
	for k := len(g) - 1; j >= 0; k-- {
		if i >= 0 && (g[i].Start() > p[j].Start || g[i].Start() == p[j].Start && g[i].Len > p[j].Len) {
			g[k] = g[i]
			i--
		} else {
			g[k] = Interval{End: p[j].Start + p[j].Len, Len: p[j].Len}
			j--
		}
	}
	// Coalesce in place: out never overtakes the read position. The
	// intervals before g[i] did not move and were coalesced already, and
	// g[i] begins an accumulator of its own (it starts after the end of
	// the one before), so the sweep starts there.
	start := max(i, 0)
	out := g[:start]
	acc := Span{Start: g[start].Start()}
	for _, iv := range g[start:] {
		if s := iv.Start(); s > acc.Start+acc.Len {
			out = append(out, Interval{End: acc.Start + acc.Len, Len: acc.Len})
			acc = Span{Start: s, Len: iv.Len}
			continue
		}
		acc.Len += iv.Len
	}
	c.groups = append(out, Interval{End: acc.Start + acc.Len, Len: acc.Len})
	c.pend = c.pend[:0]
	// Freeze the front into chunks of their own, keeping at least a
	// chunk's worth active. Coalesced intervals leave a gap between each
	// other, so a chunk boundary never splits what a later sweep would
	// join.
	size := c.chunk
	if size <= 0 {
		size = defaultChunk
	}
	if n := len(c.groups); n >= 2*size {
		k := (n - size) / size * size
		for i := 0; i < k; i += size {
			c.frozen = append(c.frozen, slices.Clone(c.groups[i:i+size]))
		}
		c.nFroz += k
		c.groups = c.groups[:copy(c.groups, c.groups[k:])]
	}
}

// intervals returns the coalesced intervals of every span added. The
// coalescer keeps them: it must not be used afterwards.
func (c *coalescer) intervals() []Interval {
	c.flush()
	c.pend = nil
	if len(c.frozen) > 0 {
		all := make([]Interval, 0, c.nFroz+len(c.groups))
		for _, f := range c.frozen {
			all = append(all, f...)
		}
		c.groups, c.frozen, c.nFroz = append(all, c.groups...), nil, 0
	}
	return c.groups
}
