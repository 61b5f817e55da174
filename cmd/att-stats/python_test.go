package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

// TestPythonBytes checks the byte formats against Python itself, when a
// python3 is on PATH: the stats CSV must be what Python's csv.writer
// writes for the same rows, and code.json what json.dumps(indent=2) writes
// for the same document. Texts with commas, quotes, newlines, backslashes
// and non-ASCII characters exercise the quoting and escaping rules.
func TestPythonBytes(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH")
	}
	dir := t.TempDir()
	ix := exampleIndex()
	ix.Rows[2].Text = `s_cmp "quoted", x`
	ix.Rows[2].Source = "/src/dir with space/k\u00e9.cl:4 -> /src/\U0001F600.h:1"
	ix.Rows[3].Text = "multi\nline\r\ttab \\ back"
	ix.Rows[4].Source = "</src/&k.cl>:5"
	ix.Rows[6].Source = "cr\ronly"
	ix.Rows = append(ix.Rows, wire.Row{CodeObj: 1, Vaddr: 4900, Text: "\x7f\x01ctl", Line: 12})
	idx := writeIndex(t, filepath.Join(dir, "k.idx"), ix)
	extra := wire.Wave{Instructions: []wire.Instruction{inst(pc(3, 0x40), 3, 1, 2), inst(pc(1, 4900), 9, 0, 1)}}
	s := writeStream(t, filepath.Join(dir, "a.rec"), part{run: 1, waves: []wire.Wave{workedWave(0), extra}})
	csvOut := filepath.Join(dir, "stats.csv")
	jsonOut := filepath.Join(dir, "code.json")
	for _, args := range [][]string{{"-o", csvOut}, {"--format", "code.json", "-o", jsonOut}} {
		if r := runTool(t, nil, append(append([]string{"--index", idx}, args...), s)...); r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
	}
	script := `
import csv, io, json, sys
raw = open(sys.argv[1], 'rb').read()
rows = list(csv.reader(io.StringIO(raw.decode('utf-8'), newline='')))
buf = io.StringIO(newline='')
csv.writer(buf).writerows(rows)
if buf.getvalue().encode('utf-8') != raw:
    sys.exit('csv differs from csv.writer:\n%r\n%r' % (raw, buf.getvalue()))
if len(rows) != 15 or rows[13] != ['0', '0', '', '0', '0', '0', '0', ''] or rows[3][2] != 's_cmp "quoted", x' or rows[4][2] != 'multi\nline\r\ttab \\ back':
    sys.exit('csv rows: %r' % rows)
data = open(sys.argv[2], 'rb').read()
doc = json.loads(data)
if json.dumps(doc, indent=2).encode('ascii') != data:
    sys.exit('code.json differs from json.dumps(indent=2)')
if doc['code'][2][3] != '/src/dir with space/k\u00e9.cl:4 -> /src/\U0001F600.h:1':
    sys.exit('source: %r' % doc['code'][2][3])
`
	sp := filepath.Join(dir, "check.py")
	os.WriteFile(sp, []byte(script), 0o644)
	out, err := exec.Command(py, sp, csvOut, jsonOut).CombinedOutput()
	if err != nil {
		t.Errorf("python3 check: %v\n%s", err, out)
	}
}
