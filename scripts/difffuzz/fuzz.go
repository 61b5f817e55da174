package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// A harness decodes inputs with both decoders and sorts their differences
// into classes.
type harness struct {
	c       *corpus
	lib     *workerLibrary
	timeout time.Duration
	evals   int // decode pairs run
	classes map[string]*class
	order   []*class // in order of discovery
	// divergent lists every divergent input as "family index key", for
	// divergent.txt (and -only).
	divergent []string
}

// A class is one kind of divergence: its family and generation, its key
// (diffKeys), and the kind of the first token at which it appears.
type class struct {
	fam, gen  string
	key       string
	culprit   string
	count     int // inputs
	seeds     int // of which unmodified seeds
	inherited int // inputs whose only differences their seed already had
	first     *input
	best      *input // the smallest input of the class
	repro     *input // best, minimized
	reproOut  [2]outcome
	minEvals  int
	culpritAt int // index of the first differing token in repro
	file      string
	// unpadded: the input ends with less than 16 zero bytes and the
	// difference goes away with 32 (the end-of-buffer rules of §2.3.1).
	unpadded bool
}

func (c *class) id() string {
	s := c.gen + " | " + c.key + " | first differing token: " + c.culprit
	if c.unpadded {
		s += " | " + unpaddedNote
	}
	return s
}

const unpaddedNote = "only at an unpadded end of buffer"

// unpadded reports whether the input's difference key needs its short
// padding: an input ending in less than 16 zero bytes that loses it with 32.
func (h *harness) unpadded(in *input, key string) (bool, error) {
	if in.pad >= 16 || slow(key) {
		return false, nil
	}
	k, err := h.keys(in.with(in.toks, 32))
	return !slices.Contains(k, key), err
}

// eval decodes one input with both decoders.
func (h *harness) eval(in *input) (n, l outcome, keys []string, err error) {
	data := in.bytes()
	h.evals++
	n = decodeNative(data, h.c.isas[in.isa], h.timeout)
	l, err = h.lib.decode(data, in.isa)
	if err != nil {
		return n, l, nil, err
	}
	return n, l, diffKeys(&n, &l), nil
}

func (h *harness) keys(in *input) ([]string, error) {
	_, _, k, err := h.eval(in)
	return k, err
}

// slow reports whether inputs with this key take the timeout to decode:
// they are neither bisected nor minimized.
func slow(key string) bool { return strings.HasSuffix(key, " hang") }

// culprit finds the first token at which the divergence key appears: the
// smallest k such that the input's first k tokens (with its padding)
// show it, by bisection (the whole input shows it; the empty one is taken
// not to). It returns the index of that token.
func (h *harness) culprit(in *input, key string) (int, error) {
	if slow(key) {
		return -1, nil
	}
	lo, hi := 0, len(in.toks)
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		k, err := h.keys(in.with(in.toks[:mid], in.pad))
		if err != nil {
			return 0, err
		}
		if slices.Contains(k, key) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi - 1, nil
}

func (h *harness) culpritName(in *input, i int) string {
	if i < 0 {
		return "n/a"
	}
	return in.g.tokenName(&in.toks[i])
}

// classify sorts one input's differences into a class. The class is named
// by the first difference its seeds (and splice donors) do not show
// unmodified; when they show them all, by its first difference.
func (h *harness) classify(in *input, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	base := map[string]bool{}
	if in.num >= 0 {
		for _, s := range in.seeds {
			for _, k := range s.base {
				base[k] = true
			}
		}
	}
	key, inherited := keys[0], true
	for _, k := range keys {
		if !base[k] {
			key, inherited = k, false
			break
		}
	}
	at, err := h.culprit(in, key)
	if err != nil {
		return err
	}
	unpadded, err := h.unpadded(in, key)
	if err != nil {
		return err
	}
	c := &class{fam: in.fam, gen: in.g.name, key: key, culprit: h.culpritName(in, at), unpadded: unpadded}
	if old, ok := h.classes[c.id()]; ok {
		c = old
	} else {
		c.first = in
		h.classes[c.id()] = c
		h.order = append(h.order, c)
	}
	c.count++
	if in.num < 0 {
		c.seeds++
	}
	if inherited && in.num >= 0 {
		c.inherited++
	}
	if c.best == nil || len(in.bytes()) < len(c.best.bytes()) {
		c.best = in
	}
	return nil
}

