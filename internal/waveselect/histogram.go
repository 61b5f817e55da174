package waveselect

import (
	"encoding/json"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"strings"
)

// Histogram bins wave durations (end_time - begin_time, in shader-clock
// cycles) per kernel, in constant memory: a fixed array of bins per
// kernel. Bins are quarter octaves with integer bounds: durations 0 to 3
// have a bin each, then every power of two [2^e, 2^(e+1)) is split in four
// equal bins ([4,5) [5,6) [6,7) [7,8), [8,10) … [14,16), [16,20) …), so a
// bin is at most 25% of its lower bound wide and the counts are exact.
// Negative durations (a cut wave) are counted apart.
type Histogram struct {
	kernels map[string]*KernelHistogram
	order   []string // first appearance
}

// NumBins is the number of bins of a KernelHistogram.
const NumBins = 4 + 61*4

// KernelHistogram is the distribution of one kernel's wave durations.
type KernelHistogram struct {
	Kernel   string
	Waves    int64 // waves counted, Negative included
	Negative int64 // waves with end_time < begin_time
	Min, Max int64 // durations
	Sum      int64 // of durations (saturating is not needed: cycles fit int64 sums of realistic traces)
	Slowest  WaveInfo
	Fastest  WaveInfo
	counts   [NumBins]int64
}

// NewHistogram returns an empty histogram.
func NewHistogram() *Histogram { return &Histogram{kernels: map[string]*KernelHistogram{}} }

// BinOf returns the bin of a duration d >= 0.
func BinOf(d int64) int {
	if d < 4 {
		return int(d)
	}
	e := bits.Len64(uint64(d)) - 1 // 2^e <= d < 2^(e+1), e >= 2
	sub := int(d>>(e-2)) & 3
	return 4 + (e-2)*4 + sub
}

// BinBounds returns the half-open bounds [lo, hi) of bin i.
func BinBounds(i int) (lo, hi int64) {
	if i < 4 {
		return int64(i), int64(i) + 1
	}
	e, sub := (i-4)/4+2, int64((i-4)%4)
	lo = (4 + sub) << (e - 2)
	hi = (5 + sub) << (e - 2)
	if hi < 0 { // the last bin of int64
		hi = 1<<63 - 1
	}
	return lo, hi
}

// Add counts wave w (as Selector.Describe tells it).
func (h *Histogram) Add(w WaveInfo) {
	k := h.kernels[w.Kernel]
	if k == nil {
		k = &KernelHistogram{Kernel: w.Kernel}
		h.kernels[w.Kernel] = k
		h.order = append(h.order, w.Kernel)
	}
	d := w.Duration()
	if k.Waves == 0 || d > k.Slowest.Duration() {
		k.Slowest = w
	}
	if k.Waves == 0 || d < k.Fastest.Duration() {
		k.Fastest = w
	}
	if k.Waves == 0 {
		k.Min, k.Max = d, d
	}
	k.Min, k.Max = min(k.Min, d), max(k.Max, d)
	k.Waves++
	k.Sum += d
	if d < 0 {
		k.Negative++
		return
	}
	k.counts[BinOf(d)]++
}

// Kernels returns the kernels' histograms by kernel name.
func (h *Histogram) Kernels() []*KernelHistogram {
	out := make([]*KernelHistogram, 0, len(h.order))
	for _, n := range slices.Sorted(slices.Values(h.order)) {
		out = append(out, h.kernels[n])
	}
	return out
}

// Bin is one bin of a kernel's histogram: Count waves lasted Lo <= d < Hi
// cycles.
type Bin struct {
	Lo    int64 `json:"lo"`
	Hi    int64 `json:"hi"`
	Count int64 `json:"count"`
}

// Bins returns the bins from the one holding the shortest non-negative
// duration to the one holding the longest, empty bins between included.
func (k *KernelHistogram) Bins() []Bin {
	first, last := -1, -1
	for i, c := range k.counts {
		if c > 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return nil
	}
	out := make([]Bin, 0, last-first+1)
	for i := first; i <= last; i++ {
		lo, hi := BinBounds(i)
		out = append(out, Bin{Lo: lo, Hi: hi, Count: k.counts[i]})
	}
	return out
}

// Mean is the mean duration.
func (k *KernelHistogram) Mean() float64 {
	if k.Waves == 0 {
		return 0
	}
	return float64(k.Sum) / float64(k.Waves)
}

func kernelLabel(name string) string {
	if name == "" {
		return "(waves without instruction or dispatch)"
	}
	return name
}

// WriteText writes the histograms for a person: per kernel a summary line
// (waves, min, mean, max, the slowest and fastest wave's ID), then a line
// per bin with its bounds, count and a bar.
func (h *Histogram) WriteText(w io.Writer) error {
	var b strings.Builder
	ks := h.Kernels()
	if len(ks) == 0 {
		b.WriteString("no waves\n")
	}
	for i, k := range ks {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "kernel %s: %d waves, duration min %d, mean %.1f, max %d cycles\n",
			kernelLabel(k.Kernel), k.Waves, k.Min, k.Mean(), k.Max)
		fmt.Fprintf(&b, "  slowest %s (%d cycles), fastest %s (%d cycles)\n",
			k.Slowest.Key, k.Slowest.Duration(), k.Fastest.Key, k.Fastest.Duration())
		bins := k.Bins()
		var top int64
		width := 1
		for _, bn := range bins {
			top = max(top, bn.Count)
			width = max(width, len(fmt.Sprint(bn.Hi)))
		}
		if k.Negative > 0 {
			fmt.Fprintf(&b, "  %*s  %8d\n", 2*width+4, "negative", k.Negative)
			top = max(top, k.Negative)
		}
		for _, bn := range bins {
			bar := int((bn.Count*40 + top - 1) / top)
			fmt.Fprintf(&b, "  [%*d, %*d)  %8d  %s\n", width, bn.Lo, width, bn.Hi, bn.Count, strings.Repeat("#", bar))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// JSONKernel is one line of WriteJSON.
type JSONKernel struct {
	Kernel   string  `json:"kernel"`
	Waves    int64   `json:"waves"`
	Negative int64   `json:"negative"`
	Min      int64   `json:"min"`
	Max      int64   `json:"max"`
	Mean     float64 `json:"mean"`
	Slowest  string  `json:"slowest"`
	Fastest  string  `json:"fastest"`
	Bins     []Bin   `json:"bins"`
}

// WriteJSON writes the histograms for scripts: one JSON object per kernel
// a line, {"kernel", "waves", "negative", "min", "max", "mean", "slowest",
// "fastest" (wave IDs), "bins": [{"lo", "hi", "count"}, …]}, bins as
// KernelHistogram.Bins gives them (durations lo <= d < hi cycles).
func (h *Histogram) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, k := range h.Kernels() {
		bins := k.Bins()
		if bins == nil {
			bins = []Bin{}
		}
		if err := enc.Encode(JSONKernel{Kernel: k.Kernel, Waves: k.Waves, Negative: k.Negative,
			Min: k.Min, Max: k.Max, Mean: k.Mean(), Slowest: k.Slowest.Key.String(),
			Fastest: k.Fastest.Key.String(), Bins: bins}); err != nil {
			return err
		}
	}
	return nil
}
