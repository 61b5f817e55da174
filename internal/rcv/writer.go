package rcv

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/attkit/attkit/internal/wire"
)

// Version is the viewer-file version upstream's Python writer puts into
// filenames.json and occupancy.json.
const Version = "3.1.0"

// A Fold is the per-PC fold behind code.json: the writer folds every wave
// into it (§4.1) and asks it the line number of every instruction of a
// wave file (§4.2). internal/fold implements it.
type Fold interface {
	AddWave(w *wire.Wave)
	Line(pc wire.PC) int64
	CodeJSON() []byte
}

// Options select what a Writer writes.
type Options struct {
	// JSON writes the viewer's JSON files; without it only code.json is
	// written (upstream's csv-only mode).
	JSON bool
	// DecodeMarkers applies the packed-marker normalisation and timestamp
	// correction of §5.11 to shader data, when the index has a marker layout.
	DecodeMarkers bool
	// CounterNames fill filenames.json's counter_names (upstream's Python
	// writer leaves it empty; rocprofv3's own writer puts the capture's
	// counters there): the viewer names perf-counter values of bank 0 by
	// names 0-3 and of bank 1 by names 4-7. See ParseCounters.
	CounterNames []string
}

// A Writer turns the records of one run into the files of a viewer folder.
// Call BeginTrace for each trace (each part of a record stream), AddBatch
// for its batches, and Finish once at the end. A Writer is not safe for
// concurrent use.
type Writer struct {
	out  Sink
	ix   *wire.Index
	fold Fold
	opt  Options

	deferSD bool // keep shader data until Finish (marker correction)

	gfxip     uint64
	haveGFXIP bool
	hdrGFXIP  int
	freq      uint64
	realtime  bool

	ses []int
	se  map[int]*seData

	cur    *traceData
	kept   []*traceData // traces whose shader data waits for Finish
	waves  waveTree
	other  fileLists
	shader fileLists

	buf []byte

	stats Stats
}

// Stats counts what a Writer wrote.
type Stats struct {
	Traces    int   // traces (stream parts) added
	Waves     int   // waves folded
	WaveFiles int   // wave files written
	Occupancy int   // occupancy records
	Files     int   // files written, all kinds
	Bytes     int64 // bytes written, all files
}

// seData is what one shader engine contributes to the index files.
type seData struct {
	occupancy  []wire.Occupancy
	events     []wire.Event
	dispatches []wire.Dispatch
	realtime   []wire.Realtime
}

// traceData holds the per-trace records written when the trace ends.
type traceData struct {
	se    int
	perf  []wire.PerfEvent
	other []wire.OtherSIMD
	sd    []wire.ShaderData
}

// NewWriter returns a Writer that writes into out, folding waves into f.
// ix is the run's index (nil for none): its kernels name the kernel ids and
// its marker tables drive §5.11.
func NewWriter(out Sink, ix *wire.Index, f Fold, opt Options) *Writer {
	if ix == nil {
		ix = &wire.Index{}
	}
	return &Writer{
		out:     out,
		ix:      ix,
		fold:    f,
		opt:     opt,
		deferSD: opt.JSON && opt.DecodeMarkers && len(ix.FuncmapLayout) > 0,
		se:      map[int]*seData{},
		waves:   waveTree{se: map[int]*simdNode{}},
		other:   fileLists{m: map[int][]fileEntry{}},
		shader:  fileLists{m: map[int][]fileEntry{}},
	}
}

// Stats returns what the Writer wrote so far.
func (w *Writer) Stats() Stats { return w.stats }

// BeginTrace starts a trace of the shader engine h.Trace.SE, ending the
// previous one.
func (w *Writer) BeginTrace(h *wire.Header) error {
	if err := w.EndTrace(); err != nil {
		return err
	}
	se := h.Trace.SE
	if se < 0 {
		return fmt.Errorf("negative shader engine %d in the stream header", se)
	}
	if h.Trace.GFXIP > 0 {
		w.hdrGFXIP = h.Trace.GFXIP
	}
	if w.se[se] == nil {
		w.se[se] = &seData{}
		w.ses = append(w.ses, se)
	}
	w.cur = &traceData{se: se}
	w.stats.Traces++
	return nil
}

