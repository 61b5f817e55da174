package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/attkit/attkit/internal/fold"
	"github.com/attkit/attkit/internal/hidden"
	"github.com/attkit/attkit/internal/rollup"
	"github.com/attkit/attkit/internal/waveselect"
	"github.com/attkit/attkit/internal/wire"
)

// A collector gathers what the page shows while the records stream by:
// the per-PC fold, per kernel its waves' durations (waveselect's
// histogram), per part (one shader engine of one run) its waves in flight
// over time.
type collector struct {
	ix    *wire.Index
	fold  *fold.Fold
	sel   *waveselect.Selector
	hist  *waveselect.Histogram
	ses   []*part
	cur   *part
	parts int
	arch  uint64
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

func newCollector(ix *wire.Index, sel *waveselect.Selector) *collector {
	return &collector{ix: ix, fold: fold.New(ix), sel: sel, hist: waveselect.NewHistogram()}
}

func (c *collector) startPart(h *wire.Header) {
	c.parts++
	if h.Trace.GFXIP != 0 && c.arch == 0 {
		c.arch = uint64(h.Trace.GFXIP)
	}
	for _, p := range c.ses {
		if p.SE == h.Trace.SE && p.Run == h.Trace.Run {
			c.cur = p
			return
		}
	}
	c.cur = &part{SE: h.Trace.SE, Run: h.Trace.Run, Path: h.Trace.Path}
	c.ses = append(c.ses, c.cur)
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

// addWave folds w: its instructions per PC, its duration into its kernel's
// histogram, its span into its part's waves in flight.
func (c *collector) addWave(w *wire.Wave) {
	c.fold.AddWave(w)
	c.hist.Add(c.sel.Describe(w))
	p := c.cur
	p.waves++
	p.waveOcc.add(w.BeginTime, 1)
	p.waveOcc.add(w.EndTime, -1)
}

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

// Data is the page's data, the JSON document its script reads.
type Data struct {
	Title    string   `json:"title"`
	Producer string   `json:"producer"`
	Inputs   []string `json:"inputs"`
	Index    string   `json:"index,omitempty"`
	Arch     string   `json:"arch,omitempty"`
	Kernels  []Kernel `json:"kernels"`
	// Insts holds the PCs column by column, in kernel then address order;
	// a kernel's PCs are Insts[First:First+Count].
	Insts Insts  `json:"insts"`
	Lines Lines  `json:"lines"`
	Files []File `json:"files"`
	SEs   []SE   `json:"ses"`
	// Top is the hottest PCs by exposed cycles, then total, then hits:
	// indices into Insts.
	Top []int `json:"top"`
}

// A Kernel is one kernel's summary, with where its PCs and lines are.
type Kernel struct {
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
	Negative  int64   `json:"negative_waves"` // waves that end before they begin (cut)
	MinWave   int64   `json:"min_wave"`
	MaxWave   int64   `json:"max_wave"`
	MeanWave  float64 `json:"mean_wave"`
	First     int     `json:"first"`
	Count     int     `json:"count"`
	LineFirst int     `json:"line_first"`
	LineCount int     `json:"line_count"`
	// Hist is the wave-duration histogram (waveselect's quarter-octave
	// bins, from the shortest wave's to the longest's).
	Hist []waveselect.Bin `json:"hist"`
}

// Insts holds every PC of the report, one slice per column.
type Insts struct {
	CodeObj []uint64 `json:"codeobj"`
	Addr    []uint64 `json:"addr"`
	Text    []string `json:"text"`
	// Src is the source chain (innermost first, " -> " between frames)
	// as an index into Srcs, -1 for none; Line its own line (the chain's
	// first file:line) as an index into Lines.
	Src []int `json:"src"`
	// Chain is the DWARF inline chain (wire.Row.Inline) as an index into
	// Chains, -1 when the index has none.
	Chain   []int     `json:"chain"`
	Line    []int     `json:"line"`
	Hit     []int64   `json:"hit"`
	Latency []int64   `json:"latency"`
	Stall   []int64   `json:"stall"`
	Idle    []int64   `json:"idle"`
	Exposed []int64   `json:"exposed"`
	Hidden  []int64   `json:"hidden"`
	Srcs    []string  `json:"srcs"`
	Chains  [][]Frame `json:"chains"`
}

// A Frame is one function of a DWARF inline chain.
type Frame struct {
	Function string `json:"function"`
	File     string `json:"file"`
	Line     int64  `json:"line"`
}

// Lines is the per-source-line roll-up of each kernel: the counters of
// its PCs summed by the innermost frame of their source chain.
type Lines struct {
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

// A File is a source file the index names, with its text when found.
type File struct {
	Path  string   `json:"path"`
	Found bool     `json:"found"`
	Text  []string `json:"text,omitempty"`
}

// An SE is one part's waves in flight over time: average per bin of
// Width cycles from T0.
type SE struct {
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

// data builds the page's data from what was collected and the per-PC
// hidden latency: kernels and their counters from rollup (by kernel), the
// per-line roll-up of each kernel by rollup's line key (the first
// file:line of a PC's source), the waves from the histogram.
func (c *collector) data(hid map[wire.PC]hidden.Latency, read func(string) ([]byte, bool)) (*Data, error) {
	d := &Data{}
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
	groups, err := rollup.Sum(c.fold, hid, rollup.ByKernel)
	if err != nil {
		return nil, err
	}
	type kkey struct {
		co, at uint64
		name   string
	}
	kpos := map[kkey]int{}
	for i, g := range groups {
		kpos[kkey{g.CodeObj, g.Vaddr, g.Key}] = i
	}
	pcKernel := rollup.KernelsOf(c.ix)
	chainOf := map[wire.PC][]wire.InlineFrame{}
	if c.ix != nil {
		for i := range c.ix.Rows {
			if r := &c.ix.Rows[i]; r.Raw == nil && !r.IsLabel() {
				chainOf[r.PC()] = r.Inline
			}
		}
	}
	byK := make([][]*fold.Entry, len(groups))
	for _, e := range c.fold.Ordered() {
		k := kkey{co: e.PC.CodeObjectID}
		if kn := pcKernel[e.PC]; kn != nil {
			k.at, k.name = kn.Address, kn.Name
		}
		i, ok := kpos[k]
		if !ok {
			return nil, fmt.Errorf("internal error: PC %#x of code object %d in no kernel group", e.PC.Address, e.PC.CodeObjectID)
		}
		byK[i] = append(byK[i], e)
	}
	hists := map[string]*waveselect.KernelHistogram{}
	for _, h := range c.hist.Kernels() {
		hists[h.Kernel] = h
	}
	fileIdx := map[string]int{}
	srcIdx := map[string]int{}
	in := &d.Insts
	ln := &d.Lines
	for gi, g := range groups {
		es := byK[gi]
		slices.SortStableFunc(es, func(a, b *fold.Entry) int { return fold.ComparePC(a.PC, b.PC) })
		// The PCs before every function label (an index without labels:
		// a code.json) are named as waveselect names their waves' kernel.
		name := g.Key
		if name == "" && len(es) > 0 {
			name, _ = c.sel.Kernels().Lookup(es[0].PC)
		}
		if name == "" {
			name = fmt.Sprintf("code object %d, outside every kernel", g.CodeObj)
		}
		kj := Kernel{Name: name, CodeObj: g.CodeObj, First: len(in.Addr), Count: len(es), LineFirst: len(ln.Line),
			Insts: g.Hit, Latency: g.Latency, Stall: g.Stall, Idle: g.Idle, Hidden: g.Hidden, Exposed: g.Exposed}
		if h := hists[name]; h != nil {
			kj.setWaves(h)
			delete(hists, name)
		}
		lineOf := map[string]int{}
		for _, e := range es {
			x := rollup.Of(e, hid[e.PC])
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
			chain := -1
			if fr := chainOf[e.PC]; len(fr) > 0 {
				chain = len(in.Chains)
				js := make([]Frame, len(fr))
				for i, f := range fr {
					js[i] = Frame{f.Function, f.File, f.Line}
				}
				in.Chains = append(in.Chains, js)
			}
			li := -1
			if key := rollup.FirstSource(e.Source); key != "" && key != "None" {
				l, ok := lineOf[key]
				if !ok {
					file, line := rollup.SplitSource(key)
					fi, ok := fileIdx[file]
					if !ok {
						fi = len(d.Files)
						fileIdx[file] = fi
						d.Files = append(d.Files, File{Path: file})
					}
					l = len(ln.Line)
					lineOf[key] = l
					ln.File = append(ln.File, fi)
					ln.Line = append(ln.Line, line)
					ln.Names = append(ln.Names, key)
					ln.Hit = append(ln.Hit, 0)
					ln.Latency = append(ln.Latency, 0)
					ln.Stall = append(ln.Stall, 0)
					ln.Idle = append(ln.Idle, 0)
					ln.Exposed = append(ln.Exposed, 0)
					ln.Hidden = append(ln.Hidden, 0)
					ln.PCs = append(ln.PCs, 0)
				}
				li = l
				ln.Hit[l] += x.Hit
				ln.Latency[l] += x.Latency
				ln.Stall[l] += x.Stall
				ln.Idle[l] += x.Idle
				ln.Exposed[l] += x.Exposed
				ln.Hidden[l] += x.Hidden
				ln.PCs[l]++
			}
			in.CodeObj = append(in.CodeObj, e.PC.CodeObjectID)
			in.Addr = append(in.Addr, e.PC.Address)
			in.Text = append(in.Text, e.Text)
			in.Src = append(in.Src, src)
			in.Chain = append(in.Chain, chain)
			in.Line = append(in.Line, li)
			in.Hit = append(in.Hit, x.Hit)
			in.Latency = append(in.Latency, x.Latency)
			in.Stall = append(in.Stall, x.Stall)
			in.Idle = append(in.Idle, x.Idle)
			in.Exposed = append(in.Exposed, x.Exposed)
			in.Hidden = append(in.Hidden, x.Hidden)
		}
		kj.LineCount = len(ln.Line) - kj.LineFirst
		d.Kernels = append(d.Kernels, kj)
	}
	// Waves of kernels no PC of the index belongs to (a wave without
	// instructions, named after its dispatch, or none): a kernel each.
	for _, h := range c.hist.Kernels() {
		if hists[h.Kernel] == nil {
			continue
		}
		kj := Kernel{Name: h.Kernel, First: len(in.Addr), LineFirst: len(ln.Line)}
		if kj.Name == "" {
			kj.Name = "(waves without instructions or dispatch)"
		}
		kj.setWaves(h)
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
		s := SE{SE: p.SE, Run: p.Run, Path: p.Path, Waves: p.waves, Source: "occupancy"}
		o := &p.occ
		if !p.hasOcc {
			s.Source, o = "waves", &p.waveOcc
		}
		s.T0, s.Width, s.Avg, s.Peak = o.series()
		d.SEs = append(d.SEs, s)
	}
	slices.SortStableFunc(d.SEs, func(a, b SE) int {
		if a.Run != b.Run {
			return a.Run - b.Run
		}
		return a.SE - b.SE
	})
	return d, nil
}

func (k *Kernel) setWaves(h *waveselect.KernelHistogram) {
	k.Waves, k.Cycles, k.Negative = h.Waves, h.Sum, h.Negative
	k.MinWave, k.MaxWave = h.Min, h.Max
	k.MeanWave = math.Round(h.Mean()*10) / 10
	k.Hist = h.Bins()
}

// topPCs returns the indices of the n PCs with the most exposed cycles,
// then total cycles (latency + idle), then hits (att-stats --format top's
// order), first PC first on ties; PCs without hits are left out.
func topPCs(in *Insts, n int) []int {
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
