package rcv

import (
	"bytes"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"
)

// Chains that fill in turn share the spool file: each reads back exactly
// what was added to it, through reads of any size, and a chain that fills
// while the others wait keeps its consecutive blocks as one.
func TestChainsReadBack(t *testing.T) {
	sp, err := newSpool(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.close()
	rng := rand.New(rand.NewPCG(1, 2))
	chains := make([]chain, 3)
	want := make([][]byte, len(chains))
	add := func(k int, n int) {
		c := &chains[k]
		for range n {
			p := make([]byte, 1+rng.IntN(300))
			for i := range p {
				p[i] = byte(rng.Uint32())
			}
			c.tail = append(c.tail, p...)
			want[k] = append(want[k], p...)
			if err := c.flushIfFull(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range chains {
		chains[i].s = sp
	}
	for range 50 { // interleaved
		add(rng.IntN(3), 1+rng.IntN(20))
	}
	before := len(chains[0].blocks)
	add(0, 300) // alone: about 5 blocks of 8 KB
	if got := len(chains[0].blocks); got > before+1 {
		t.Errorf("chain 0 grew from %d to %d block entries filling alone, want at most %d", before, got, before+1)
	}
	for k := range chains {
		if len(chains[k].blocks) < 2 {
			t.Fatalf("chain %d has %d blocks: the test must read across blocks", k, len(chains[k].blocks))
		}
		for _, r := range []io.Reader{chains[k].reader(), iotest.OneByteReader(chains[k].reader())} {
			got, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want[k]) {
				t.Errorf("chain %d: read %d bytes, want %d (or they differ)", k, len(got), len(want[k]))
			}
		}
		if err := iotest.TestReader(chains[k].reader(), want[k]); err != nil {
			t.Errorf("chain %d: %v", k, err)
		}
	}
	// A spool file that went away is an error, not a short document.
	sp.f.Close()
	if _, err := io.ReadAll(chains[1].reader()); err == nil || !strings.Contains(err.Error(), "spool file") {
		t.Errorf("closed spool file: error %v", err)
	}
}