var errNoTrace = errors.New("rcv: records before the first trace header")

// AddBatch adds the records of one batch to the current trace. Wave files
// are written at once; b is not retained.
func (w *Writer) AddBatch(b *wire.Batch) error {
	t := w.cur
	if t == nil {
		return errNoTrace
	}
	sd := w.se[t.se]
	switch b.Type {
	case wire.TypeGFXIP:
		w.gfxip, w.haveGFXIP = b.GFXIP, true
	case wire.TypeRTFrequency:
		w.freq = b.RTFrequency
	case wire.TypeOccupancy:
		sd.occupancy = append(sd.occupancy, b.Occupancy...)
		w.stats.Occupancy += len(b.Occupancy)
	case wire.TypePerfEvent:
		t.perf = append(t.perf, b.PerfEvents...)
	case wire.TypeEvent:
		sd.events = append(sd.events, b.Events...)
	case wire.TypeDispatch:
		sd.dispatches = append(sd.dispatches, b.Dispatches...)
	case wire.TypeRealtime:
		sd.realtime = append(sd.realtime, b.Realtime...)
		if len(b.Realtime) > 0 {
			w.realtime = true
		}
	case wire.TypeInstOtherSIMD:
		t.other = append(t.other, b.OtherSIMD...)
	case wire.TypeShaderData:
		t.sd = append(t.sd, b.ShaderData...)
	case wire.TypeWave:
		for i := range b.Waves {
			wv := &b.Waves[i]
			w.fold.AddWave(wv)
			w.stats.Waves++
			if w.opt.JSON {
				if err := w.writeWave(t.se, wv); err != nil {
					return err
				}
			}
		}
	}
	// INFO records were reported by the decoder; markers and record types
	// this package does not know have no viewer file.
	return nil
}

// EndTrace writes the per-trace files of the current trace: its perf
// counter file, its other-SIMD file and (unless marker correction defers
// it to Finish) its shader-data file. BeginTrace and Finish call it.
func (w *Writer) EndTrace() error {
	t := w.cur
	if t == nil {
		return nil
	}
	w.cur = nil
	if !w.opt.JSON {
		return nil
	}
	if len(t.perf) > 0 {
		if err := w.write("se"+strconv.Itoa(t.se)+"_perfcounter.json", perfCounterJSON(t.perf)); err != nil {
			return err
		}
	}
	if len(t.other) > 0 {
		if err := w.writeOtherSIMD(t); err != nil {
			return err
		}
	}
	if len(t.sd) > 0 {
		if w.deferSD {
			w.kept = append(w.kept, &traceData{se: t.se, sd: t.sd})
			return nil
		}
		return w.writeShaderData(t)
	}
	return nil
}

// Finish ends the last trace and writes the files that cover the whole
// run: the shader-data files kept for marker correction, filenames.json,
// occupancy.json, realtime.json and code.json.
func (w *Writer) Finish() error {
	if err := w.EndTrace(); err != nil {
		return err
	}
	if w.opt.JSON {
		if w.deferSD {
			correctMarkers(w.ix, w.kept, w.se)
			for _, t := range w.kept {
				if err := w.writeShaderData(t); err != nil {
					return err
				}
			}
			w.kept = nil
		}
		if err := w.write("filenames.json", w.filenamesJSON()); err != nil {
			return err
		}
		if err := w.write("occupancy.json", w.occupancyJSON()); err != nil {
			return err
		}
		if w.realtime {
			if err := w.write("realtime.json", w.realtimeJSON()); err != nil {
				return err
			}
		}
	}
	return w.write("code.json", w.fold.CodeJSON())
}

func (w *Writer) write(name string, data []byte) error {
	if err := w.out.WriteFile(name, data); err != nil {
		return err
	}
	w.stats.Files++
	w.stats.Bytes += int64(len(data))
	return nil
}

// GFXIP returns the gfx IP major version written to filenames.json: the
// last GFXIP record of the run, else the last one a stream header named,
// else 9.
func (w *Writer) GFXIP() uint64 {
	switch {
	case w.haveGFXIP:
		return w.gfxip
	case w.hdrGFXIP > 0:
		return uint64(w.hdrGFXIP)
	}
	return 9
}
