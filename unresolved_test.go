package attkit_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/sqttgen"
	"github.com/attkit/attkit/internal/wire"
)

// TestAttToolUnresolvedRow runs att-tool on a generated capture of the
// sample's code object announced after the first waves started, decoded
// as AMD's 0.1.6 library decodes it (att-tool --compat 0.1.6): the waves that ended before the load keep unresolved PCs.
// As upstream (python-layer §4.3, §4.4 note, §5.6), the default run
// (json,csv) ends its stats CSV with the row "0,0,,0,0,0,0," and gives
// (0, 0) a code.json row; --formats csv writes neither, and otherwise the
// same CSV.
func TestAttToolUnresolvedRow(t *testing.T) {
	needTools(t, "llvm-objdump-19")
	tmp := t.TempDir()
	idx := filepath.Join(tmp, "idx")
	run(t, "", filepath.Join(binDir, "co-index"), "-o", idx, "testdata/sample/31337_1_code_object_id_1.hsaco")
	ix, err := wire.ReadIndexFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	trace, _, err := sqttgen.Generate(sqttgen.Config{Index: ix, Seed: 2, Instrument: true, LateLoad: true, MaxTrips: 20})
	if err != nil {
		t.Fatal(err)
	}
	capDir := filepath.Join(tmp, "cap")
	os.Mkdir(capDir, 0o755)
	if err := os.Link("testdata/sample/31337_1_code_object_id_1.hsaco", filepath.Join(capDir, "5_1_code_object_id_1.hsaco")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(capDir, "5_1_shader_engine_0_1.att"), trace, 0o644); err != nil {
		t.Fatal(err)
	}
	outputs := func(formats string) (csv string, code *wire.Index) {
		t.Helper()
		out := filepath.Join(tmp, "out-"+strings.ReplaceAll(formats, ",", "-"), "ui")
		stdout, stderr, rc := attTool(t, []string{"ATT_SUPPRESS_WARNING=1"},
			"-d", out, "--formats", formats, "--backend", "native", "--compat", "0.1.6", capDir)
		if rc != 0 || stdout != out+"\n" {
			t.Fatalf("--formats %s: exit %d, stdout %q: %s", formats, rc, stdout, stderr)
		}
		b, err := os.ReadFile(filepath.Join(filepath.Dir(out), "stats_ui.csv"))
		if err != nil {
			t.Fatal(err)
		}
		if code, err = wire.ReadIndexFile(filepath.Join(out, "code.json")); err != nil {
			t.Fatal(err)
		}
		return string(b), code
	}
	hasZero := func(code *wire.Index) bool {
		for _, r := range code.Rows {
			if !r.IsLabel() && r.PC() == (wire.PC{}) {
				return true
			}
		}
		return false
	}
	full, fullCode := outputs("json,csv")
	only, onlyCode := outputs("csv")
	const zero = "0,0,,0,0,0,0,\r\n"
	if !strings.HasSuffix(full, "\r\n"+zero) || full != only+zero {
		t.Errorf("json,csv stats CSV is not the csv one plus a last row %q:\n...%s\ncsv:\n...%s",
			zero, full[max(0, len(full)-200):], only[max(0, len(only)-200):])
	}
	if !hasZero(fullCode) || hasZero(onlyCode) || len(fullCode.Rows) != len(onlyCode.Rows)+1 {
		t.Errorf("code.json rows of (0, 0): json,csv %v (of %d rows), csv %v (of %d rows); want true, false, one row apart",
			hasZero(fullCode), len(fullCode.Rows), hasZero(onlyCode), len(onlyCode.Rows))
	}
}
