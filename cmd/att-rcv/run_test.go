package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/attkit/attkit/internal/cli"
	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/rcv"
	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

// runCmd runs att-rcv in-process and returns its exit code, stdout, stderr.
func runCmd(t testing.TB, stdin io.Reader, args ...string) (int, string, string) {
	t.Helper()
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	var out, errb bytes.Buffer
	code := run(args, stdin, &out, &errb)
	return code, out.String(), errb.String()
}

// writeFile writes data to dir/name and returns the path.
func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// sampleInputs writes the sample index and streams into a fresh directory.
func sampleInputs(t testing.TB) (dir, index, a, b string) {
	dir = t.TempDir()
	sa, sb := sampleStreams(t)
	in := filepath.Join(dir, "in")
	os.Mkdir(in, 0o755)
	index = writeFile(t, in, "code.json", sampleIndex().CodeJSON())
	return dir, index, writeFile(t, in, "a.rec", sa), writeFile(t, in, "b.rec", sb)
}

// listTree returns the relative paths of the regular files under dir.
func listTree(t testing.TB, dir string) []string {
	t.Helper()
	var names []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			names = append(names, rel)
		}
		return nil
	})
	sort.Strings(names)
	return names
}

func TestGoldenSample(t *testing.T) {
	dir, index, a, b := sampleInputs(t)
	out := filepath.Join(dir, "out", "ui_output_sample1")
	code, stdout, stderr := runCmd(t, nil, "-d", out, "--index", index, a, b)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stdout != "" || stderr != "" {
		t.Errorf("unexpected output: %q %q", stdout, stderr)
	}
	if err := rcv.CheckFolder(out); err != nil {
		t.Errorf("the viewer would not load the folder completely:\n%v", err)
	}
	testutil.GoldenDir(t, "golden/sample", filepath.Join(dir, "out"))
	checkReference(t, out, []string{a, b}, sampleIndex())
}

// The same run read from standard input as one concatenated stream gives
// the same folder.
func TestStdinConcatenated(t *testing.T) {
	dir, index, a, b := sampleInputs(t)
	sa, _ := os.ReadFile(a)
	sb, _ := os.ReadFile(b)
	out := filepath.Join(dir, "out", "ui_output_sample1")
	code, _, stderr := runCmd(t, bytes.NewReader(append(sa, sb...)), "-d", out, "--index", index)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	testutil.GoldenDir(t, "golden/sample", filepath.Join(dir, "out"))
}

