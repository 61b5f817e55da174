package cli

import (
	"github.com/attkit/attkit/internal/publish"
	"github.com/attkit/attkit/internal/wire"
)

// ReadIndex reads the index at path (an index stream or a code.json):
// strictly, or with lenient skipping a code.json's malformed rows and a
// PC's second row, their count on stderr.
func (e *Env) ReadIndex(path string, lenient bool) (*wire.Index, error) {
	publish.Input(path) // no output of the process may replace it
	ix, err := wire.ReadIndexFileWith(path, wire.ReadOptions{Lenient: lenient})
	if err != nil {
		return nil, err
	}
	if ix.Skipped > 0 {
		e.Warnf("%s: %d malformed or repeated code rows skipped (--lenient): their PCs are not looked up", path, ix.Skipped)
	}
	return ix, nil
}
