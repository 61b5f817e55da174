package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

// TestCodeJSONStrict: a code.json with a duplicated row, a row whose
// address is "abc" or an unknown version is refused naming the row (on
// 478e79a the duplicate doubled the CSV's rows and the others read
// silently); --lenient reads on, one CSV row per PC, the count on stderr.
func TestCodeJSONStrict(t *testing.T) {
	dir := t.TempDir()
	s := writeStream(t, filepath.Join(dir, "a.rec"), part{run: 1, se: 0, waves: []wire.Wave{
		{EndTime: 20, Instructions: []wire.Instruction{inst(pc(1, 0x1000), 4, 0, 4), inst(pc(1, 0x1004), 8, 0, 4)}}}})
	row := func(text string, line int, addr string) string {
		return `["` + text + `", 0, ` + strconv.Itoa(line) + `, "", 1, ` + addr + `, 0, 0, 0, 0]`
	}
	write := func(name, version string, rows ...string) string {
		p := filepath.Join(dir, name)
		doc := `{"code": [` + strings.Join(rows, ", ") + `], "version": "` + version + `"}`
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	dup := write("dup.json", "1.0", row("s_nop 0", 1, "4096"), row("s_endpgm", 2, "4100"), row("s_endpgm", 3, "4100"))
	abc := write("abc.json", "1.0", row("s_nop 0", 1, "4096"), row("s_endpgm", 2, `"abc"`))
	v99 := write("v99.json", "99", row("s_nop 0", 1, "4096"))
	for _, c := range []struct {
		index, want string
		code        int
	}{
		{dup, "code row 3: code object 1 address 0x1004 again (first in row 2)", 1},
		{abc, `code row 2: Vaddr "abc" is not a non-negative integer`, 1},
		{v99, `unsupported code.json version "99"`, 3},
	} {
		r := runTool(t, nil, "--index", c.index, s)
		if r.code != c.code || !strings.Contains(r.stderr, c.index+": "+c.want) || r.stdout != "" {
			t.Errorf("%s: exit %d, stderr %q; want %d, %q", c.index, r.code, r.stderr, c.code, c.want)
		}
	}
	r := runTool(t, nil, "--lenient", "--index", dup, s)
	if r.code != 0 || strings.Count(r.stdout, ",4100,") != 1 || !strings.Contains(r.stderr, "1 malformed or repeated code rows skipped") {
		t.Errorf("--lenient: exit %d, stderr %q, csv\n%s", r.code, r.stderr, r.stdout)
	}
}