func TestFormats(t *testing.T) {
	dir, index, a, b := sampleInputs(t)
	for _, tc := range []struct {
		formats []string
		files   []string // a few files that must exist (relative to the parent)
		absent  []string
	}{
		{[]string{"--formats", "json"}, []string{"f/filenames.json", "f/code.json"}, []string{"stats_f.csv"}},
		{[]string{"--formats", " CSV "}, []string{"f/code.json", "stats_f.csv"}, []string{"f/filenames.json", "f/se0_sm0_sl3_wv0.json"}},
		{[]string{"--formats", "csv,,JSON"}, []string{"f/filenames.json", "stats_f.csv"}, nil},
	} {
		parent := filepath.Join(dir, strings.Join(tc.formats, "_"))
		args := append([]string{"-d", filepath.Join(parent, "f"), "--index", index}, tc.formats...)
		if code, _, stderr := runCmd(t, nil, append(args, a, b)...); code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.formats, code, stderr)
		}
		for _, f := range tc.files {
			if _, err := os.Stat(filepath.Join(parent, f)); err != nil {
				t.Errorf("%v: %v", tc.formats, err)
			}
		}
		for _, f := range tc.absent {
			if _, err := os.Stat(filepath.Join(parent, f)); err == nil {
				t.Errorf("%v: %s written", tc.formats, f)
			}
		}
	}
	// CSV-only writes code.json too, with the same counters; only the row
	// of the unresolved PC (0, 0) is missing, since no wave file asked for
	// its line number (python-layer §4.5).
	full, err := wire.ReadIndexFile(filepath.Join(dir, "--formats_json", "f", "code.json"))
	if err != nil {
		t.Fatal(err)
	}
	csvOnly, err := wire.ReadIndexFile(filepath.Join(dir, "--formats_ CSV ", "f", "code.json"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(full.Rows); n != len(csvOnly.Rows)+1 || full.Rows[n-1].PC() != (wire.PC{}) ||
		!reflect.DeepEqual(full.Rows[:n-1], csvOnly.Rows) {
		t.Errorf("csv-only code.json rows:\n%v\nwant those of the json run but its last (0,0) row:\n%v", csvOnly.Rows, full.Rows)
	}
}

func TestUsageErrors(t *testing.T) {
	dir, index, a, _ := sampleInputs(t)
	out := filepath.Join(dir, "u")
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--formats", "jsn", a}, exitcode.Usage, "att-rcv: Unsupported output format(s): jsn. Expected one or more of: csv, json\n"},
		{[]string{"--formats", "jsonx,csv,xml,jsonx", a}, exitcode.Usage, "att-rcv: Unsupported output format(s): jsonx, xml. Expected one or more of: csv, json\n"},
		{[]string{"--formats", " , ", a}, exitcode.Usage, "att-rcv: No output formats requested.\n"},
		{[]string{"--index", filepath.Join(dir, "missing.json"), a}, exitcode.Failed, "no such file"},
		{[]string{a, a}, exitcode.Usage, "att-rcv: " + a + " given twice: give each input once\n"},
		{[]string{"-", "-"}, exitcode.Usage, "att-rcv: standard input (-) given twice\n"},
		{[]string{"--counters", "A,B,C,D,E,F,G,H", "--counters", "I", a}, exitcode.Usage, "att-rcv: --counters: 9 counters: the viewer names at most 8 (4 per bank, 2 banks)\n"},
		{[]string{"--counters", "SQ_WAVES,SQ_WAVES", a}, exitcode.Usage, "att-rcv: --counters: counter \"SQ_WAVES\" named twice\n"},
	} {
		code, _, stderr := runCmd(t, nil, append([]string{"-d", out}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.msg) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", tc.args, code, stderr, tc.code, tc.msg)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: output folder created", tc.args)
		}
	}
	if code, _, _ := runCmd(t, nil, "--index", index, a); code != exitcode.Usage {
		t.Errorf("missing -d: exit %d, want 2", code)
	}
	if code, stdout, _ := runCmd(t, nil, "--help"); code != 0 || !strings.Contains(stdout, "--no-decode-markers") {
		t.Errorf("--help: exit %d, %q", code, stdout)
	}
}

// noLeftovers fails when parent holds anything but the names in keep.
func noLeftovers(t *testing.T, parent string, keep ...string) {
	t.Helper()
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		ok := false
		for _, k := range keep {
			ok = ok || e.Name() == k
		}
		if !ok {
			t.Errorf("left behind: %s", filepath.Join(parent, e.Name()))
		}
	}
}

