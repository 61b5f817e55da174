package sqtt_test

import (
	"encoding/binary"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/sqtt"
	"github.com/attkit/attkit/internal/testutil"
)

// gfx9Head builds a gfx9 software header (sqtt-format.md 2.2.1).
func gfx9Head(legacy, v2, simds, cu, se uint64) []byte {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, legacy|v2<<13|simds<<16|cu<<20|se<<26)
	return b
}

// TestGfx9HeaderNames: a gfx9 software header names its format version and
// nothing else. The other fields do not change the name, and no name
// claims a GPU generation (MI200, MI300, MI350), which the version does not
// determine.
func TestGfx9HeaderNames(t *testing.T) {
	for _, v2 := range []uint64{4, 5, 6} {
		want := "gfx9, header version " + strconv.FormatUint(v2, 10)
		for _, h := range [][]byte{gfx9Head(0x11, v2, 0xf, 0, 0), gfx9Head(0, v2, 0, 0, 0),
			gfx9Head(0x11, v2, 0xf, 31, 63), gfx9Head(0x11, v2, 0x3, 7, 5)} {
			a, err := sqtt.Detect(h)
			if err != nil {
				t.Fatalf("% x: %v", h, err)
			}
			if a.GFXIP != 9 || a.Version2 != int(v2) || a.Name != want || !a.Supported() {
				t.Errorf("% x: %+v, want GFXIP 9, version %d, name %q", h, a, v2, want)
			}
			if strings.Contains(a.Name, "MI") {
				t.Errorf("% x: name %q claims a generation", h, a.Name)
			}
		}
	}
	// Versions 3 and 7 are no gfx9 header.
	for _, v2 := range []uint64{3, 7} {
		if a, err := sqtt.Detect(gfx9Head(0x11, v2, 0xf, 0, 0)); err == nil && a.GFXIP == 9 {
			t.Errorf("version %d: %+v", v2, a)
		}
	}
}

// TestRealHeaderNames reads the header of every real-hardware trace: the
// MI350 (gfx950) captures carry gfx9 header version 4, which is all their
// name may say; the RDNA captures name the generation their HEADER token's
// version fixes (gfx1100: gfx11, gfx1200: gfx12).
func TestRealHeaderNames(t *testing.T) {
	gfx950 := 0
	for _, c := range testutil.RealCorpus(t) {
		for _, tr := range c.Traces {
			a, err := sqtt.Detect(readHead(t, tr.File))
			if err != nil {
				t.Errorf("%s: %v", tr.File, err)
				continue
			}
			switch {
			case c.Arch == "gfx950":
				gfx950++
				if a.GFXIP != 9 || a.Version2 != 4 || a.Name != "gfx9, header version 4" {
					t.Errorf("%s: %+v, want gfx9, header version 4", tr.File, a)
				}
			case strings.HasPrefix(c.Arch, "gfx1"):
				if want := c.Arch[:5]; !strings.HasPrefix(a.Name, want+" ") || a.GFXIP != int(c.Arch[4]-'0')+10 {
					t.Errorf("%s: %+v, want %s", tr.File, a, want)
				}
			default:
				t.Errorf("%s: capture of an unexpected architecture %q", c.Name, c.Arch)
			}
		}
	}
	if gfx950 < 3*32 {
		t.Errorf("%d gfx950 traces, want the 32 shader engines of each of the 3 captures", gfx950)
	}
}

func readHead(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 8)
	if _, err := io.ReadFull(f, b); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}
