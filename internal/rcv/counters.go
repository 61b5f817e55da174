package rcv

import (
	"fmt"
	"strings"
)

// MaxCounters is the number of counter names the viewer reads: each
// perf-counter row carries four values, and its bank (0 or 1) picks names
// 0-3 or 4-7 (viewer-loader.md, its filenames.json and
// se<N>_perfcounter.json sections).
const MaxCounters = 8

// ParseCounters reads a list of perf-counter names as a user gives them
// (each item split at commas, parts trimmed, empty parts ignored), in the
// order the capture programmed the counters: rocprofv3's
// --att-perfcounters order, a name carrying its SIMD mask as ":<hex>"
// when the mask is not 0xf. It rejects more than MaxCounters names and a
// name given twice (the viewer keys its series by name).
func ParseCounters(items []string) ([]string, error) {
	var names []string
	seen := map[string]bool{}
	for _, item := range items {
		for _, p := range strings.Split(item, ",") {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			if seen[p] {
				return nil, fmt.Errorf("counter %q named twice", p)
			}
			seen[p] = true
			names = append(names, p)
		}
	}
	if len(names) > MaxCounters {
		return nil, fmt.Errorf("%d counters: the viewer names at most %d (4 per bank, 2 banks)", len(names), MaxCounters)
	}
	return names, nil
}
