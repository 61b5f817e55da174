package main

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/attkit/attkit/internal/cli"
	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/fold"
	"github.com/attkit/attkit/internal/hidden"
	"github.com/attkit/attkit/internal/jq"
	"github.com/attkit/attkit/internal/wire"
)

// A diffSide is one capture of --diff: its per-PC counters, from a stats
// CSV, a code.json or record streams (only these give exposed cycles).
type diffSide struct {
	name    string
	rows    []*diffRow
	exposed bool
}

type diffRow struct {
	pc                 wire.PC
	text, source       string
	hit, lat, st, idle int64
	exp                int64
	matched            bool
}

// readDiffSide reads one side of --diff, telling the kinds apart by their
// content: a header row naming CodeObj is a stats CSV, a JSON document
// with "code" a code.json, anything else a record stream (folded as
// without --diff, with the index, --run, --merge-runs and --jq).
func readDiffSide(env *cli.Env, f *flags, ix *wire.Index, filter *jq.Filter, path string) (*diffSide, error) {
	head, err := sniff(path)
	if err != nil {
		return nil, err
	}
	s := &diffSide{name: path}
	switch {
	case bytes.HasPrefix(bytes.TrimPrefix(head, []byte("\ufeff")), []byte("CodeObj")):
		c := fold.NewControl()
		if err := readControl(env, c, path); err != nil {
			return nil, err
		}
		for _, e := range c.Entries() {
			s.rows = append(s.rows, &diffRow{pc: e.PC, text: e.Text, source: e.Source,
				hit: e.ExpHit, lat: e.ExpLatency, st: e.ExpStall, idle: e.ExpIdle})
		}
		return s, nil
	case isCodeJSON(head):
		doc, err := env.ReadIndex(path, f.Lenient)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		for i := range doc.Rows {
			r := &doc.Rows[i]
			if r.Raw != nil || r.IsLabel() {
				continue
			}
			s.rows = append(s.rows, &diffRow{pc: r.PC(), text: r.Text, source: r.Source,
				hit: r.Hit, lat: r.Latency, st: r.Stall, idle: r.Idle})
		}
		return s, nil
	}
	one := *f
	one.Streams = []string{path}
	an := hidden.New(hidden.Options{Matrix: hidden.MatrixPCs(ix)})
	defer an.Close()
	folds, err := foldStreams(env, &one, ix, filter, nil, an)
	if err != nil {
		return nil, err
	}
	fo, err := onlyFold(folds)
	if err != nil {
		return nil, err
	}
	res, err := an.Result()
	if err != nil {
		return nil, err
	}
	s.exposed = true
	for _, e := range fo.Ordered() {
		if e.Hit == 0 && e.Latency == 0 && e.Stall == 0 && e.Idle == 0 {
			continue
		}
		s.rows = append(s.rows, &diffRow{pc: e.PC, text: e.Text, source: e.Source,
			hit: e.Hit, lat: e.Latency, st: e.Stall, idle: e.Idle, exp: exposureOf(e, res.ByPC[e.PC]).exposed})
	}
	return s, nil
}

