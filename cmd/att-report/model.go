package main

import (
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/attkit/attkit/internal/fold"
	"github.com/attkit/attkit/internal/hidden"
	"github.com/attkit/attkit/internal/wire"
)

// A collector gathers what the page shows while the records stream by:
// the per-PC fold, per kernel its waves and their durations, per part
// (one shader engine of one run) its waves in flight over time.
type collector struct {
	ix      *wire.Index
	fold    *fold.Fold
	kernels []*kernel
	byPC    map[wire.PC]*kernel // from the index's function labels
	other   map[uint64]*kernel  // per code object, its PCs outside every kernel
	none    *kernel             // waves without a resolved instruction
	ses     []*part
	cur     *part
	parts   int
	arch    uint64
}

type kernel struct {
	Name  string
	CO    uint64
	waves int64
	// cycles is the sum of the waves' end - begin.
	cycles     int64
	minD, maxD int64
	hist       durHist
}

// A part is one record-stream part: one shader engine's trace.
type part struct {
	SE, Run int
	Path    string
	occ     occupancy // from occupancy records
	waveOcc occupancy // from the waves' begin and end
	hasOcc  bool
	waves   int64
}

func newCollector(ix *wire.Index) *collector {
	c := &collector{ix: ix, fold: fold.New(ix), byPC: map[wire.PC]*kernel{}, other: map[uint64]*kernel{}}
	c.kernelsOf()
	return c
}

// kernelsOf gives each instruction row of the index the kernel of the
// function label ("; _name", its Source the symbol) before it in the same
// code object, the demangled name when the index has one.
func (c *collector) kernelsOf() {
	if c.ix == nil {
		return
	}
	demangled := map[wire.PC]string{}
	for _, k := range c.ix.Kernels {
		if k.Demangled != "" && k.Demangled != k.Name {
			demangled[wire.PC{CodeObjectID: k.CodeObj, Address: k.Address}] = k.Demangled
		}
	}
	var cur *kernel
	var co uint64
	for i := range c.ix.Rows {
		r := &c.ix.Rows[i]
		if r.Raw != nil {
			continue
		}
		if r.CodeObj != co {
			cur, co = nil, r.CodeObj
		}
		if r.Kind == wire.RowFunction {
			name := r.Source
			if name == "" {
				name = strings.TrimPrefix(strings.TrimPrefix(r.Text, ";"), " _")
			}
			if d := demangled[r.PC()]; d != "" {
				name = d
			}
			cur = &kernel{Name: name, CO: r.CodeObj}
			c.kernels = append(c.kernels, cur)
			continue
		}
		if cur != nil && !r.IsLabel() {
			c.byPC[r.PC()] = cur
		}
	}
}

// kernelOf returns the kernel of pc: its function's, else one per code
// object for the PCs outside every function.
func (c *collector) kernelOf(pc wire.PC) *kernel {
	if k := c.byPC[pc]; k != nil {
		return k
	}
	k := c.other[pc.CodeObjectID]
	if k == nil {
		k = &kernel{Name: fmt.Sprintf("codeobj %d", pc.CodeObjectID), CO: pc.CodeObjectID}
		c.other[pc.CodeObjectID] = k
		c.kernels = append(c.kernels, k)
	}
	c.byPC[pc] = k
	return k
}

func (c *collector) startPart(h *wire.Header) {
	c.parts++
	for _, p := range c.ses {
		if p.SE == h.Trace.SE && p.Run == h.Trace.Run {
			c.cur = p
			return
		}
	}
	c.cur = &part{SE: h.Trace.SE, Run: h.Trace.Run, Path: h.Trace.Path}
	c.ses = append(c.ses, c.cur)
	if h.Trace.GFXIP != 0 && c.arch == 0 {
		c.arch = uint64(h.Trace.GFXIP)
	}
}

func (c *collector) gfxip(v uint64) {
	if c.arch == 0 {
		c.arch = v
	}
}

func (c *collector) addOccupancy(recs []wire.Occupancy) {
	p := c.cur
	for i := range recs {
		o := &recs[i]
		d := int64(-1)
		if o.Start {
			d = 1
		}
		p.occ.add(int64(o.Time), d)
		p.hasOcc = true
	}
}

