package rcv

import (
	"bytes"
	"errors"
	"fmt"
	"io"

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

	spool *spoolFile // created at the first record that needs it
	err   error      // the first spool error: later calls return it

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

// seData is what one shader engine contributes to the index files, kept
// in the spool file.
type seData struct {
	occupancy  records[wire.Occupancy]
	occKept    []wire.Occupancy // marker correction only (deferSD)
	events     records[wire.Event]
	dispatches records[wire.Dispatch]
	// Whether the events and the dispatches came in time order (then
	// Finish merges them as it streams).
	evOrder, dpOrder timeOrder
	realtime         *list // rows of realtime.json's SE<N> list
}

// A timeOrder tells whether the times seen so far came in order.
type timeOrder struct {
	last     int64 // the latest time seen
	unsorted bool
}

func (o *timeOrder) see(t int64) {
	if t < o.last {
		o.unsorted = true
	} else {
		o.last = t
	}
}

// traceData holds the per-trace records written when the trace ends.
type traceData struct {
	se    int
	perf  *list // rows of se<SE>_perfcounter.json's "data"
	other *list // rows of other_simd_se<SE>_<K>.json's "instructions"
	// The first OTHER_SIMD record, and the end of the last.
	otherFirst wire.OtherSIMD
	otherEnd   int64
	sd         []wire.ShaderData // marker correction only (deferSD)
	sdRows     *list             // rows of shaderdata_<SE>_<K>.json's "records"
	sdSpan     span
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
		sp, err := w.spoolFile()
		if err != nil {
			return err
		}
		w.se[se] = &seData{
			occupancy: records[wire.Occupancy]{chain: chain{s: sp}}, events: records[wire.Event]{chain: chain{s: sp}},
			dispatches: records[wire.Dispatch]{chain: chain{s: sp}},
			realtime:   newList(sp, '[', 1)}
		w.ses = append(w.ses, se)
	}
	w.cur = &traceData{se: se}
	w.stats.Traces++
	return nil
}

var errNoTrace = errors.New("rcv: records before the first trace header")

// MaxBatch is the batch size readers of a record stream for a Writer cut
// larger batches to (wire.Reader.SetMaxBatch): what AddBatch writes does
// not depend on where batches end, and a decoder delivers some record
// types of a whole trace in one batch, so that bound is what keeps the
// memory of att-rcv the same for any size of trace.
const MaxBatch = 1024

// AddBatch adds the records of one batch to the current trace. Wave files
// are written at once; b is not retained. What it writes does not depend
// on where batches end (see MaxBatch).
func (w *Writer) AddBatch(b *wire.Batch) error {
	t := w.cur
	if t == nil {
		return errNoTrace
	}
	if w.err != nil {
		return w.err
	}
	if !w.opt.JSON && b.Type != wire.TypeWave {
		return nil // only code.json is written: waves are all it needs
	}
	sd := w.se[t.se]
	var err error
	switch b.Type {
	case wire.TypeGFXIP:
		w.gfxip, w.haveGFXIP = b.GFXIP, true
	case wire.TypeRTFrequency:
		w.freq = b.RTFrequency
	case wire.TypeOccupancy:
		err = sd.occupancy.add(b.Occupancy)
		if w.deferSD {
			sd.occKept = append(sd.occKept, b.Occupancy...)
		}
		w.stats.Occupancy += len(b.Occupancy)
	case wire.TypePerfEvent:
		err = w.addPerf(t, b.PerfEvents)
	case wire.TypeEvent:
		for i := range b.Events {
			sd.evOrder.see(b.Events[i].Time)
		}
		err = sd.events.add(b.Events)
	case wire.TypeDispatch:
		for i := range b.Dispatches {
			sd.dpOrder.see(b.Dispatches[i].Time)
		}
		err = sd.dispatches.add(b.Dispatches)
	case wire.TypeRealtime:
		err = addRealtime(sd.realtime, b.Realtime)
		if len(b.Realtime) > 0 {
			w.realtime = true
		}
	case wire.TypeInstOtherSIMD:
		err = w.addOtherSIMD(t, b.OtherSIMD)
	case wire.TypeShaderData:
		err = w.addShaderData(t, b.ShaderData)
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
	if err != nil {
		w.err = err
		return err
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
	if t.perf != nil {
		if err := w.writePerfCounters(t); err != nil {
			return err
		}
	}
	if t.other != nil {
		if err := w.writeOtherSIMD(t); err != nil {
			return err
		}
	}
	if w.deferSD && len(t.sd) > 0 {
		w.kept = append(w.kept, &traceData{se: t.se, sd: t.sd})
		return nil
	}
	if t.sdRows != nil {
		return w.writeShaderData(t)
	}
	return nil
}

// Finish ends the last trace and writes the files that cover the whole
// run: the shader-data files kept for marker correction, filenames.json,
// occupancy.json, realtime.json and code.json.
func (w *Writer) Finish() error {
	defer w.spool.close()
	if err := w.EndTrace(); err != nil {
		return err
	}
	if w.opt.JSON {
		if w.deferSD {
			correctMarkers(w.ix, w.kept, w.se)
			for _, t := range w.kept {
				if err := w.writeKeptShaderData(t); err != nil {
					return err
				}
			}
			w.kept = nil
		}
		if err := w.stream("filenames.json", w.writeFilenames); err != nil {
			return err
		}
		if err := w.stream("occupancy.json", w.writeOccupancy); err != nil {
			return err
		}
		if w.realtime {
			if err := w.stream("realtime.json", w.writeRealtime); err != nil {
				return err
			}
		}
	}
	return w.write("code.json", w.fold.CodeJSON())
}

// spoolFile returns the Writer's spool file, making it at the first call.
func (w *Writer) spoolFile() (*spoolFile, error) {
	if w.spool == nil && w.err == nil {
		w.spool, w.err = newSpool(w.out)
	}
	return w.spool, w.err
}

// stream writes the file name through fn: straight into the sink when it
// streams (a Folder), else through memory.
func (w *Writer) stream(name string, fn func(io.Writer) error) error {
	if s, ok := w.out.(Streamer); ok {
		var n int64
		err := s.Stream(name, func(dst io.Writer) error {
			c := &countWriter{w: dst}
			err := fn(c)
			n = c.n
			return err
		})
		if err != nil {
			return err
		}
		w.stats.Files++
		w.stats.Bytes += n
		return nil
	}
	var buf bytes.Buffer
	if err := fn(&buf); err != nil {
		return err
	}
	return w.write(name, buf.Bytes())
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
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
