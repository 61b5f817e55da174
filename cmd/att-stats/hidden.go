package main

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/attkit/attkit/internal/fold"
	"github.com/attkit/attkit/internal/hidden"
	"github.com/attkit/attkit/internal/rollup"
	"github.com/attkit/attkit/internal/wire"
)

// HiddenCSVHeader is the header of upstream's hidden-latency control CSV
// (python-layer §9.2).
var HiddenCSVHeader = []string{"CodeObj", "Vaddr", "Instruction", "Latency", "HiddenIdle", "HiddenStall", "HiddenIssue"}

// exposure is one PC's cycles split as python-layer §8.1's recommended
// use splits them: total = latency + idle; hidden = hidden stall + hidden
// issue + min(hidden idle, idle) (hidden idle counts from the previous
// instruction's end, the fold's idle from the furthest end, so only the
// idle part needs the bound); exposed (non-hidden) = total - hidden.
type exposure struct {
	total, hidden, exposed int64
}

func exposureOf(e *fold.Entry, h hidden.Latency) exposure {
	c := rollup.Of(e, h)
	return exposure{total: e.Latency + e.Idle, hidden: c.Hidden, exposed: c.Exposed}
}

// writeHiddenCSV writes one row per PC whose hidden latency is not zero,
// in the stats CSV's order and bytes: CodeObj, Vaddr, Instruction,
// Latency, HiddenIdle, HiddenStall, HiddenIssue.
func writeHiddenCSV(w io.Writer, fo *fold.Fold, hid map[wire.PC]hidden.Latency) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	b := fold.AppendCSVRow(nil, HiddenCSVHeader...)
	for _, e := range fo.Ordered() {
		h := hid[e.PC]
		if h.Total() == 0 {
			continue
		}
		b = fold.AppendCSVRow(b, strconv.FormatUint(e.PC.CodeObjectID, 10), strconv.FormatUint(e.PC.Address, 10), e.Text,
			strconv.FormatInt(e.Latency, 10), strconv.FormatInt(h.Idle, 10), strconv.FormatInt(h.Stall, 10), strconv.FormatInt(h.Issue, 10))
		if len(b) > 32<<10 {
			if _, err := bw.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	if _, err := bw.Write(b); err != nil {
		return err
	}
	return bw.Flush()
}

type ranked struct {
	e *fold.Entry
	x exposure
}

// rankExposed returns the executed PCs ranked as §8.1 ranks them: by
// exposed cycles, then total, then hit count, all descending (then by PC,
// so that the order is total).
func rankExposed(fo *fold.Fold, hid map[wire.PC]hidden.Latency) []ranked {
	var rs []ranked
	for _, e := range fo.Entries() {
		if e.Hit == 0 {
			continue
		}
		rs = append(rs, ranked{e, exposureOf(e, hid[e.PC])})
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(b.x.exposed, a.x.exposed), cmp.Compare(b.x.total, a.x.total),
			cmp.Compare(b.e.Hit, a.e.Hit), fold.ComparePC(a.e.PC, b.e.PC))
	})
	return rs
}

// writeTop writes the hotspot table of §8.1 for a terminal: the limit PCs
// (all for 0) with the most exposed cycles, one a line, numbers
// right-aligned, then the instruction text and its source line.
func writeTop(w io.Writer, fo *fold.Fold, hid map[wire.PC]hidden.Latency, limit int) error {
	rs := rankExposed(fo, hid)
	if limit > 0 && len(rs) > limit {
		rs = rs[:limit]
	}
	head := []string{"Rank", "NonHidden", "Total", "Hidden", "Hits", "CodeObj", "Vaddr"}
	cells := make([][]string, len(rs))
	width := make([]int, len(head))
	for i, h := range head {
		width[i] = len(h)
	}
	for i, r := range rs {
		cells[i] = []string{strconv.Itoa(i + 1), strconv.FormatInt(r.x.exposed, 10), strconv.FormatInt(r.x.total, 10),
			strconv.FormatInt(r.x.hidden, 10), strconv.FormatInt(r.e.Hit, 10), strconv.FormatUint(r.e.PC.CodeObjectID, 10),
			fmt.Sprintf("0x%010x", r.e.PC.Address)}
		for k, c := range cells[i] {
			width[k] = max(width[k], len(c))
		}
	}
	bw := bufio.NewWriter(w)
	line := func(c []string, text string) {
		for k, v := range c {
			if k > 0 {
				bw.WriteByte(' ')
			}
			if k == len(c)-1 { // the address reads better left-aligned
				bw.WriteString(v)
				for range width[k] - len(v) {
					bw.WriteByte(' ')
				}
				continue
			}
			for range width[k] - len(v) {
				bw.WriteByte(' ')
			}
			bw.WriteString(v)
		}
		bw.WriteString("  ")
		bw.WriteString(text)
		bw.WriteByte('\n')
	}
	line(head, "Instruction / Source")
	for i, r := range rs {
		text := r.e.Text
		if text == "" {
			text = "?"
		}
		if r.e.Source != "" {
			text += " / " + r.e.Source
		}
		line(cells[i], text)
	}
	return bw.Flush()
}