// sniff returns the first bytes of a file, after white space.
func sniff(path string) ([]byte, error) {
	if path == "-" {
		return nil, exitcode.Errorf(exitcode.Usage, "--diff reads files: %q is standard input", path)
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	b := make([]byte, 4096)
	n, err := io.ReadFull(fh, b)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return bytes.TrimLeft(b[:n], " \t\r\n"), nil
}

// isCodeJSON tells a code.json document ({"code": …} or with its other
// top-level keys first) from the JSON lines of a record stream, whose
// objects carry "type".
func isCodeJSON(head []byte) bool {
	if len(head) == 0 || head[0] != '{' {
		return false
	}
	line, _, _ := bytes.Cut(head, []byte("\n"))
	return !bytes.Contains(line, []byte(`"type":`)) || bytes.Contains(head, []byte(`"code"`))
}

type diffPair struct {
	before, after *diffRow
}

// matchRows pairs the PCs of two sides: by (code object, address) when the
// instruction texts agree (or one is unknown), then, for PCs that moved
// (another build, another code object), by source line and instruction
// text, the k-th occurrence of a pair with the k-th.
func matchRows(a, b *diffSide) []diffPair {
	var out []diffPair
	byPC := map[wire.PC]*diffRow{}
	for _, r := range a.rows {
		byPC[r.pc] = r
	}
	for _, r := range b.rows {
		if o := byPC[r.pc]; o != nil && !o.matched && (o.text == r.text || o.text == "" || r.text == "") {
			o.matched, r.matched = true, true
			out = append(out, diffPair{o, r})
		}
	}
	type key struct{ source, text string }
	queue := map[key][]*diffRow{}
	for _, r := range a.rows {
		if !r.matched {
			k := key{r.source, r.text}
			queue[k] = append(queue[k], r)
		}
	}
	for _, r := range b.rows {
		if r.matched {
			continue
		}
		k := key{r.source, r.text}
		if q := queue[k]; len(q) > 0 && (r.text != "" || r.source != "") {
			queue[k] = q[1:]
			q[0].matched, r.matched = true, true
			out = append(out, diffPair{q[0], r})
			continue
		}
		out = append(out, diffPair{nil, r})
	}
	for _, r := range a.rows {
		if !r.matched {
			out = append(out, diffPair{r, nil})
		}
	}
	return out
}

type deltas struct{ hit, lat, st, idle, exp int64 }

func (d *deltas) add(r *diffRow, sign int64) {
	if r == nil {
		return
	}
	d.hit += sign * r.hit
	d.lat += sign * r.lat
	d.st += sign * r.st
	d.idle += sign * r.idle
	d.exp += sign * r.exp
}

func (d deltas) zero() bool { return d == deltas{} }

// writeDiff prints the per-PC and per-line changes from before to after.
func writeDiff(w io.Writer, a, b *diffSide) error {
	exposed := a.exposed && b.exposed
	pairs := matchRows(a, b)
	type pcRow struct {
		p diffPair
		d deltas
	}
	var pcs []pcRow
	type lineRow struct {
		line string
		d    deltas
	}
	lines := map[string]*lineRow{}
	var lineOrder []*lineRow
	addLine := func(r *diffRow, sign int64) {
		if r == nil {
			return
		}
		k := "(no source)"
		if fr := sourceFrames(r.source); len(fr) > 0 {
			k = fr[0].file
			if fr[0].line > 0 {
				k += ":" + strconv.FormatInt(fr[0].line, 10)
			}
		}
		l := lines[k]
		if l == nil {
			l = &lineRow{line: k}
			lines[k] = l
			lineOrder = append(lineOrder, l)
		}
		l.d.add(r, sign)
	}
	for _, p := range pairs {
		var d deltas
		d.add(p.after, 1)
		d.add(p.before, -1)
		addLine(p.after, 1)
		addLine(p.before, -1)
		if !d.zero() {
			pcs = append(pcs, pcRow{p, d})
		}
	}
	mag := func(d deltas) int64 {
		if exposed {
			return abs64(d.exp)
		}
		return abs64(d.lat)
	}
	slices.SortStableFunc(pcs, func(x, y pcRow) int { return cmp.Compare(mag(y.d), mag(x.d)) })
	slices.SortStableFunc(lineOrder, func(x, y *lineRow) int { return cmp.Compare(mag(y.d), mag(x.d)) })

	bw := bufio.NewWriter(w)
	by := "latency"
	if exposed {
		by = "exposed cycles"
	}
	fmt.Fprintf(bw, "%s -> %s: %d of %d PCs changed (by %s)\n", a.name, b.name, len(pcs), len(pairs), by)
	num := func(d deltas) []string {
		e := "-"
		if exposed {
			e = signed(d.exp)
		}
		return []string{signed(d.hit), signed(d.lat), signed(d.st), signed(d.idle), e}
	}
	var cells [][]string
	var tails []string
	for _, r := range pcs {
		cur := r.p.after
		note := ""
		switch {
		case r.p.before == nil:
			note = " (only after)"
		case r.p.after == nil:
			cur, note = r.p.before, " (only before)"
		case r.p.before.pc != r.p.after.pc:
			note = fmt.Sprintf(" (before: %d 0x%010x)", r.p.before.pc.CodeObjectID, r.p.before.pc.Address)
		}
		cells = append(cells, append(num(r.d), strconv.FormatUint(cur.pc.CodeObjectID, 10), fmt.Sprintf("0x%010x", cur.pc.Address)))
		text := cur.text
		if text == "" {
			text = "?"
		}
		if cur.source != "" {
			text += " / " + cur.source
		}
		tails = append(tails, text+note)
	}
	writeTable(bw, []string{"Hits", "Latency", "Stall", "Idle", "Exposed", "CodeObj", "Vaddr"}, cells, "Instruction / Source", tails)
	cells, tails = nil, nil
	for _, l := range lineOrder {
		if l.d.zero() {
			continue
		}
		cells = append(cells, num(l.d))
		tails = append(tails, l.line)
	}
	fmt.Fprintf(bw, "\nby source line: %d changed\n", len(cells))
	writeTable(bw, []string{"Hits", "Latency", "Stall", "Idle", "Exposed"}, cells, "Source", tails)
	return bw.Flush()
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func signed(v int64) string {
	if v > 0 {
		return "+" + strconv.FormatInt(v, 10)
	}
	return strconv.FormatInt(v, 10)
}

// writeTable writes rows of right-aligned cells (a last cell starting
// with 0x is left-aligned), then two spaces and the row's text.
func writeTable(bw *bufio.Writer, head []string, cells [][]string, tailHead string, tails []string) {
	width := make([]int, len(head))
	for i, h := range head {
		width[i] = len(h)
	}
	for _, c := range cells {
		for k, v := range c {
			width[k] = max(width[k], len(v))
		}
	}
	line := func(c []string, text string) {
		for k, v := range c {
			if k > 0 {
				bw.WriteByte(' ')
			}
			pad := strings.Repeat(" ", width[k]-len(v))
			if k == len(c)-1 && (strings.HasPrefix(v, "0x") || v == "Vaddr") {
				bw.WriteString(v + pad)
			} else {
				bw.WriteString(pad + v)
			}
		}
		bw.WriteString("  ")
		bw.WriteString(text)
		bw.WriteByte('\n')
	}
	line(head, tailHead)
	for i, c := range cells {
		line(c, tails[i])
	}
}