// addWave folds w: its instructions per PC, its duration into the kernel of
// its first resolved instruction, its span into its part's waves in flight.
func (c *collector) addWave(w *wire.Wave) {
	c.fold.AddWave(w)
	var k *kernel
	for i := range w.Instructions {
		if pc := w.Instructions[i].PC; pc != (wire.PC{}) {
			k = c.kernelOf(pc)
			break
		}
	}
	if k == nil {
		if c.none == nil {
			c.none = &kernel{Name: "(no resolved instruction)"}
			c.kernels = append(c.kernels, c.none)
		}
		k = c.none
	}
	d := w.EndTime - w.BeginTime
	if k.waves == 0 || d < k.minD {
		k.minD = d
	}
	if k.waves == 0 || d > k.maxD {
		k.maxD = d
	}
	k.waves++
	k.cycles += d
	k.hist.add(d)
	p := c.cur
	p.waves++
	p.waveOcc.add(w.BeginTime, 1)
	p.waveOcc.add(w.EndTime, -1)
}

// durHist counts wave durations in bins of a quarter of a power of two:
// bin 0 holds durations below 1, bin b ≥ 1 those in [lo(b), lo(b+1)).
type durHist struct{ n [4*64 + 1]int64 }

func durBin(d int64) int {
	if d < 1 {
		return 0
	}
	e := 63 - bits.LeadingZeros64(uint64(d)) // 2^e <= d < 2^(e+1)
	q := 0
	for q < 3 && float64(d) >= binLo(e*4+q+2) {
		q++
	}
	return e*4 + q + 1
}

// binLo is the smallest duration of bin b ≥ 1: 2^((b-1)/4), rounded up.
func binLo(b int) float64 { return math.Ceil(math.Exp2(float64(b-1) / 4)) }

func (h *durHist) add(d int64) { h.n[durBin(d)]++ }

// occBins is the number of time bins of a part's occupancy chart.
const occBins = 1024

// occupancy is the number of waves in flight over time, in occBins bins
// whose width doubles (merging neighbours) whenever a time beyond the last
// bin arrives: constant memory for any trace length. Per bin it keeps the
// net change D and the integral P of the changes up to the bin's end, so
// the average in flight stays exact under merging. Times before the first
// one seen count as the first.
type occupancy struct {
	started bool
	t0      int64
	w       uint64 // a power of two
	d       [occBins]int64
	p       [occBins]float64
	last    uint64 // the latest time seen, minus t0
}

func (o *occupancy) add(t, d int64) {
	if !o.started {
		o.started, o.t0, o.w = true, t, 1
	}
	t = max(t, o.t0)
	u := uint64(t) - uint64(o.t0) // t - t0 without overflow
	o.last = max(o.last, u)
	i := u / o.w
	for i >= occBins {
		for j := 0; j < occBins/2; j++ {
			a, b := 2*j, 2*j+1
			o.p[j] = o.p[a] + float64(o.d[a])*float64(o.w) + o.p[b]
			o.d[j] = o.d[a] + o.d[b]
		}
		clear(o.d[occBins/2:])
		clear(o.p[occBins/2:])
		o.w *= 2
		i = u / o.w
	}
	o.d[i] += d
	o.p[i] += float64(d) * float64(o.w-u%o.w) // up to the bin's end
}

// series returns the average waves in flight per bin, up to the bin of
// the last time seen.
func (o *occupancy) series() (t0 int64, width uint64, avg []float64, peak float64) {
	if !o.started {
		return 0, 0, nil, 0
	}
	n := o.last/o.w + 1
	var level int64
	for i := uint64(0); i < n; i++ {
		a := float64(level) + o.p[i]/float64(o.w)
		a = math.Round(a*100) / 100
		avg = append(avg, a)
		peak = max(peak, a)
		level += o.d[i]
	}
	return o.t0, o.w, avg, peak
}

