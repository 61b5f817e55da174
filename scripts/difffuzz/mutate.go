package main

import (
	"fmt"
	"math/rand/v2"
)

// An input is one trace to decode: a seed after some mutations.
type input struct {
	g     *gen
	fam   string
	arch  string
	toks  []token
	pad   int
	isa   int
	seeds []*seed  // the seed it started from, then every donor of a splice or insertion
	ops   []string // the mutations, in order
	num   int      // input number, -1 for an unmodified seed
}

func (in *input) bytes() []byte { return assemble(in.toks, in.pad) }

// with returns a copy of in holding other tokens (for minimization).
func (in *input) with(toks []token, pad int) *input {
	c := *in
	c.toks, c.pad = toks, pad
	return &c
}

func seedInput(s *seed) *input {
	return &input{g: s.g, fam: s.fam, arch: s.arch, toks: s.toks, pad: s.pad, isa: s.isa, seeds: []*seed{s}, num: -1}
}

// A mutator makes the inputs of one family. Input i depends only on the
// seed of the run, the family and i.
type mutator struct {
	pool   []*seed            // the family's seeds
	byArch map[string][]*seed // splice donors: the same architecture
	maxLen int                // tokens an input may grow to
	rng    *rand.Rand
}

func newMutator(pool []*seed) *mutator {
	m := &mutator{pool: pool, byArch: map[string][]*seed{}}
	longest := 0
	for _, s := range pool {
		m.byArch[s.arch] = append(m.byArch[s.arch], s)
		longest = max(longest, len(s.toks))
	}
	m.maxLen = 4 * longest
	return m
}

// input makes input number i of the run with seed runSeed.
func (m *mutator) input(runSeed uint64, famIndex, i int) *input {
	m.rng = rand.New(rand.NewPCG(runSeed, uint64(famIndex)<<40|uint64(i)))
	s := m.pool[m.rng.IntN(len(m.pool))]
	in := seedInput(s)
	in.toks = append([]token(nil), s.toks...)
	in.num = i
	n := 1
	for n < 8 && m.rng.IntN(2) == 0 {
		n++
	}
	for range n {
		for try := 0; try < 16; try++ {
			if op := m.mutate(in); op != "" {
				in.ops = append(in.ops, op)
				break
			}
		}
	}
	// Frame the result again, so that the token list is the one the
	// decoders read (a moved token may now be read differently, e.g. as
	// a gfx12 WAVE_START_EXT extension byte).
	if toks, pad, err := in.g.frame(in.bytes()); err == nil {
		in.toks, in.pad = toks, pad
	}
	return in
}

// Mutation weights, out of their sum.
var ops = []struct {
	name   string
	weight int
}{
	{"drop", 16}, {"dup", 10}, {"swap", 10}, {"time", 16}, {"field", 24},
	{"cut", 5}, {"pad", 3}, {"splice", 7}, {"insert", 9},
}