func TestFailuresLeaveNothing(t *testing.T) {
	dir, index, a, b := sampleInputs(t)
	sb, _ := os.ReadFile(b)
	cut := writeFile(t, filepath.Join(dir, "in"), "cut.rec", sb[:len(sb)-7])
	garbage := writeFile(t, filepath.Join(dir, "in"), "garbage.rec", []byte("not a record stream"))
	run2 := writeFile(t, filepath.Join(dir, "in"), "run2.rec", encode(t, part{se: 2, run: 2}))
	neg := writeFile(t, filepath.Join(dir, "in"), "neg.rec", encode(t, part{se: -1, run: 1}))
	notDir := writeFile(t, dir, "plainfile", []byte("x"))
	for _, tc := range []struct {
		name string
		out  string
		args []string
		code int
		msg  string
	}{
		{"cut short", "o1/deep/ui", []string{a, cut}, exitcode.Failed, "cut.rec: offset"},
		{"garbage", "o2/ui", []string{a, garbage}, exitcode.Format, "garbage.rec: not an attkit-records stream"},
		{"missing stream", "o3/ui", []string{a, filepath.Join(dir, "nope.rec")}, exitcode.Failed, "nope.rec: no such file"},
		{"two runs", "o4/ui", []string{a, run2}, exitcode.Failed, "run2.rec: part 0 is of run 2, earlier streams of run 1"},
		{"negative SE", "o5/ui", []string{neg}, exitcode.Failed, "negative shader engine -1"},
		{"parent is a file", "plainfile/ui", []string{a}, exitcode.Failed, "not a directory"},
	} {
		out := filepath.Join(dir, tc.out)
		code, _, stderr := runCmd(t, nil, append([]string{"-d", out, "--index", index}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.msg) || !strings.HasPrefix(stderr, "att-rcv: ") ||
			strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q; want %d, %q", tc.name, code, stderr, tc.code, tc.msg)
		}
		// Nothing of the run remains: not the folder, not its temporary
		// sibling, not the parents att-rcv created, not the CSV.
		top := strings.SplitN(tc.out, "/", 2)[0]
		if top == "plainfile" {
			if data, _ := os.ReadFile(notDir); string(data) != "x" {
				t.Errorf("%s: %s changed", tc.name, notDir)
			}
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, top)); err == nil {
			t.Errorf("%s: %s left behind: %v", tc.name, top, listTree(t, filepath.Join(dir, top)))
		}
	}
	noLeftovers(t, dir, "in", "plainfile")
}

func TestExistingFolder(t *testing.T) {
	dir, index, a, b := sampleInputs(t)
	out := filepath.Join(dir, "ui")
	os.Mkdir(out, 0o755)
	// An empty folder is fine.
	if code, _, stderr := runCmd(t, nil, "-d", out, "--index", index, a, b); code != 0 {
		t.Fatalf("empty folder: exit %d: %s", code, stderr)
	}
	before := listTree(t, out)
	// A folder with content is refused, and left alone.
	code, _, stderr := runCmd(t, nil, "-d", out, "--index", index, a)
	if code != exitcode.Failed || !strings.Contains(stderr, "holds an earlier result of att-rcv") {
		t.Errorf("non-empty folder: exit %d, %q", code, stderr)
	}
	if got := listTree(t, out); strings.Join(got, " ") != strings.Join(before, " ") {
		t.Errorf("refused run changed the folder")
	}
	// --force replaces it whole: no file of the earlier folder stays
	// (a wave file of the first run would be one the new filenames.json
	// does not list).
	code, _, stderr = runCmd(t, nil, "--force", "-d", out, "--index", index, "--formats", "json", b)
	if code != 0 {
		t.Fatalf("--force: exit %d: %s", code, stderr)
	}
	if err := rcv.CheckFolder(out); err != nil {
		t.Errorf("after --force: %v", err)
	}
	// A file of the user's in it: --force refuses, and does not suggest
	// itself.
	writeFile(t, out, "notes.txt", []byte("mine"))
	code, _, stderr = runCmd(t, nil, "--force", "-d", out, "--index", index, "--formats", "json", b)
	if code != exitcode.Failed || !strings.Contains(stderr, "notes.txt") || strings.Contains(stderr, "--force") {
		t.Errorf("--force over a file of the user's: exit %d, %q", code, stderr)
	}
	fn, _ := os.ReadFile(filepath.Join(out, "filenames.json"))
	if strings.Contains(string(fn), "se0_sm1_sl2_wv0.json") {
		t.Errorf("filenames.json is not the second run's")
	}
	noLeftovers(t, dir, "in", "ui", "stats_ui.csv")
	// A file where the folder should be is refused.
	code, _, stderr = runCmd(t, nil, "-d", filepath.Join(out, "notes.txt"), a)
	if code != exitcode.Failed || !strings.Contains(stderr, "exists and is not a directory") {
		t.Errorf("file as folder: exit %d, %q", code, stderr)
	}
}

