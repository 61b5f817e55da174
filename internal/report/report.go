// Package report makes attkit's self-contained HTML report of a thread
// trace: att-report's page, and att-tool's --formats html.
//
// In: the index (code metadata, or nil), then the record-stream parts in
// order: each part's header (Report.Header) and its batches
// (Report.Batch), already selected by the caller (waveselect, --jq). Out:
// one HTML page (Report.Write) whose data is one JSON document (Data)
// inside a <script type="application/json"> element, every "<", ">" and
// "&" of it escaped, drawn by the page's own inline script and style sheet:
// no framework, no request, no font, nothing to install.
//
// What is gathered, in memory proportional to the index's PCs and not to
// the trace: per PC the fold's counters (internal/fold) and the hidden and
// exposed cycles (internal/hidden, python-layer §8, spooled to a temporary
// file as att-stats does), summed per kernel and per source line as
// internal/rollup sums them (a PC's line is the first file:line of its
// source chain); per kernel the wave durations (waveselect's histogram);
// per part (one shader engine of one run) the waves in flight over time in
// 1024 bins whose width doubles as the trace grows (from the occupancy
// records, or from the waves' begin and end when a part has none). Source
// files named by the index are embedded when found (at their path, or
// under Meta.SourceDirs; 4 MiB a file, 32 MiB in all).
//
// The page lists the ISA and the source lines in virtual lists: only the
// rows in view are in the DOM, rebuilt on scroll, so a kernel of 100,000
// instructions or more scrolls and sorts as one of 100; the histogram and
// the occupancy charts are canvases of fixed size.
package report

import (
	"io"

	"github.com/attkit/attkit/internal/hidden"
	"github.com/attkit/attkit/internal/waveselect"
	"github.com/attkit/attkit/internal/wire"
)

// A Report gathers the records of one report. It is not safe for
// concurrent use; Close releases its temporary file.
type Report struct {
	c  *collector
	an *hidden.Analyzer
	se int // the analyzer's key of the current part, -1 before the first
}

// Meta is what the page says about where its data came from.
type Meta struct {
	Title    string
	Producer string   // the tool and its version
	Inputs   []string // the input names shown
	Index    string   // the index's name, "" for none
	// SourceDirs are searched for source files the index names, after
	// their own path.
	SourceDirs []string
}

// New returns a report on the code of ix (nil: none). sel tells each
// wave's kernel and dispatch (nil: a selector without selection).
func New(ix *wire.Index, sel *waveselect.Selector) *Report {
	if sel == nil {
		sel, _ = waveselect.New(ix, waveselect.Options{}) // no options: no error
	}
	return &Report{c: newCollector(ix, sel), an: hidden.New(hidden.Options{Matrix: hidden.MatrixPCs(ix)}), se: -1}
}

// Header begins a part: every batch until the next header is of h's trace.
func (r *Report) Header(h *wire.Header) error {
	if r.se >= 0 {
		if err := r.an.EndSE(r.se); err != nil {
			return err
		}
	}
	r.se++
	r.c.startPart(h)
	return nil
}

// Batch adds a batch of the current part; b is not modified.
func (r *Report) Batch(b *wire.Batch) error {
	if r.se < 0 {
		return nil // records before any header: no part to add them to
	}
	switch b.Type {
	case wire.TypeInstOtherSIMD:
		r.an.AddOther(r.se, b.OtherSIMD)
	case wire.TypeOccupancy:
		r.c.addOccupancy(b.Occupancy)
	case wire.TypeGFXIP:
		r.c.gfxip(b.GFXIP)
	case wire.TypeWave:
		for i := range b.Waves {
			w := &b.Waves[i]
			r.c.addWave(w)
			if err := r.an.AddWave(r.se, w); err != nil {
				return err
			}
		}
	}
	return nil
}

// Parts returns the number of parts added.
func (r *Report) Parts() int { return r.c.parts }

// Executed returns the instructions executed and, of them, those whose PC
// the index lacks.
func (r *Report) Executed() (total, missing int64) {
	for _, e := range r.c.fold.Entries() {
		total += e.Hit
		if !e.InIndex {
			missing += e.Hit
		}
	}
	return total, missing
}

// Data completes the analysis and returns the page's data.
func (r *Report) Data(m Meta) (*Data, error) {
	res, err := r.an.Result()
	if err != nil {
		return nil, err
	}
	d, err := r.c.data(res.ByPC, sourceFinder(m.SourceDirs))
	if err != nil {
		return nil, err
	}
	d.Title, d.Producer, d.Inputs, d.Index = m.Title, m.Producer, m.Inputs, m.Index
	return d, nil
}

// Write completes the analysis and writes the page to w.
func (r *Report) Write(w io.Writer, m Meta) error {
	d, err := r.Data(m)
	if err != nil {
		return err
	}
	return WritePage(w, d)
}

// Close removes the report's temporary file.
func (r *Report) Close() error { return r.an.Close() }

// Index returns the index the report was made with (nil for none).
func (r *Report) Index() *wire.Index { return r.c.ix }
