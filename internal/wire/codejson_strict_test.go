package wire

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/testutil"
)

const goodRow = `["s_nop 0", 0, 1, "", 1, 4096, 0, 0, 0, 0]`

// TestCodeJSONStrict: a malformed row (a non-numeric, negative or missing
// address, a short row, a negative line...) is an error naming the row, a
// second row of one PC too, an unknown version exits 3; --lenient (Lenient)
// keeps today's reading, the bad rows kept whole and counted. Measured on
// 478e79a: every one of these read without an error.
func TestCodeJSONStrict(t *testing.T) {
	doc := func(version string, rows ...string) string {
		v := ""
		if version != "" {
			v = `, "version": "` + version + `"`
		}
		return `{"code": [` + strings.Join(rows, ", ") + `]` + v + `}`
	}
	for _, c := range []struct {
		name, doc, want string
		code            int
	}{
		{"address abc", doc("", goodRow, `["s_nop 1", 0, 2, "", 1, "abc", 0, 0, 0, 0]`), `code row 2: Vaddr "abc" is not a non-negative integer`, 1},
		{"negative address", doc("", `["s_nop 1", 0, 2, "", 1, -4, 0, 0, 0, 0]`), `code row 1: Vaddr -4 is not a non-negative integer`, 1},
		{"fractional address", doc("", `["s_nop 1", 0, 2, "", 1, 4096.5, 0, 0, 0, 0]`), `code row 1: Vaddr 4096.5`, 1},
		{"negative code object", doc("", `["s_nop 1", 0, 2, "", -1, 4096, 0, 0, 0, 0]`), `code row 1: Codeobj -1`, 1},
		{"short row", doc("", goodRow, goodRow[:len(goodRow)-10]+`]`), `code row 2: 7 columns, fewer than the 10`, 1},
		{"not an array", doc("", `"s_nop 0"`), `code row 1: not an array`, 1},
		{"negative line", doc("", `["s_nop 1", 0, -1, "", 1, 4096, 0, 0, 0, 0]`), `code row 1: LineNumber -1`, 1},
		{"text not a string", doc("", `[7, 0, 1, "", 1, 4096, 0, 0, 0, 0]`), `code row 1: ISA 7 is not a string`, 1},
		{"counter", doc("", `["s_nop 1", 0, 1, "", 1, 4096, "x", 0, 0, 0]`), `code row 1: Hit "x" is not an integer`, 1},
		{"duplicate PC", doc("", goodRow, `["; _k", 0, 2, "k", 1, 4096, 0, 0, 0, 0]`, `["s_nop 9", 0, 3, "", 1, 4096, 0, 0, 0, 0]`),
			`code row 3: code object 1 address 0x1000 again (first in row 1)`, 1},
		{"version 99", doc("99", goodRow), `unsupported code.json version "99"`, 3},
		{"version 2.0", doc("2.0", goodRow), `unsupported code.json version "2.0"`, 3},
	} {
		_, err := ReadIndex(strings.NewReader(c.doc), "x/code.json")
		var ce *CodeJSONError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "x/code.json: ") ||
			exitcode.Of(err) != c.code {
			t.Errorf("%s: %v (exit %d); want %q, exit %d", c.name, err, exitcode.Of(err), c.want, c.code)
		}
		if c.code == 3 {
			continue
		}
		ix, err := ReadIndexWith(strings.NewReader(c.doc), "x/code.json", ReadOptions{Lenient: true})
		if err != nil || ix.Skipped != 1 {
			t.Errorf("%s, lenient: %v, %d skipped", c.name, err, ix.Skipped)
			continue
		}
		// The document is written back as it was read, the bad row too.
		back, err := ParseCodeJSONWith(ix.CodeJSON(), ReadOptions{Lenient: true})
		if err != nil || len(back.Rows) != len(ix.Rows) || back.Skipped != 1 {
			t.Errorf("%s: round trip: %v", c.name, err)
		}
	}
	for _, v := range []string{"", "1.0", "1", "snapshot_dwarf-1.1", "snapshot-1.0", "1.2.3"} {
		if ix, err := ReadIndex(strings.NewReader(doc(v, goodRow)), "x"); err != nil || ix.Skipped != 0 || len(ix.Rows) != 1 {
			t.Errorf("version %q: %v", v, err)
		}
	}
}

// TestCodeJSONStrictReadsEveryKnown: every code.json of the repository's
// testdata and of the real captures reads strictly.
func TestCodeJSONStrictReadsEveryKnown(t *testing.T) {
	var paths []string
	filepath.WalkDir(filepath.Join("..", ".."), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "code.json" && !strings.Contains(p, "/fuzz/") {
			paths = append(paths, p)
		}
		return nil
	})
	if real := testutil.RealDir(); real != "" {
		m, _ := filepath.Glob(filepath.Join(real, "*", "code.json"))
		paths = append(paths, m...)
	} else {
		t.Log("the real-hardware corpus ../shared/real is absent: testdata only")
	}
	if len(paths) < 4 {
		t.Fatalf("only %d code.json files found", len(paths))
	}
	for _, p := range paths {
		ix, err := ReadIndexFile(p)
		if err != nil {
			t.Errorf("%v", err)
		} else if ix.Skipped != 0 || len(ix.Rows) == 0 {
			t.Errorf("%s: %d rows, %d skipped", p, len(ix.Rows), ix.Skipped)
		}
	}
	t.Logf("%d code.json files", len(paths))
}
