package main

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// When python3 is on PATH, every JSON file of the golden folders must be
// exactly what json.dumps(json.load(f), indent=2) writes (python-layer
// §5.1), and the stats CSVs what csv.writer writes for the rows read back.
func TestGoldensAgainstPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH")
	}
	const script = `
import csv, io, json, pathlib, sys
bad = 0
for root in sys.argv[1:]:
    for p in sorted(pathlib.Path(root).rglob("*")):
        if p.suffix == ".json":
            data = p.read_bytes()
            if json.dumps(json.loads(data), indent=2).encode() != data:
                print("json.dumps differs:", p); bad += 1
        elif p.suffix == ".csv":
            data = p.read_bytes()
            rows = list(csv.reader(io.StringIO(data.decode(), newline="")))
            out = io.StringIO(newline="")
            csv.writer(out).writerows(rows)
            if out.getvalue().encode() != data:
                print("csv.writer differs:", p); bad += 1
sys.exit(1 if bad else 0)
`
	out, err := exec.Command(py, "-c", script,
		filepath.Join("testdata", "golden", "sample"), filepath.Join("testdata", "golden", "generated")).CombinedOutput()
	if err != nil {
		t.Errorf("python3 check: %v\n%s", err, out)
	}
}
