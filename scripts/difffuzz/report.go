package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/attkit/attkit/internal/sqttgen"
	"github.com/attkit/attkit/internal/wire"
)

// sorted returns the classes, most frequent first (then in the order they
// were found).
func (h *harness) sorted() []*class {
	cs := append([]*class(nil), h.order...)
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].count > cs[j].count })
	return cs
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func fileBase(rank int, c *class) string {
	s := c.key + "-" + c.culprit
	if c.unpadded {
		s += "-unpadded"
	}
	slug := unsafeName.ReplaceAllString(s, "_")
	slug = strings.Trim(slug, "_")
	if len(slug) > 80 {
		slug = slug[:80]
	}
	return fmt.Sprintf("%03d-%s-%s", rank, c.gen, slug)
}

// clearOut removes what an earlier run wrote into dir.
func clearOut(dir string) error {
	old, _ := filepath.Glob(filepath.Join(dir, "[0-9][0-9][0-9]-*"))
	for _, f := range old {
		if strings.HasSuffix(f, ".att") || strings.HasSuffix(f, ".txt") {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeClass writes a class's reproducer (.att) and its description (.txt).
func (h *harness) writeClass(dir string, rank int, c *class, libPath string) error {
	base := fileBase(rank, c)
	att := filepath.Join(dir, base+".att")
	c.file = att
	in := c.repro
	data := in.bytes()
	if err := os.WriteFile(att, data, 0o644); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "class %d (%s, %s): %s\nfirst differing token: %s\n", rank, c.fam, c.gen, c.key, c.culprit)
	if c.unpadded {
		fmt.Fprintf(&b, "%s: the trace ends in %d zero bytes, and with 32 the difference goes away\n", unpaddedNote, c.repro.pad)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "inputs: %d", c.count)
	if c.seeds > 0 {
		fmt.Fprintf(&b, " (%d of them unmodified corpus traces)", c.seeds)
	}
	if c.inherited > 0 {
		fmt.Fprintf(&b, "; %d mutants show no difference their seed does not already show", c.inherited)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "first seen: %s\n", origin(c.first))
	fmt.Fprintf(&b, "reproducer: %s, %d bytes, %d tokens (minimized from %s, %d bytes, %d tokens, in %d decode pairs)\n",
		att, len(data), len(in.toks), origin(c.best), len(c.best.bytes()), len(c.best.toks), c.minEvals)
	fmt.Fprintf(&b, "ISA: %s\n\n", h.c.isaPaths[in.isa])
	n, l := &c.reproOut[0], &c.reproOut[1]
	fmt.Fprintf(&b, "native (internal/sqtt, --compat 0.1.6): %s\n", n.summary())
	fmt.Fprintf(&b, "library (%s): %s\n", h.lib.version(), l.summary())
	keys := diffKeys(n, l)
	if !slices.Contains(keys, c.key) {
		fmt.Fprintf(&b, "warning: decoded again, the reproducer does not show the difference (a decoder is not deterministic)\n")
	}
	if len(keys) > 1 {
		fmt.Fprintf(&b, "all differences of the reproducer: %s\n", strings.Join(keys, "; "))
	}
	off := offsets(in.toks)
	if c.culpritAt >= 0 {
		t := &in.toks[c.culpritAt]
		fmt.Fprintf(&b, "first differing token: #%d at byte %d (nibble %d): %s\n", c.culpritAt, off[c.culpritAt]/2, off[c.culpritAt], in.g.describe(t))
	}
	if n.fatal == "" && l.fatal == "" {
		// sqttgen.Diff names the first difference with its values; want is
		// the native decoder, got the library.
		fmt.Fprintf(&b, "\nfirst difference (sqttgen.Diff; want = native, got = library, both Normalize016):\n%s\n",
			sqttgen.Diff(n.batches, l.batches))
	}
	for i, o := range []*outcome{n, l} {
		if o.fatal == "" {
			fmt.Fprintf(&b, "\n%s records (JSON projection, after Normalize016):\n%s", [2]string{"native", "library"}[i], recordLines(o.batches, 80))
		}
	}
	if n.stack != "" {
		fmt.Fprintf(&b, "\n%s\n", n.stack)
	}
	fmt.Fprintf(&b, "\nreproduce:\n  att-decode --backend native --compat 0.1.6 --index %s --format json %s\n", h.c.isaPaths[in.isa], att)
	fmt.Fprintf(&b, "  att-decode --backend rocm --lib %s --index %s --format json %s\n", libPath, h.c.isaPaths[in.isa], att)
	b.WriteString("\ntokens (#index @byte.nibble kind fields):\n")
	lo, hi := 0, len(in.toks)
	if hi > 200 && c.culpritAt >= 0 {
		lo, hi = max(0, c.culpritAt-100), min(len(in.toks), c.culpritAt+100)
	} else if hi > 200 {
		hi = 200
	}
	if lo > 0 {
		fmt.Fprintf(&b, "  ... %d tokens\n", lo)
	}
	for i := lo; i < hi; i++ {
		mark := " "
		if i == c.culpritAt {
			mark = ">"
		}
		fmt.Fprintf(&b, "%s #%d @%d.%d %s\n", mark, i, off[i]/2, off[i]%2, in.g.describe(&in.toks[i]))
	}
	if hi < len(in.toks) {
		fmt.Fprintf(&b, "  ... %d tokens\n", len(in.toks)-hi)
	}
	fmt.Fprintf(&b, "  then %d zero bytes\n", in.pad)
	return os.WriteFile(filepath.Join(dir, base+".txt"), []byte(b.String()), 0o644)
}

// recordLines prints the records as att-decode --format json does, at
// most max lines.
func recordLines(bs []wire.Batch, max int) string {
	var jw wire.JSONWriter
	var h wire.Header
	var buf []byte
	for i := range bs {
		buf = jw.AppendBatch(buf, &h, &bs[i])
	}
	lines := strings.SplitAfter(string(buf), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) > max {
		return strings.Join(lines[:max], "") + fmt.Sprintf("... %d more\n", len(lines)-max)
	}
	return strings.Join(lines, "")
}

// origin says where an input comes from: its seed and mutations.
func origin(in *input) string {
	if in.num < 0 {
		return "the unmodified trace " + in.seeds[0].name
	}
	ops := strings.Join(in.ops, "; ")
	if len(ops) > 600 {
		ops = ops[:600] + "..."
	}
	return fmt.Sprintf("input %d, seed %s, mutations: %s", in.num, in.seeds[0].name, ops)
}

// summary prints the run's results.
func (h *harness) summary(w io.Writer, stats []famStats, classes []*class) {
	fmt.Fprintf(w, "%-6s %8s %10s %8s %16s %10s\n", "family", "inputs", "divergent", "classes", "seeds diverging", "inputs/s")
	total, secs := 0, 0.0
	for _, st := range stats {
		nc := 0
		for _, c := range classes {
			if c.fam == st.name {
				nc++
			}
		}
		rate := float64(st.inputs+st.seeds) / st.elapsed.Seconds()
		fmt.Fprintf(w, "%-6s %8d %10d %8d %16s %10.0f\n", st.name, st.inputs, st.divergent, nc,
			fmt.Sprintf("%d of %d", st.seedsDiv, st.seeds), rate)
		total += st.inputs + st.seeds
		secs += st.elapsed.Seconds()
	}
	if secs > 0 {
		fmt.Fprintf(w, "throughput: %.0f inputs/s (%d inputs in %.1fs, classification included)\n", float64(total)/secs, total, secs)
	}
	fmt.Fprintf(w, "\nclasses, most frequent first (inputs, family/generation, difference, first differing token, reproducer):\n")
	for i, c := range classes {
		note := ""
		if c.unpadded {
			note = " | " + unpaddedNote
		}
		fmt.Fprintf(w, "%3d %7d %s/%s %s | %s%s\n      %s\n", i+1, c.count, c.fam, c.gen, c.key, c.culprit, note, c.file)
	}
}