// famStats are the counts of one family's run.
type famStats struct {
	name            string
	seeds, seedsDiv int
	inputs          int
	divergent       int
	elapsed         time.Duration
}

// fuzz runs n inputs of one family.
func (h *harness) fuzz(fam string, famIndex, n, from int, only []int, runSeed uint64, progress io.Writer) (famStats, error) {
	st := famStats{name: fam}
	var pool []*seed
	for _, s := range h.c.seeds {
		if s.fam == fam {
			pool = append(pool, s)
		}
	}
	if len(pool) == 0 {
		return st, fmt.Errorf("the corpus has no %s traces", fam)
	}
	start := time.Now()
	// The unmodified seeds first: what they already show is no news in
	// their mutants.
	for _, s := range pool {
		in := seedInput(s)
		keys, err := h.keys(in)
		if err != nil {
			return st, err
		}
		s.base = keys
		st.seeds++
		if len(keys) > 0 {
			st.seedsDiv++
			if err := h.classify(in, keys); err != nil {
				return st, err
			}
		}
	}
	m := newMutator(pool)
	last := time.Now()
	idx := func(k int) int { return from + k }
	if only != nil {
		n = len(only)
		idx = func(k int) int { return only[k] }
	}
	for k := range n {
		i := idx(k)
		in := m.input(runSeed, famIndex, i)
		keys, err := h.keys(in)
		if err != nil {
			return st, err
		}
		st.inputs++
		if len(keys) > 0 {
			st.divergent++
			h.divergent = append(h.divergent, fmt.Sprintf("%s %d %s", fam, i, keys[0]))
			if err := h.classify(in, keys); err != nil {
				return st, err
			}
		}
		if time.Since(last) > 10*time.Second {
			last = time.Now()
			fmt.Fprintf(progress, "difffuzz: %s: %d of %d inputs, %d divergent, %d classes so far, %.0f inputs/s\n",
				fam, k+1, n, st.divergent, len(h.order), float64(k+1)/time.Since(start).Seconds())
		}
	}
	st.elapsed = time.Since(start)
	return st, nil
}

// minimize shrinks a class's smallest input: it drops runs of tokens
// (halving their length, down to single tokens) while the input still
// shows the class's difference with the same first differing token, then
// tries less padding. It stops after budget decode pairs.
func (h *harness) minimize(c *class, budget int) error {
	in := c.best
	if slow(c.key) {
		c.repro = in
		return nil
	}
	start := h.evals
	keeps := func(cand *input) (bool, error) {
		k, err := h.keys(cand)
		if err != nil || !slices.Contains(k, c.key) {
			return false, err
		}
		at, err := h.culprit(cand, c.key)
		if err != nil || h.culpritName(cand, at) != c.culprit {
			return false, err
		}
		u, err := h.unpadded(cand, c.key)
		return u == c.unpadded, err
	}
	toks := in.toks
	for chunk := max(1, len(toks)/2); ; chunk /= 2 {
		progress := true
		for progress {
			progress = false
			for i := 1; i < len(toks) && h.evals-start < budget; {
				end := min(i+chunk, len(toks))
				cand := append(toks[:i:i], toks[end:]...)
				ok, err := keeps(in.with(cand, in.pad))
				if err != nil {
					return err
				}
				if ok {
					toks, progress = cand, true
				} else {
					i = end
				}
			}
			progress = progress && chunk == 1 // repeat only the last pass
		}
		if chunk == 1 || h.evals-start >= budget {
			break
		}
	}
	pad := in.pad
	for _, p := range []int{0, 8, 16, 32} {
		if p >= pad {
			break
		}
		ok, err := keeps(in.with(toks, p))
		if err != nil {
			return err
		}
		if ok {
			pad = p
			break
		}
	}
	c.repro = in.with(toks, pad)
	c.minEvals = h.evals - start
	n, l, _, err := h.eval(c.repro)
	if err != nil {
		return err
	}
	c.reproOut = [2]outcome{n, l}
	c.culpritAt, err = h.culprit(c.repro, c.key)
	return err
}