// A failing disk: every write fails after n bytes, at every point of the
// run. Each attempt must fail with the disk's message and leave nothing.
func TestDiskFull(t *testing.T) {
	dir, index, a, b := sampleInputs(t)
	parent := filepath.Join(dir, "disk")
	os.Mkdir(parent, 0o755)
	var total int64
	okRun := func(limit int64) error {
		written := int64(0)
		opt := rcv.FolderOptions{Create: func(path string) (io.WriteCloser, error) {
			f, err := os.Create(path)
			if err != nil {
				return nil, err
			}
			return &limitedFile{f: f, written: &written, limit: limit}, nil
		}}
		fl := flags{Dir: filepath.Join(parent, "ui"), Index: index, Formats: []string{"json,csv"}, Streams: []string{a, b}}
		env := &cli.Env{Name: "att-rcv", Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}
		err := write(env, &fl, opt)
		total = written
		return err
	}
	if err := okRun(1 << 40); err != nil {
		t.Fatal(err)
	}
	full := total
	os.RemoveAll(filepath.Join(parent, "ui"))
	os.Remove(filepath.Join(parent, "stats_ui.csv"))
	for _, limit := range []int64{0, 100, full / 3, full / 2, full - 10} {
		err := okRun(limit)
		if err == nil || !strings.Contains(err.Error(), "no space left on device") {
			t.Errorf("limit %d: err %v", limit, err)
		}
		noLeftovers(t, parent)
	}
}

type limitedFile struct {
	f       *os.File
	written *int64
	limit   int64
}

func (l *limitedFile) Write(p []byte) (int, error) {
	room := l.limit - *l.written
	if room < int64(len(p)) {
		n, _ := l.f.Write(p[:max(room, 0)])
		*l.written += int64(n)
		return n, &os.PathError{Op: "write", Path: l.f.Name(), Err: errNoSpace}
	}
	n, err := l.f.Write(p)
	*l.written += int64(n)
	return n, err
}

func (l *limitedFile) Close() error { return l.f.Close() }

var errNoSpace = syscall.ENOSPC

// --progress prints one summary line; "-" among the streams is stdin.
func TestProgressAndStdinArg(t *testing.T) {
	dir, index, a, b := sampleInputs(t)
	sb, _ := os.ReadFile(b)
	out := filepath.Join(dir, "out", "ui_output_sample1")
	code, stdout, stderr := runCmd(t, bytes.NewReader(sb), "--progress", "-d", out, "--index", index, a, "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "att-rcv: " + out + ": 3 traces, 5 waves, 4 wave files, 14 files, "
	if stdout != "" || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("stderr %q, want a line starting %q", stderr, want)
	}
	testutil.GoldenDir(t, "golden/sample", filepath.Join(dir, "out"))
}

// A directory the user cannot write into (meaningless for root, who can).
func TestUnwritableParent(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: permissions do not stop writes")
	}
	dir, index, a, _ := sampleInputs(t)
	ro := filepath.Join(dir, "ro")
	os.Mkdir(ro, 0o555)
	defer os.Chmod(ro, 0o755)
	code, _, stderr := runCmd(t, nil, "-d", filepath.Join(ro, "ui"), "--index", index, a)
	if code != exitcode.Failed || !strings.Contains(stderr, "permission denied") {
		t.Errorf("exit %d, %q", code, stderr)
	}
	noLeftovers(t, ro)
	// An existing empty folder in it is writable: the run builds inside it.
	os.Chmod(ro, 0o755)
	os.Mkdir(filepath.Join(ro, "ui"), 0o755)
	os.Chmod(ro, 0o555)
	code, _, stderr = runCmd(t, nil, "-d", filepath.Join(ro, "ui"), "--index", index, "--formats", "json", a)
	if code != 0 {
		t.Fatalf("existing folder in a read-only parent: exit %d, %q", code, stderr)
	}
	if err := rcv.CheckFolder(filepath.Join(ro, "ui")); err != nil {
		t.Error(err)
	}
	noLeftovers(t, filepath.Join(ro, "ui"), listTree(t, filepath.Join(ro, "ui"))...)
	if m, _ := filepath.Glob(filepath.Join(ro, "ui", ".att-rcv.tmp-*")); len(m) > 0 {
		t.Errorf("left behind: %v", m)
	}
}