// The page's data, as the JSON the page's script reads.
type pageData struct {
	Title    string     `json:"title"`
	Producer string     `json:"producer"`
	Inputs   []string   `json:"inputs"`
	Index    string     `json:"index,omitempty"`
	Arch     string     `json:"arch,omitempty"`
	Kernels  []kernelJS `json:"kernels"`
	// Insts holds the PCs column by column, in kernel then address order;
	// a kernel's PCs are Insts[First:First+Count].
	Insts instsJS  `json:"insts"`
	Lines linesJS  `json:"lines"`
	Files []fileJS `json:"files"`
	SEs   []seJS   `json:"ses"`
	// Top is the hottest PCs by exposed cycles, then total, then hits:
	// indices into Insts.
	Top []int `json:"top"`
}

type kernelJS struct {
	Name      string  `json:"name"`
	CodeObj   uint64  `json:"codeobj"`
	Waves     int64   `json:"waves"`
	Insts     int64   `json:"instructions"`
	Cycles    int64   `json:"cycles"`
	Latency   int64   `json:"latency"`
	Stall     int64   `json:"stall"`
	Idle      int64   `json:"idle"`
	Hidden    int64   `json:"hidden"`
	Exposed   int64   `json:"exposed"`
	MinWave   int64   `json:"min_wave"`
	MaxWave   int64   `json:"max_wave"`
	MeanWave  float64 `json:"mean_wave"`
	First     int     `json:"first"`
	Count     int     `json:"count"`
	LineFirst int     `json:"line_first"`
	LineCount int     `json:"line_count"`
	// Hist is the wave-duration histogram: bins [Lo[i], Lo[i+1]) holding
	// N[i] waves (the last bin's upper bound is Lo[len-1]).
	Hist histJS `json:"hist"`
}

type histJS struct {
	Lo []int64 `json:"lo"`
	N  []int64 `json:"n"`
}

type instsJS struct {
	CodeObj []uint64 `json:"codeobj"`
	Addr    []uint64 `json:"addr"`
	Text    []string `json:"text"`
	// Src is the source chain (innermost first, " -> " between frames)
	// as an index into Srcs, -1 for none; Line its innermost line as an
	// index into Lines.
	Src     []int    `json:"src"`
	Line    []int    `json:"line"`
	Hit     []int64  `json:"hit"`
	Latency []int64  `json:"latency"`
	Stall   []int64  `json:"stall"`
	Idle    []int64  `json:"idle"`
	Exposed []int64  `json:"exposed"`
	Hidden  []int64  `json:"hidden"`
	Srcs    []string `json:"srcs"`
}

// linesJS is the per-source-line roll-up of each kernel: the counters of
// its PCs summed by the innermost frame of their source chain.
type linesJS struct {
	File    []int    `json:"file"` // index into Files
	Line    []int64  `json:"line"`
	Hit     []int64  `json:"hit"`
	Latency []int64  `json:"latency"`
	Stall   []int64  `json:"stall"`
	Idle    []int64  `json:"idle"`
	Exposed []int64  `json:"exposed"`
	Hidden  []int64  `json:"hidden"`
	PCs     []int    `json:"pcs"` // PCs of the line
	Names   []string `json:"-"`   // file:line, for tests
}

type fileJS struct {
	Path  string   `json:"path"`
	Found bool     `json:"found"`
	Text  []string `json:"text,omitempty"`
}

type seJS struct {
	SE     int       `json:"se"`
	Run    int       `json:"run"`
	Path   string    `json:"path"`
	Waves  int64     `json:"waves"`
	Source string    `json:"source"` // "occupancy" records or "waves"
	T0     int64     `json:"t0"`
	Width  uint64    `json:"width"`
	Avg    []float64 `json:"avg"`
	Peak   float64   `json:"peak"`
}

// sourceLimit bounds the source text embedded: per file and in all.
const (
	sourceFileLimit  = 4 << 20
	sourceTotalLimit = 32 << 20
)

