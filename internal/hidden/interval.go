package hidden

import (
	"cmp"
	"math/bits"
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
	u, _ := unionTo(nil, a, b)
	return u
}

// unionTo is Union in buf's storage (buf's contents are lost) unless it
// returns a or b itself. It returns the union and the buffer to keep for
// the next union, which must not be a or b.
func unionTo(buf, a, b []Interval) (u, spare []Interval) {
	// One empty side: the other, unless it holds an empty interval to
	// skip (coalesced intervals never touch, so nothing else changes).
	if len(b) == 0 && !hasEmpty(a) {
		return a, buf
	}
	if len(a) == 0 && !hasEmpty(b) {
		return b, buf
	}
	out := slices.Grow(buf[:0], len(a)+len(b))
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
	return out, out
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
	ivs []Interval
	// node[i+1] holds ivs[i]'s end and the cycles of ivs[:i+1]; node[0]
	// is 0 cycles. A query reads one array, mostly one cache line.
	node []node
	cur  int // the index of the interval the last query found
	// The last query and its answer: an instruction's idle window often
	// starts where the previous one's issue ended.
	lastC, lastV int64
	haveLast     bool
}

type node struct{ end, cum int64 }

// NewList returns the list of ivs, which must be sorted and disjoint (what
// Coalesce and Union return). It keeps ivs.
func NewList(ivs []Interval) *List {
	l := &List{}
	l.reset(ivs)
	return l
}

// reset makes l the list of ivs, reusing its storage.
func (l *List) reset(ivs []Interval) {
	*l = List{ivs: ivs, node: slices.Grow(l.node[:0], len(ivs)+1)[:len(ivs)+1]}
	l.node[0] = node{}
	var cum int64
	for i, iv := range ivs {
		cum += iv.Len
		l.node[i+1] = node{iv.End, cum}
	}
}

// sumAt is the answer to a query at c whose first interval ending after c
// is i: the cycles of the intervals before i, plus the part of interval i
// that starts before c (its length, less the part from c to its end).
func (l *List) sumAt(i int, c int64) int64 {
	if i+1 >= len(l.node) {
		return l.node[len(l.node)-1].cum
	}
	nd, prev := l.node[i+1], l.node[i].cum
	return nd.cum - min(nd.end-c, nd.cum-prev)
}

// Covered returns the cycles of the list's intervals that lie before clock
// c: the lengths of the intervals ending at or before c, plus the part of
// the next one that starts before c.
func (l *List) Covered(c int64) int64 {
	if l.haveLast && c == l.lastC {
		return l.lastV
	}
	nodes := l.node[1:]
	n := len(nodes)
	if n == 0 {
		return 0
	}
	// i is the first interval ending after c. Start from the last answer
	// and gallop: the queries of one wave are nearly monotone.
	i := min(l.cur, n)
	if i < n && nodes[i].end <= c {
		lo, step := i+1, 1
		for lo < n && nodes[lo].end <= c {
			i = lo
			lo += step
			step *= 2
		}
		i += searchEnd(nodes[i:min(lo, n)], c)
	} else if i > 0 && nodes[i-1].end > c {
		hi, step := i-1, 1
		for hi > 0 && nodes[hi-1].end > c {
			i = hi
			hi -= step
			step *= 2
		}
		hi = max(hi, 0)
		i = hi + searchEnd(nodes[hi:i], c)
	}
	l.cur = i
	sum := l.sumAt(i, c)
	l.lastC, l.lastV, l.haveLast = c, sum, true
	return sum
}