func (m *mutator) mutate(in *input) string {
	total := 0
	for _, o := range ops {
		total += o.weight
	}
	r := m.rng.IntN(total)
	op := ops[0].name
	for _, o := range ops {
		if r < o.weight {
			op = o.name
			break
		}
		r -= o.weight
	}
	g := in.g
	n := len(in.toks)
	switch op {
	case "drop":
		i, ok := m.pos(in)
		if !ok {
			return ""
		}
		l := 1
		switch r := m.rng.IntN(10); {
		case r >= 9:
			l = 5 + m.rng.IntN(60)
		case r >= 7:
			l = 2 + m.rng.IntN(3)
		}
		l = min(l, n-i)
		desc := fmt.Sprintf("drop %d from %s@%d", l, g.tokenName(&in.toks[i]), i)
		in.toks = append(in.toks[:i:i], in.toks[i+l:]...)
		return desc
	case "dup":
		i, ok := m.pos(in)
		if !ok || n >= m.maxLen {
			return ""
		}
		j := i + 1
		if m.rng.IntN(10) < 3 {
			j = min(max(1, i+m.rng.IntN(33)-16), n)
		}
		t := in.toks[i]
		in.toks = append(in.toks[:j:j], append([]token{t}, in.toks[j:]...)...)
		return fmt.Sprintf("dup %s@%d to %d", g.tokenName(&t), i, j)
	case "swap":
		i, ok := m.pos(in)
		if !ok {
			return ""
		}
		j := min(i+1+m.rng.IntN(8), n-1)
		if j == i || !g.mutable(&in.toks[j]) {
			return ""
		}
		in.toks[i], in.toks[j] = in.toks[j], in.toks[i]
		return fmt.Sprintf("swap %s@%d %s@%d", g.tokenName(&in.toks[j]), i, g.tokenName(&in.toks[i]), j)
	case "time", "field":
		i, ok := m.pos(in)
		if !ok {
			return ""
		}
		t := &in.toks[i]
		k := &g.kinds[t.kind]
		var f field
		if op == "time" {
			if !k.hasTime() {
				return ""
			}
			f = field{"delta", k.tb, k.te}
		} else {
			if len(k.fields) == 0 {
				return ""
			}
			f = k.fields[m.rng.IntN(len(k.fields))]
		}
		if f.lo >= 4*len(t.nib) {
			return ""
		}
		old := t.bits(f.lo, f.hi)
		v := m.value(in, i, f)
		if v == old {
			return ""
		}
		nt := t.withBits(f.lo, f.hi, v)
		if !g.sameKind(&nt, t.kind) {
			return "" // the change would make it another token
		}
		in.toks[i] = nt
		return fmt.Sprintf("%s %s.%s@%d %#x->%#x", op, k.name, f.name, i, old, v)
	case "cut":
		if n < 2 {
			return ""
		}
		i := 1 + m.rng.IntN(n-1)
		desc := fmt.Sprintf("cut at %s@%d", g.tokenName(&in.toks[i]), i)
		t := in.toks[i]
		in.toks = in.toks[:i:i]
		if m.rng.IntN(4) == 0 && len(t.nib) > 2 {
			keep := 1 + m.rng.IntN(len(t.nib)-1)
			if !g.rdna {
				keep = 2 * (1 + m.rng.IntN(len(t.nib)/2-1))
			}
			in.toks = append(in.toks, token{kind: g.tail, nib: t.nib[:keep]})
			desc += fmt.Sprintf(" inside (%d of %d bits kept)", 4*keep, 4*len(t.nib))
		}
		if m.rng.IntN(3) == 0 {
			in.pad = 0
			desc += ", no padding"
		}
		return desc
	case "pad":
		pads := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 64, 256}
		p := pads[m.rng.IntN(len(pads))]
		if p == in.pad {
			return ""
		}
		in.pad = p
		return fmt.Sprintf("pad %d", p)
	case "splice", "insert":
		d := m.donor(in)
		if d == nil || len(d.toks) < 2 {
			return ""
		}
		j := 1 + m.rng.IntN(n)
		i := 1 + m.rng.IntN(len(d.toks)-1)
		if op == "splice" {
			if j+len(d.toks)-i > m.maxLen {
				return ""
			}
			in.seeds = append(in.seeds, d)
			in.toks = append(in.toks[:j:j], d.toks[i:]...)
			in.pad = d.pad
			return fmt.Sprintf("splice at %d: the rest from %s@%d", j, d.name, i)
		}
		l := 1
		switch r := m.rng.IntN(10); {
		case r >= 9:
			l = 9 + m.rng.IntN(56)
		case r >= 6:
			l = 2 + m.rng.IntN(7)
		}
		l = min(l, len(d.toks)-i)
		if n+l > m.maxLen {
			return ""
		}
		chunk := d.toks[i : i+l]
		for k := range chunk {
			if !g.mutable(&chunk[k]) {
				return ""
			}
		}
		in.seeds = append(in.seeds, d)
		in.toks = append(in.toks[:j:j], append(append([]token(nil), chunk...), in.toks[j:]...)...)
		return fmt.Sprintf("insert at %d: %d from %s@%d (%s...)", j, l, d.name, i, g.tokenName(&chunk[0]))
	}
	return ""
}

// pos picks a token that may be changed (never the header).
func (m *mutator) pos(in *input) (int, bool) {
	if len(in.toks) < 2 {
		return 0, false
	}
	for range 8 {
		i := 1 + m.rng.IntN(len(in.toks)-1)
		if in.g.mutable(&in.toks[i]) {
			return i, true
		}
	}
	return 0, false
}

// donor picks a seed of the input's architecture to take tokens from.
func (m *mutator) donor(in *input) *seed {
	ds := m.byArch[in.arch]
	if len(ds) == 0 {
		return nil
	}
	d := ds[m.rng.IntN(len(ds))]
	if d.g != in.g {
		return nil
	}
	return d
}

// value picks a new value for field f of token i: a small step, the value
// another token of the same kind holds, a random one, zero, a flipped bit
// or all ones.
func (m *mutator) value(in *input, i int, f field) uint64 {
	t := &in.toks[i]
	w := f.hi - f.lo + 1
	mask := uint64(1)<<w - 1
	v := t.bits(f.lo, f.hi)
	switch r := m.rng.IntN(100); {
	case r < 30:
		d := uint64(1 + m.rng.IntN(3))
		if m.rng.IntN(2) == 0 {
			v += d
		} else {
			v -= d
		}
	case r < 55:
		start := m.rng.IntN(len(in.toks))
		for k := range 256 {
			u := &in.toks[(start+k)%len(in.toks)]
			if u.kind == t.kind && u.bits(f.lo, f.hi) != v {
				v = u.bits(f.lo, f.hi)
				break
			}
		}
	case r < 75:
		v = m.rng.Uint64()
	case r < 85:
		v = 0
	case r < 95:
		v ^= 1 << m.rng.IntN(w)
	default:
		v = mask
	}
	return v & mask
}
