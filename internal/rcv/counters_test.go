package rcv

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/fold"
	"github.com/attkit/attkit/internal/wire"
)

func TestParseCounters(t *testing.T) {
	cases := []struct {
		in   []string
		want []string
		err  string
	}{
		{nil, nil, ""},
		{[]string{"SQ_WAVES"}, []string{"SQ_WAVES"}, ""},
		{[]string{" SQ_WAVES , SQ_BUSY_CYCLES", "", "SQ_INST_LEVEL_VMEM:3,"}, []string{"SQ_WAVES", "SQ_BUSY_CYCLES", "SQ_INST_LEVEL_VMEM:3"}, ""},
		{[]string{"A,B,C,D,E,F,G,H"}, []string{"A", "B", "C", "D", "E", "F", "G", "H"}, ""},
		{[]string{"A,B,C,D,E,F,G,H,I"}, nil, "9 counters: the viewer names at most 8"},
		{[]string{"A,B", "A"}, nil, `counter "A" named twice`},
	}
	for _, tc := range cases {
		got, err := ParseCounters(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %q, %v, want %q", tc.in, got, err, tc.want)
		}
	}
}

// counterPoint is one point of a Counters-view series.
type counterPoint struct{ time, value int64 }

// counterSeries reads the Counters view's raw series out of a folder with
// the loader's rules (viewer-loader.md, its filenames.json and
// se<N>_perfcounter.json sections): counter_names from filenames.json; the
// rows [time, v0, v1, v2, v3, cu, bank] of se<N>_perfcounter.json for N up
// to the largest SE with waves or occupancy, the first bad row ending a
// file; value c of a row of bank b (b = bank & 1) is series
// counter_names[c+4b], or "UNK_<c>" where the list is too short.
func counterSeries(t *testing.T, dir string) map[string][]counterPoint {
	t.Helper()
	var fn struct {
		CounterNames []string                  `json:"counter_names"`
		Waves        map[string]map[string]any `json:"wave_filenames"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "filenames.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &fn); err != nil {
		t.Fatal(err)
	}
	maxSE := -1
	for k := range fn.Waves {
		if n, err := strconv.Atoi(k); err == nil {
			maxSE = max(maxSE, n)
		}
	}
	if data, err := os.ReadFile(filepath.Join(dir, "occupancy.json")); err == nil {
		var occ map[string]json.RawMessage
		json.Unmarshal(data, &occ)
		for k := range occ {
			if n, err := strconv.Atoi(k); err == nil {
				maxSE = max(maxSE, n)
			}
		}
	}
	series := map[string][]counterPoint{}
	for se := 0; se <= maxSE; se++ {
		data, err := os.ReadFile(filepath.Join(dir, "se"+strconv.Itoa(se)+"_perfcounter.json"))
		if err != nil {
			continue
		}
		var doc struct{ Data [][]json.Number }
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
	rows:
		for _, row := range doc.Data {
			if len(row) < 7 {
				break
			}
			var v [7]int64
			for i := range v {
				if v[i], err = row[i].Int64(); err != nil {
					break rows
				}
			}
			bank := int(v[6] & 1)
			for c := 0; c < 4; c++ {
				name := "UNK_" + strconv.Itoa(c)
				if i := c + 4*bank; i < len(fn.CounterNames) {
					name = fn.CounterNames[i]
				}
				series[name] = append(series[name], counterPoint{v[0], v[1+c]})
			}
		}
	}
	return series
}

// With --counters the Counters view gets one named series per counter,
// bank 0's values under names 0-3 and bank 1's under names 4-7; without
// them (upstream's Python writer) the two banks' values pile into four
// series UNK_0..UNK_3.
func TestCounterNamesNameSeries(t *testing.T) {
	names := []string{"SQ_WAVES", "SQ_BUSY_CYCLES", "SQ_INSTS_VALU", "SQ_INSTS_SALU",
		"SQ_INST_LEVEL_VMEM", "SQ_INST_LEVEL_LDS", "SQ_WAIT_ANY", "SQ_ACTIVE_INST_ANY:3"}
	ix := &wire.Index{Rows: []wire.Row{{CodeObj: 1, Vaddr: 0x100, Text: "s_endpgm", Line: 1}},
		Kernels: []wire.Kernel{{Address: 0x100, CodeObj: 1, Name: "k"}}}
	perf := []wire.PerfEvent{
		{Time: 100, Events: [4]uint16{1, 2, 3, 4}, CU: 1, Bank: 0},
		{Time: 100, Events: [4]uint16{5, 6, 7, 8}, CU: 1, Bank: 1},
		{Time: 200, Events: [4]uint16{11, 12, 13, 14}, CU: 1, Bank: 0},
		{Time: 200, Events: [4]uint16{15, 16, 17, 18}, CU: 1, Bank: 1},
	}
	write := func(dir string, counters []string) {
		f, err := NewFolder(dir, FolderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w := NewWriter(f, ix, fold.New(ix), Options{JSON: true, CounterNames: counters})
		batches := []wire.Batch{
			{Type: wire.TypeOccupancy, Occupancy: []wire.Occupancy{{PC: pc(1, 0x100), Time: 90, CU: 1, Start: true}}},
			{Type: wire.TypePerfEvent, PerfEvents: perf},
		}
		if err := w.BeginTrace(&wire.Header{}); err != nil {
			t.Fatal(err)
		}
		for i := range batches {
			if err := w.AddBatch(&batches[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Finish(); err != nil {
			t.Fatal(err)
		}
		if err := f.Commit(); err != nil {
			t.Fatal(err)
		}
		if err := CheckFolder(dir); err != nil {
			t.Fatalf("the viewer would not load the folder completely:\n%v", err)
		}
	}
	base := t.TempDir()

	named := filepath.Join(base, "named")
	write(named, names)
	got := counterSeries(t, named)
	want := map[string][]counterPoint{}
	for _, p := range perf {
		for c := 0; c < 4; c++ {
			n := names[c+4*int(p.Bank)]
			want[n] = append(want[n], counterPoint{p.Time, int64(p.Events[c])})
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("named series:\ngot  %v\nwant %v", got, want)
	}

	unnamed := filepath.Join(base, "unnamed")
	write(unnamed, nil)
	keys := []string{}
	for k, s := range counterSeries(t, unnamed) {
		keys = append(keys, k)
		if len(s) != 4 {
			t.Errorf("unnamed %s: %d points, want both banks' 4", k, len(s))
		}
	}
	sort.Strings(keys)
	if !reflect.DeepEqual(keys, []string{"UNK_0", "UNK_1", "UNK_2", "UNK_3"}) {
		t.Errorf("unnamed series %q, want UNK_0..UNK_3", keys)
	}
}