// searchEnd returns the index of the first node of nodes ending after c.
func searchEnd(nodes []node, c int64) int {
	lo, hi := 0, len(nodes)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if nodes[m].end <= c {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// next is Covered for a clock at or after the last query's, which it
// finds by stepping forward from that query's interval: the queries of
// one window come in ascending order, mostly in the same interval or the
// next.
func (l *List) next(c int64) int64 {
	if !l.haveLast || c < l.lastC {
		return l.Covered(c)
	}
	nodes := l.node[1:]
	i := l.cur // the first interval ending after lastC
	for k := 0; i < len(nodes) && nodes[i].end <= c; k++ {
		if k == 4 {
			return l.Covered(c)
		}
		i++
	}
	l.cur = i
	sum := l.sumAt(i, c)
	l.lastC, l.lastV = c, sum
	return sum
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
	// The queries in ascending order: last, clock, clock+stall,
	// clock+cycles (next falls back to Covered when they are not).
	var atClock int64
	haveClock := false
	if clock > last {
		atLast := l.Covered(last)
		atClock = l.next(clock)
		haveClock = true
		h.Idle = atClock - atLast
	}
	if stall > 0 || cycles > stall {
		if !haveClock {
			atClock = l.Covered(clock)
		}
		atStall := atClock
		if stall > 0 {
			atStall = l.next(clock + stall)
			h.Stall = atStall - atClock
		}
		if cycles > stall {
			h.Issue = l.next(clock+cycles) - atStall
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
	var atClock int64
	if clock > last {
		atLast := l.Covered(last)
		atClock = l.next(clock)
		h.Idle = atClock - atLast
	} else {
		atClock = l.Covered(clock)
	}
	if stall > 0 {
		h.Stall = l.next(clock+stall) - atClock
	}
	return h
}

// coalescer coalesces spans as they come: it appends them and, whenever
// the spans added since the last compaction are as many as the intervals
// that compaction left (and at least a threshold), sorts everything and
// coalesces it in place. That bounds its memory by about twice the
// coalesced intervals, each span is sorted a bounded number of times
// (the compactions' sizes at least double), and the result is that of
// coalescing all spans at once, because coalescing is compositional: in
// the sorted sweep, a coalesced interval (start S, length L) behaves
// exactly as the spans it came from (all of them end up in one
// accumulator whatever else is added, each other span starting in
// [S, S+L] joins that accumulator either way, and every span starting
// after S+L sees the same accumulated length). TestCoalescerAgrees checks
// it against Coalesce.
type coalescer struct {
	ivs   []Interval // ivs[:done] coalesced and sorted, then the spans added since
	done  int
	every int        // the compaction threshold (0: defaultEvery; tests make it small)
	tmp   []Interval // radix sort buffer
}

const defaultEvery = 4096

func (c *coalescer) add(s Span) {
	c.ivs = append(c.ivs, Interval{End: s.Start + s.Len, Len: s.Len})
	if n := len(c.ivs) - c.done; n >= c.done && n >= cmp.Or(c.every, defaultEvery) {
		c.compact()
	}
}

// addIntervals adds coalesced intervals (spans too, by compositionality)
// without compacting: the caller asks for intervals once they are all in.
func (c *coalescer) addIntervals(ivs []Interval) { c.ivs = append(c.ivs, ivs...) }

// compact sorts the intervals by start (the order of equal starts does
// not matter, see sortSpans) and coalesces them in place.
func (c *coalescer) compact() {
	if len(c.ivs) == 0 {
		return
	}
	var g []Interval
	g, c.tmp = radixStarts(c.ivs, c.tmp)
	// In place: out never overtakes the read position (the first
	// interval always joins the accumulator it begins).
	out := g[:0]
	acc := Span{Start: g[0].Start()}
	for _, iv := range g {
		if s := iv.Start(); s > acc.Start+acc.Len {
			out = append(out, Interval{End: acc.Start + acc.Len, Len: acc.Len})
			acc = Span{Start: s, Len: iv.Len}
			continue
		}
		acc.Len += iv.Len
	}
	c.ivs = append(out, Interval{End: acc.Start + acc.Len, Len: acc.Len})
	c.done = len(c.ivs)
}

// intervals returns the coalesced intervals of everything added. The
// slice is the coalescer's: it stays valid until the next add.
func (c *coalescer) intervals() []Interval {
	if c.done < len(c.ivs) {
		c.compact()
	}
	return c.ivs
}

// reset empties the coalescer, keeping its storage.
func (c *coalescer) reset() { c.ivs, c.done = c.ivs[:0], 0 }

// radixStarts sorts p by start, with buf as the other buffer. It
// returns the sorted intervals (in p's or buf's storage) and the other
// buffer, to keep for the next sort.
//
// Intervals gathered wave after wave come nearly sorted (each wave's are
// sorted, and a scope's waves come about in time order), so it first
// tries one counting pass on the high bits of start - min, into about a
// quarter as many buckets as intervals, which leaves each interval among
// the few others of its bucket, and an insertion sort to finish. When the
// insertion sort would move too much (input far from sorted, or crowded
// buckets), a least-significant-digit radix sort takes over.
func radixStarts(p, buf []Interval) (sorted, spare []Interval) {
	if len(p) < 256 {
		slices.SortFunc(p, func(a, b Interval) int { return cmp.Compare(a.Start(), b.Start()) })
		return p, buf
	}
	lo, hi := p[0].Start(), p[0].Start()
	for _, iv := range p {
		s := iv.Start()
		lo, hi = min(lo, s), max(hi, s)
	}
	width := uint(bits.Len64(uint64(hi) - uint64(lo)))
	if width == 0 {
		return p, buf
	}
	buf = slices.Grow(buf[:0], len(p))[:len(p)]
	var shift uint
	if b := uint(bits.Len(uint(len(p)))) - 2; width > b {
		shift = width - b
	}
	count := make([]int, (uint64(hi)-uint64(lo))>>shift+2)
	for _, iv := range p {
		count[(uint64(iv.Start())-uint64(lo))>>shift+1]++
	}
	for i := 1; i < len(count); i++ {
		count[i] += count[i-1]
	}
	for _, iv := range p {
		d := (uint64(iv.Start()) - uint64(lo)) >> shift
		buf[count[d]] = iv
		count[d]++
	}
	if insertionByStart(buf, 4*len(buf)) {
		return buf, p
	}
	return lsdStarts(buf, p, lo, width)
}

// insertionByStart sorts s by start unless that takes more than budget
// moves; it reports whether it did. s stays a permutation either way.
func insertionByStart(s []Interval, budget int) bool {
	for i := 1; i < len(s); i++ {
		v := s[i]
		vs := v.Start()
		j := i
		for j > 0 && s[j-1].Start() > vs {
			s[j] = s[j-1]
			j--
		}
		s[j] = v
		if budget -= i - j; budget < 0 {
			return false
		}
	}
	return true
}

// lsdStarts sorts p by start, least significant digit of start - lo
// first, in as few passes of at most 13 bits as width bits need (two
// below 2^26 cycles), with buf (as long as p) as the other buffer.
func lsdStarts(p, buf []Interval, lo int64, width uint) (sorted, spare []Interval) {
	const maxDigit = 13
	passes := (width + maxDigit - 1) / maxDigit
	digit := (width + passes - 1) / passes
	mask := uint64(1)<<digit - 1
	src, dst := p, buf
	count := make([]int, 1<<digit)
	for shift := uint(0); shift < width; shift += digit {
		clear(count)
		for _, iv := range src {
			count[(uint64(iv.Start())-uint64(lo))>>shift&mask]++
		}
		sum := 0
		for i, n := range count {
			count[i] = sum
			sum += n
		}
		for _, iv := range src {
			d := (uint64(iv.Start()) - uint64(lo)) >> shift & mask
			dst[count[d]] = iv
			count[d]++
		}
		src, dst = dst, src
	}
	return src, dst
}
