package attkit_test

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/testutil"
)

// toolOut runs a built tool and returns its standard output.
func toolOut(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return out
}

func readCSV(t *testing.T, b []byte) [][]string {
	t.Helper()
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return n
}

// pcRow is one PC as the test reads the per-PC outputs: the stats CSV
// (counters, source, and the kernel of the function label above it),
// hidden.csv (hidden idle, stall, issue) and top -n 0 (hidden, exposed).
type pcRow struct {
	co, vaddr uint64
	source    string
	kernel    string
	c         [10]int64 // hit, latency, stall, idle, hidden idle/stall/issue, hidden, exposed, PCs (1)
}

// perPC folds the capture with att-stats' per-PC formats and joins them.
func perPC(t *testing.T, args []string) []*pcRow {
	t.Helper()
	var rows []*pcRow
	byPC := map[[2]uint64]*pcRow{}
	kernel := ""
	stats := readCSV(t, toolOut(t, "att-stats", args...))
	if strings.Join(stats[0], ",") != "CodeObj,Vaddr,Instruction,Hitcount,Latency,Stall,Idle,Source" {
		t.Fatalf("stats CSV header %q", stats[0])
	}
	lastCO := ""
	for _, f := range stats[1:] {
		if f[0] != lastCO {
			kernel, lastCO = "", f[0]
		}
		if strings.HasPrefix(f[2], ";") || strings.HasPrefix(f[2], "label") {
			if f[7] != "" { // a function label: its Source is the symbol
				kernel = f[7]
			}
			continue
		}
		co, _ := strconv.ParseUint(f[0], 10, 64)
		va, _ := strconv.ParseUint(f[1], 10, 64)
		k := [2]uint64{co, va}
		r := &pcRow{co: co, vaddr: va, source: f[7], kernel: kernel}
		if f[2] == "" { // a PC the index lacks: no kernel
			r.kernel = ""
		}
		r.c[0], r.c[1], r.c[2], r.c[3] = atoi(t, f[3]), atoi(t, f[4]), atoi(t, f[5]), atoi(t, f[6])
		r.c[8] = r.c[1] + r.c[3] // exposed without hidden cycles
		r.c[9] = 1
		if o := byPC[k]; o != nil {
			if o.c != r.c {
				t.Fatalf("PC %v twice with other counters", k)
			}
			continue
		}
		byPC[k] = r
		rows = append(rows, r)
	}
	hid := readCSV(t, toolOut(t, "att-stats", append([]string{"--format", "hidden.csv"}, args...)...))
	for _, f := range hid[1:] {
		co, _ := strconv.ParseUint(f[0], 10, 64)
		va, _ := strconv.ParseUint(f[1], 10, 64)
		r := byPC[[2]uint64{co, va}]
		if r == nil {
			t.Fatalf("hidden.csv PC %s,%s not in the stats CSV", f[0], f[1])
		}
		r.c[4], r.c[5], r.c[6] = atoi(t, f[4]), atoi(t, f[5]), atoi(t, f[6])
	}
	top := toolOut(t, "att-stats", append([]string{"--format", "top", "-n", "0"}, args...)...)
	sc := bufio.NewScanner(bytes.NewReader(top))
	sc.Scan() // the header
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		co, _ := strconv.ParseUint(f[5], 10, 64)
		va, _ := strconv.ParseUint(strings.TrimPrefix(f[6], "0x"), 16, 64)
		r := byPC[[2]uint64{co, va}]
		if r == nil {
			t.Fatalf("top PC %s %s not in the stats CSV", f[5], f[6])
		}
		r.c[7], r.c[8] = atoi(t, f[3]), atoi(t, f[1])
	}
	return rows
}

// byOutput reads att-stats --by's CSV into key -> counters (10 columns).
func byOutput(t *testing.T, by string, keyCols int, args []string) map[string][10]int64 {
	t.Helper()
	rows := readCSV(t, toolOut(t, "att-stats", append([]string{"--by", by}, args...)...))
	want := "Hitcount,Latency,Stall,Idle,HiddenIdle,HiddenStall,HiddenIssue,Hidden,Exposed,PCs"
	if got := strings.Join(rows[0][keyCols:], ","); got != want {
		t.Fatalf("--by %s header %q", by, rows[0])
	}
	out := map[string][10]int64{}
	for _, f := range rows[1:] {
		key := strings.Join(f[:keyCols], "|")
		if _, dup := out[key]; dup {
			t.Errorf("--by %s: key %q twice", by, key)
		}
		var c [10]int64
		for i := range c {
			c[i] = atoi(t, f[keyCols+i])
		}
		out[key] = c
	}
	return out
}

