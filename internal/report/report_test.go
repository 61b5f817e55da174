package report

import (
	"math"
	"testing"
)

// TestOccupancyMerge: the bins' averages stay exact when they merge: the
// area under the series equals the wave-cycles in flight worked out
// directly, for spans far beyond the first width.
func TestOccupancyMerge(t *testing.T) {
	var o occupancy
	var want int64
	spans := [][2]int64{{5, 17}, {9, 2000}, {100, 100}, {1500, 90000}, {7, 3_000_000}, {2_999_999, 3_000_001}}
	for _, s := range spans {
		o.add(s[0], 1)
		o.add(s[1], -1)
		want += s[1] - s[0]
	}
	t0, w, avg, peak := o.series()
	if t0 != 5 || len(avg) > occBins || w < (3_000_001-5)/occBins || w&(w-1) != 0 {
		t.Fatalf("t0 %d width %d bins %d", t0, w, len(avg))
	}
	var area float64
	for _, v := range avg {
		area += v * float64(w)
	}
	// Each average is rounded to 0.01.
	if math.Abs(area-float64(want)) > 0.005*float64(w)*float64(len(avg)) {
		t.Errorf("area %v, want %d", area, want)
	}
	if peak < 1 || peak > 4 {
		t.Errorf("peak %v", peak)
	}
	// The whole int64 range: no overflow, one wave in flight on average
	// over the first half.
	var x occupancy
	x.add(math.MinInt64, 1)
	x.add(0, -1)
	x.add(math.MaxInt64, 1)
	if _, w, avg, _ := x.series(); w != 1<<54 || len(avg) != occBins || avg[0] != 1 || avg[occBins/2] != 0 {
		t.Errorf("full range: width %d, %d bins, %v", w, len(avg), avg[:2])
	}
}