// sourceFinder returns a function reading a source file by its index
// path: as given (absolute, or relative to the working directory), else
// under each dir in turn (the path's tail parts joined to the dir).
func sourceFinder(dirs []string) func(string) ([]byte, bool) {
	return func(p string) ([]byte, bool) {
		try := []string{p}
		for _, d := range dirs {
			if filepath.IsAbs(p) {
				parts := strings.Split(filepath.ToSlash(p), "/")
				for i := 1; i < len(parts); i++ {
					try = append(try, filepath.Join(d, filepath.Join(parts[i:]...)))
				}
			} else {
				try = append(try, filepath.Join(d, p))
			}
		}
		for _, t := range try {
			st, err := os.Stat(t)
			if err != nil || !st.Mode().IsRegular() || st.Size() > sourceFileLimit {
				continue
			}
			b, err := os.ReadFile(t)
			if err == nil {
				return b, true
			}
		}
		return nil, false
	}
}

// innermost splits a source chain ("file:line -> caller:line …", innermost
// first) into file and line of the innermost frame; "" and "None" have
// none.
func innermost(src string) (file string, line int64, ok bool) {
	if strings.TrimSpace(src) == "" || src == "None" {
		return "", 0, false
	}
	if i := strings.Index(src, " -> "); i >= 0 {
		src = src[:i]
	}
	src = strings.TrimSpace(src)
	i := strings.LastIndexByte(src, ':')
	if i < 0 {
		return src, 0, true
	}
	n, err := strconv.ParseInt(src[i+1:], 10, 64)
	switch {
	case err == nil:
		return src[:i], n, true
	case src[i+1:] == "?":
		return src[:i], 0, true
	}
	return src, 0, true
}

