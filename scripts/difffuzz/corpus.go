package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/sqtt"
	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

// A seed is one real trace of the corpus, framed.
type seed struct {
	name string // capture/file, e.g. gfx1100_gemm_0/1_1_shader_engine_3_1.att
	arch string // capture.json arch, e.g. gfx1100: splices stay within one
	fam  string // "gfx9" or "rdna"
	g    *gen
	toks []token
	pad  int
	isa  int // index into corpus.isas
	base []string
}

// A corpus is the real traces and the ISA of their kernels.
type corpus struct {
	dir      string
	isaPaths []string // code.json of each capture
	isas     []isa.Provider
	seeds    []*seed
	gens     map[int]*gen // by RDNA header version; 0 is gfx9
}

// genOf detects the architecture from the first 8 bytes with the decoder's
// own header rule (sqtt.Detect, §1.2) and returns its framing, or nil for a
// trace the harness does not mutate (not a trace, MI400, unknown versions).
func (c *corpus) genOf(data []byte) *gen {
	if len(data) < 8 {
		return nil
	}
	arch, err := sqtt.Detect(data[:8])
	if err != nil || !arch.Supported() {
		return nil
	}
	version := 0 // gfx9
	if arch.GFXIP != 9 {
		version = arch.Version2
	}
	g := c.gens[version]
	if g == nil {
		if version == 0 {
			g = gfx9Gen()
		} else {
			g = rdnaGen(version)
		}
		c.gens[version] = g
	}
	return g
}

// loadCorpus reads every capture folder of dir (capture.json, code.json and
// the traces it lists, through testutil.ReadCaptures as the tests do) and frames each trace, checking that framing and
// assembly give back its bytes.
func loadCorpus(dir string) (*corpus, error) {
	caps, err := testutil.ReadCaptures(dir)
	if err != nil {
		return nil, err
	}
	c := &corpus{dir: dir, gens: map[int]*gen{}}
	for _, cp := range caps {
		ix, err := wire.ReadIndexFile(cp.CodeJSON)
		if err != nil {
			return nil, err
		}
		c.isaPaths = append(c.isaPaths, cp.CodeJSON)
		c.isas = append(c.isas, isa.NewTable(ix))
		files := make([]string, 0, len(cp.Traces))
		for _, t := range cp.Traces {
			files = append(files, t.File)
		}
		sort.Strings(files) // the seeds' order, as before: by file name
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			name := cp.Name + "/" + filepath.Base(f)
			g := c.genOf(data)
			if g == nil {
				fmt.Fprintf(os.Stderr, "difffuzz: %s: not a gfx9, gfx10, gfx11 or gfx12 trace, skipped\n", name)
				continue
			}
			toks, pad, err := g.frame(data)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if !bytes.Equal(assemble(toks, pad), data) {
				return nil, fmt.Errorf("%s: framing does not give back the trace's bytes", name)
			}
			fam := "rdna"
			if !g.rdna {
				fam = "gfx9"
			}
			c.seeds = append(c.seeds, &seed{name: name, arch: cp.Arch, fam: fam, g: g, toks: toks, pad: pad, isa: len(c.isas) - 1})
		}
	}
	if len(c.seeds) == 0 {
		return nil, fmt.Errorf("%s holds no traces (want capture folders with capture.json, code.json and .att files)", dir)
	}
	return c, nil
}