// A run with nothing the viewer shows is written, with a warning.
func TestEmptyRunWarns(t *testing.T) {
	dir := t.TempDir()
	stream := writeFile(t, dir, "empty.rec", encode(t, part{se: 0, run: 1}))
	out := filepath.Join(dir, "ui")
	code, _, stderr := runCmd(t, nil, "-d", out, stream)
	if code != 0 || stderr != "att-rcv: warning: "+out+": no waves, no occupancy and no code: ROCprof Compute Viewer will not open this folder\n" {
		t.Errorf("exit %d, %q", code, stderr)
	}
	if err := rcv.CheckFolder(out); err == nil || !strings.Contains(err.Error(), "the viewer rejects the folder") {
		t.Errorf("CheckFolder: %v", err)
	}
}

func TestCheckFlag(t *testing.T) {
	good := filepath.Join("testdata", "golden", "sample", "ui_output_sample1")
	if code, stdout, stderr := runCmd(t, nil, "--check", "-d", good); code != 0 || stdout != "" || stderr != "" {
		t.Errorf("good folder: exit %d, %q, %q", code, stdout, stderr)
	}
	dir := t.TempDir()
	data, _ := os.ReadFile(filepath.Join(good, "filenames.json"))
	writeFile(t, dir, "filenames.json", data)
	code, _, stderr := runCmd(t, nil, "--check", "-d", dir)
	if code != exitcode.Failed || !strings.Contains(stderr, "att-rcv: "+dir+": code.json: ") ||
		!strings.Contains(stderr, "att-rcv: "+dir+": se0_sm0_sl3_wv0.json: ") {
		t.Errorf("broken folder: exit %d, %q", code, stderr)
	}
}

// --counters fills filenames.json's counter_names, in order, repeated
// flags and comma lists alike; without it the list stays empty.
func TestCountersFlag(t *testing.T) {
	dir, index, a, b := sampleInputs(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, []string{}},
		{[]string{"--counters", "SQ_WAVES, SQ_BUSY_CYCLES,SQ_INSTS_VALU,SQ_INSTS_SALU", "--counters", "SQ_INST_LEVEL_VMEM:3"},
			[]string{"SQ_WAVES", "SQ_BUSY_CYCLES", "SQ_INSTS_VALU", "SQ_INSTS_SALU", "SQ_INST_LEVEL_VMEM:3"}},
	} {
		out := filepath.Join(dir, "ui_c"+strconv.Itoa(len(tc.want)))
		args := append([]string{"-d", out, "--index", index, "--formats", "json"}, tc.args...)
		if code, _, stderr := runCmd(t, nil, append(args, a, b)...); code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, stderr)
		}
		data, err := os.ReadFile(filepath.Join(out, "filenames.json"))
		if err != nil {
			t.Fatal(err)
		}
		var fn struct {
			CounterNames []string `json:"counter_names"`
		}
		if err := json.Unmarshal(data, &fn); err != nil || !reflect.DeepEqual(fn.CounterNames, tc.want) {
			t.Errorf("%v: counter_names %q (%v), want %q", tc.args, fn.CounterNames, err, tc.want)
		}
		if err := rcv.CheckFolder(out); err != nil {
			t.Errorf("%v: %v", tc.args, err)
		}
	}
}
