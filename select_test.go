package attkit_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

// sampleWave is a wave of the sample as att-decode --format json gives it.
type sampleWave struct {
	SE, CU, SIMD, Slot int
	Begin, End         int64
	FirstPC            uint64
	PCs                []uint64
}

func (w sampleWave) id() string {
	return fmt.Sprintf("se%d.cu%d.simd%d.slot%d@%d", w.SE, w.CU, w.SIMD, w.Slot, w.Begin)
}

// TestSelectSample selects on the bundled sample, decoded by the native
// decoder, through the tools: for each kernel, att-stats --kernel counts
// exactly the instructions of the waves whose first PC lies in the
// kernel's range (from its entry to the next kernel's, by the index's
// kernels), --format histogram.json bins exactly their durations,
// --wave slowest picks the longest (first on ties), and att-tool
// --kernel writes the stats CSV att-stats --kernel writes.
func TestSelectSample(t *testing.T) {
	needTools(t, "llvm-objdump-19")
	dir := t.TempDir()
	bin := func(n string) string { return filepath.Join(binDir, n) }
	idx := filepath.Join(dir, "sample.idx")
	tool(t, "co-index", "-o", idx, "testdata/sample/31337_1_code_object_id_1.hsaco")
	ix, err := wire.ReadIndexFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	type krange struct {
		name    string
		lo, hi  uint64
		codeobj uint64
		hits    map[uint64]int64
		waves   []sampleWave
		slowest int
	}
	var ks []*krange
	for _, k := range ix.Kernels {
		ks = append(ks, &krange{name: k.Name, lo: k.Address, codeobj: k.CodeObj, hits: map[uint64]int64{}, slowest: -1})
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i].lo < ks[j].lo })
	for i, k := range ks {
		k.hi = ^uint64(0)
		if i+1 < len(ks) {
			k.hi = ks[i+1].lo
		}
	}
	if len(ks) < 2 {
		t.Fatalf("the sample index has %d kernels", len(ks))
	}
	var recs []string
	for _, tr := range []string{"31337_1_shader_engine_0_1", "31337_1_shader_engine_1_1"} {
		rec := filepath.Join(dir, tr+".rec")
		tool(t, "att-decode", "--backend", "native", "--quiet", "--index", idx, "-o", rec, "testdata/sample/"+tr+".att")
		recs = append(recs, rec)
		out, err := exec.Command(bin("att-decode"), "--backend", "native", "--quiet", "--index", idx, "--format", "json", "testdata/sample/"+tr+".att").Output()
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var r struct {
				Type, Kind         string
				SE, CU, SIMD, Slot int
				WaveID             int   `json:"wave_id"`
				Begin              int64 `json:"begin_time"`
				End                int64 `json:"end_time"`
				Instructions       []struct {
					PC struct {
						Address      uint64 `json:"address"`
						CodeObjectID uint64 `json:"code_object_id"`
					} `json:"pc"`
				} `json:"instructions"`
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			if r.Type != "wave" || len(r.Instructions) == 0 {
				continue
			}
			w := sampleWave{SE: r.SE, CU: r.CU, SIMD: r.SIMD, Slot: r.WaveID, Begin: r.Begin, End: r.End, FirstPC: r.Instructions[0].PC.Address}
			for _, in := range r.Instructions {
				w.PCs = append(w.PCs, in.PC.Address)
			}
			for _, k := range ks {
				if w.FirstPC >= k.lo && w.FirstPC < k.hi && r.Instructions[0].PC.CodeObjectID == k.codeobj {
					k.waves = append(k.waves, w)
					for _, p := range w.PCs {
						k.hits[p]++
					}
					if k.slowest < 0 || w.End-w.Begin > k.waves[k.slowest].End-k.waves[k.slowest].Begin {
						k.slowest = len(k.waves) - 1
					}
				}
			}
		}
	}
	stats := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin("att-stats"), append(append([]string{"--index", idx}, args...), recs...)...)
		var e bytes.Buffer
		cmd.Stderr = &e
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("att-stats %v: %v\n%s", args, err, e.String())
		}
		return string(out)
	}
	for _, k := range ks {
		if len(k.waves) == 0 {
			t.Fatalf("kernel %s has no wave in the sample", k.name)
		}
		got := map[uint64]int64{}
		for _, l := range strings.Split(strings.TrimSpace(stats("--kernel", k.name, "--format", "json")), "\n") {
			var r struct {
				Vaddr    uint64 `json:"vaddr"`
				Hitcount int64  `json:"hitcount"`
			}
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatal(err)
			}
			if r.Hitcount > 0 {
				got[r.Vaddr] = r.Hitcount
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(k.hits) {
			t.Errorf("--kernel %s: hits %v, want %v", k.name, got, k.hits)
		}
		var h struct {
			Kernel  string
			Waves   int64
			Slowest string
			Bins    []struct{ Lo, Hi, Count int64 }
		}
		if err := json.Unmarshal([]byte(stats("--kernel", k.name, "--format", "histogram.json")), &h); err != nil {
			t.Fatal(err)
		}
		if h.Kernel != k.name || h.Waves != int64(len(k.waves)) || h.Slowest != k.waves[k.slowest].id() {
			t.Errorf("--kernel %s histogram: %s, %d waves, slowest %s; want %d waves, slowest %s", k.name, h.Kernel, h.Waves, h.Slowest, len(k.waves), k.waves[k.slowest].id())
		}
		for _, b := range h.Bins {
			var n int64
			for _, w := range k.waves {
				if d := w.End - w.Begin; d >= b.Lo && d < b.Hi {
					n++
				}
			}
			if n != b.Count {
				t.Errorf("--kernel %s bin [%d, %d): %d, want %d", k.name, b.Lo, b.Hi, b.Count, n)
			}
		}
		one := stats("--kernel", k.name, "--wave", "slowest", "--format", "histogram.json")
		if !strings.Contains(one, `"waves":1,`) || !strings.Contains(one, `"slowest":"`+k.waves[k.slowest].id()+`"`) {
			t.Errorf("--kernel %s --wave slowest: %s", k.name, one)
		}
	}
	// att-tool --kernel: the stats CSV of run 1 is att-stats --kernel's.
	k := ks[len(ks)-1]
	out := filepath.Join(dir, "tool")
	tool(t, "att-tool", "--backend", "native", "-d", out, "--kernel", k.name, "testdata/sample")
	got, err := os.ReadFile(filepath.Join(out, "stats_ui_output_sample1.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if want := stats("--kernel", k.name); string(got) != want {
		t.Errorf("att-tool --kernel %s: stats CSV differs from att-stats'", k.name)
	}
	cmd := exec.Command(bin("att-tool"), "--backend", "native", "-d", filepath.Join(dir, "none"), "--kernel", "no_such_kernel", "testdata/sample")
	b, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(b), `--kernel "no_such_kernel" matched no wave`) {
		t.Errorf("att-tool --kernel no_such_kernel: %v %s", err, b)
	}
	if _, err := os.Stat(filepath.Join(dir, "none")); !os.IsNotExist(err) {
		t.Errorf("att-tool --kernel no_such_kernel left its output: %v", err)
	}
}