// data builds the page's data from what was collected and the per-PC
// hidden latency.
func (c *collector) data(hid map[wire.PC]hidden.Latency, read func(string) ([]byte, bool)) *pageData {
	d := &pageData{}
	if c.arch != 0 {
		d.Arch = fmt.Sprintf("gfx%d", c.arch)
	}
	if c.ix != nil {
		for _, o := range c.ix.Objects {
			if o.Target != "" {
				d.Arch = o.Target
				break
			}
		}
	}
	// Every PC of the fold, grouped by kernel (kernels in index order),
	// by address within one.
	entries := slices.Clone(c.fold.Entries())
	for _, e := range entries {
		if e.PC != (wire.PC{}) {
			c.kernelOf(e.PC)
		}
	}
	kidx := map[*kernel]int{}
	for i, k := range c.kernels {
		kidx[k] = i
	}
	byK := make([][]*fold.Entry, len(c.kernels))
	for _, e := range entries {
		if e.PC == (wire.PC{}) {
			continue
		}
		i := kidx[c.kernelOf(e.PC)]
		byK[i] = append(byK[i], e)
	}
	fileIdx := map[string]int{}
	srcIdx := map[string]int{}
	in := &d.Insts
	ln := &d.Lines
	for ki, k := range c.kernels {
		es := byK[ki]
		slices.SortStableFunc(es, func(a, b *fold.Entry) int { return fold.ComparePC(a.PC, b.PC) })
		kj := kernelJS{Name: k.Name, CodeObj: k.CO, Waves: k.waves, Cycles: k.cycles,
			MinWave: k.minD, MaxWave: k.maxD, First: len(in.Addr), Count: len(es), LineFirst: len(ln.Line)}
		if k.waves > 0 {
			kj.MeanWave = math.Round(float64(k.cycles)/float64(k.waves)*10) / 10
		}
		lineOf := map[[2]string]int{}
		for _, e := range es {
			h := hid[e.PC]
			hd := h.Stall + h.Issue + min(h.Idle, e.Idle)
			exp := e.Latency + e.Idle - hd
			kj.Insts += e.Hit
			kj.Latency += e.Latency
			kj.Stall += e.Stall
			kj.Idle += e.Idle
			kj.Hidden += hd
			kj.Exposed += exp
			src := -1
			if e.Source != "" {
				s, ok := srcIdx[e.Source]
				if !ok {
					s = len(in.Srcs)
					srcIdx[e.Source] = s
					in.Srcs = append(in.Srcs, e.Source)
				}
				src = s
			}
			li := -1
			if file, line, ok := innermost(e.Source); ok {
				key := [2]string{file, strconv.FormatInt(line, 10)}
				l, ok := lineOf[key]
				if !ok {
					fi, ok := fileIdx[file]
					if !ok {
						fi = len(d.Files)
						fileIdx[file] = fi
						d.Files = append(d.Files, fileJS{Path: file})
					}
					l = len(ln.Line)
					lineOf[key] = l
					ln.File = append(ln.File, fi)
					ln.Line = append(ln.Line, line)
					ln.Names = append(ln.Names, file+":"+strconv.FormatInt(line, 10))
					ln.Hit = append(ln.Hit, 0)
					ln.Latency = append(ln.Latency, 0)
					ln.Stall = append(ln.Stall, 0)
					ln.Idle = append(ln.Idle, 0)
					ln.Exposed = append(ln.Exposed, 0)
					ln.Hidden = append(ln.Hidden, 0)
					ln.PCs = append(ln.PCs, 0)
				}
				li = l
				ln.Hit[l] += e.Hit
				ln.Latency[l] += e.Latency
				ln.Stall[l] += e.Stall
				ln.Idle[l] += e.Idle
				ln.Exposed[l] += exp
				ln.Hidden[l] += hd
				ln.PCs[l]++
			}
			in.CodeObj = append(in.CodeObj, e.PC.CodeObjectID)
			in.Addr = append(in.Addr, e.PC.Address)
			in.Text = append(in.Text, e.Text)
			in.Src = append(in.Src, src)
			in.Line = append(in.Line, li)
			in.Hit = append(in.Hit, e.Hit)
			in.Latency = append(in.Latency, e.Latency)
			in.Stall = append(in.Stall, e.Stall)
			in.Idle = append(in.Idle, e.Idle)
			in.Exposed = append(in.Exposed, exp)
			in.Hidden = append(in.Hidden, hd)
		}
		kj.LineCount = len(ln.Line) - kj.LineFirst
		kj.Hist = k.hist.js()
		d.Kernels = append(d.Kernels, kj)
	}
	d.Top = topPCs(in, 50)
	budget := sourceTotalLimit
	for i := range d.Files {
		f := &d.Files[i]
		b, ok := read(f.Path)
		if !ok || len(b) > budget {
			continue
		}
		budget -= len(b)
		f.Found = true
		f.Text = strings.Split(strings.TrimSuffix(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n"), "\n")
	}
	for _, p := range c.ses {
		s := seJS{SE: p.SE, Run: p.Run, Path: p.Path, Waves: p.waves, Source: "occupancy"}
		o := &p.occ
		if !p.hasOcc {
			s.Source, o = "waves", &p.waveOcc
		}
		s.T0, s.Width, s.Avg, s.Peak = o.series()
		d.SEs = append(d.SEs, s)
	}
	slices.SortStableFunc(d.SEs, func(a, b seJS) int {
		if a.Run != b.Run {
			return a.Run - b.Run
		}
		return a.SE - b.SE
	})
	return d
}

func (h *durHist) js() histJS {
	lo, hi := -1, -1
	for i, n := range h.n {
		if n > 0 {
			if lo < 0 {
				lo = i
			}
			hi = i
		}
	}
	var out histJS
	if lo < 0 {
		return out
	}
	for b := lo; b <= hi+1; b++ {
		if b == 0 {
			out.Lo = append(out.Lo, math.MinInt64)
		} else {
			out.Lo = append(out.Lo, int64(binLo(b)))
		}
		if b <= hi {
			out.N = append(out.N, h.n[b])
		}
	}
	return out
}

// topPCs returns the indices of the n PCs with the most exposed cycles,
// then total cycles (latency + idle), then hits (att-stats --format top's
// order), first PC first on ties; PCs without hits are left out.
func topPCs(in *instsJS, n int) []int {
	var idx []int
	for i := range in.Addr {
		if in.Hit[i] > 0 {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if in.Exposed[a] != in.Exposed[b] {
			return cmpDesc(in.Exposed[a], in.Exposed[b])
		}
		ta, tb := in.Latency[a]+in.Idle[a], in.Latency[b]+in.Idle[b]
		if ta != tb {
			return cmpDesc(ta, tb)
		}
		return cmpDesc(in.Hit[a], in.Hit[b])
	})
	if len(idx) > n {
		idx = idx[:n]
	}
	return idx
}

func cmpDesc(a, b int64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}