func sumBy(rows []*pcRow, key func(*pcRow) string) map[string][10]int64 {
	out := map[string][10]int64{}
	for _, r := range rows {
		k := key(r)
		c := out[k]
		for i := range c {
			c[i] += r.c[i]
		}
		out[k] = c
	}
	return out
}

// checkRollups compares att-stats --by line, function and kernel with the
// sums of the per-PC rows; innermost gives a PC's innermost inlined
// function ("" when the index has none: the kernel then).
// needHidden asks for hidden cycles too (not every capture has some).
func checkRollups(t *testing.T, args []string, innermost map[[2]uint64]string, needHidden bool) {
	t.Helper()
	rows := perPC(t, args)
	var hits, hidden int64
	for _, r := range rows {
		hits += r.c[0]
		hidden += r.c[7]
	}
	if hits == 0 || needHidden && hidden == 0 {
		t.Fatalf("%d hits, %d hidden cycles: the sums would test nothing", hits, hidden)
	}
	first := func(src string) string {
		s, _, _ := strings.Cut(src, " -> ")
		return strings.TrimSpace(s)
	}
	for _, c := range []struct {
		by   string
		cols int
		key  func(*pcRow) string
	}{
		{"line", 1, func(r *pcRow) string { return first(r.source) }},
		{"function", 1, func(r *pcRow) string {
			if f := innermost[[2]uint64{r.co, r.vaddr}]; f != "" {
				return f
			}
			return r.kernel
		}},
		{"kernel", 2, func(r *pcRow) string { return fmt.Sprintf("%d|%s", r.co, r.kernel) }},
	} {
		got, want := byOutput(t, c.by, c.cols, args), sumBy(rows, c.key)
		if !reflect.DeepEqual(got, want) {
			for k := range want {
				if got[k] != want[k] {
					t.Errorf("--by %s %q: %v, per-PC rows sum to %v", c.by, k, got[k], want[k])
				}
			}
			for k := range got {
				if _, ok := want[k]; !ok {
					t.Errorf("--by %s: %q has no PC", c.by, k)
				}
			}
		}
		t.Logf("--by %s: %d rows", c.by, len(got))
	}
}

// TestRollupSumsSample: on the sample, att-stats --by line, function and
// kernel sum every counter exactly as the per-PC rows of the stats CSV,
// hidden.csv and top -n 0 add up, each PC counted once under its own
// source line, the innermost function of its inline chain (co-index
// --format json), and the kernel label above it.
func TestRollupSumsSample(t *testing.T) {
	needTools(t, "llvm-objdump-19")
	dir := t.TempDir()
	idx := filepath.Join(dir, "sample.idx")
	tool(t, "co-index", "-o", idx, "testdata/sample/31337_1_code_object_id_1.hsaco")
	args := []string{"--index", idx}
	for se := range 2 {
		rec := filepath.Join(dir, fmt.Sprintf("se%d.rec", se))
		tool(t, "att-decode", "--index", idx, "-o", rec, fmt.Sprintf("testdata/sample/31337_1_shader_engine_%d_1.att", se))
		args = append(args, rec)
	}
	innermost := map[[2]uint64]string{}
	inlined := 0
	sc := bufio.NewScanner(bytes.NewReader(toolOut(t, "co-index", "--format", "json", "testdata/sample/31337_1_code_object_id_1.hsaco")))
	for sc.Scan() {
		var r struct {
			Type    string
			Kind    string
			CodeObj uint64
			Vaddr   uint64
			Inline  []struct{ Function string }
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if r.Type == "row" && r.Kind == "instruction" && len(r.Inline) > 0 {
			innermost[[2]uint64{r.CodeObj, r.Vaddr}] = r.Inline[0].Function
			if len(r.Inline) > 1 {
				inlined++
			}
		}
	}
	if inlined == 0 {
		t.Fatal("the sample's index has no inlined instruction")
	}
	checkRollups(t, args, innermost, true)
}

// TestRollupSumsReal: the same sums on the real captures of the gemm
// workload (AMD's 0.1.6 records, read as JSON lines, with the capture's
// code.json, which carries no inline chains: functions are the kernels).
func TestRollupSumsReal(t *testing.T) {
	n := 0
	for _, c := range testutil.RealCorpus(t) {
		if !strings.HasSuffix(c.Name, "gemm_0") {
			continue
		}
		n++
		t.Run(c.Name, func(t *testing.T) {
			args := []string{"--index", c.CodeJSON}
			for _, tr := range c.Traces {
				args = append(args, tr.Expected)
			}
			checkRollups(t, args, nil, false)
		})
	}
	if n == 0 {
		t.Error("no gemm capture in the real corpus")
	}
}
