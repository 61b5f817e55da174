package main

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"image/png"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/attkit/attkit/internal/sqttgen"
	"github.com/attkit/attkit/internal/wire"
)

// chromium returns the headless browser the page tests use, or skips.
func chromium(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (Debian package chromium; scripts/install-deps installs it): the page is not checked in a browser")
	}
	return p
}

// A browser run of one page: the DOM after its script ran, a screenshot,
// and the requests that reached the proxy every network request is sent to.
type rendered struct {
	dom      string
	shot     []byte
	requests []string
}

// render loads file (from a file:// URL) in headless Chromium, for the
// DOM and, when asked, again for a screenshot of width x height, with every network
// request sent to a proxy of the test's that records it and answers 403.
func render(t testing.TB, file string, width, height int, screenshot bool) rendered {
	t.Helper()
	bin := chromium(t)
	var mu sync.Mutex
	var out rendered
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		out.requests = append(out.requests, r.Method+" "+r.Host+r.URL.Path)
		mu.Unlock()
		http.Error(w, "att-report's page must make no request", http.StatusForbidden)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	abs, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	url := "file://" + abs
	tmp := t.TempDir()
	shot := filepath.Join(tmp, "shot.png")
	common := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--user-data-dir=" + filepath.Join(tmp, "profile"), "--proxy-server=http://" + ln.Addr().String(),
		"--proxy-bypass-list=<-loopback>", "--hide-scrollbars", fmt.Sprintf("--window-size=%d,%d", width, height)}
	runChromium := func(args ...string) []byte {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append(append(common[:len(common):len(common)], args...), url)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("chromium %q: %v\n%s", args, err, stderr.String())
		}
		return stdout.Bytes()
	}
	out.dom = string(runChromium("--dump-dom"))
	if screenshot {
		runChromium("--screenshot=" + shot)
		if out.shot, err = os.ReadFile(shot); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return out
}

// checkRendered checks what every page must show: its script ran to the
// end, it made no network request, and the screenshot is not blank (many
// colours, a good part of the pixels not the background).
func checkRendered(t testing.TB, r rendered) {
	t.Helper()
	if !strings.Contains(r.dom, `data-ready="1"`) {
		t.Errorf("the page's script did not finish:\n%.2000s", r.dom)
	}
	if reqs := pageRequests(r.requests); len(reqs) > 0 {
		t.Errorf("the page made network requests: %q", reqs)
	}
	img, err := png.Decode(bytes.NewReader(r.shot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	colors := map[uint32]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colors[(r>>8)<<16|(g>>8)<<8|bl>>8]++
		}
	}
	total := (b.Dx() / 2) * (b.Dy() / 2)
	most := 0
	for _, n := range colors {
		most = max(most, n)
	}
	if len(colors) < 64 || most > total*9/10 {
		t.Errorf("screenshot looks blank: %d colours, the commonest on %d of %d pixels", len(colors), most, total)
	}
}

// pageRequests leaves out of reqs those Chromium's own background
// services make whatever the page (update checks, sign-in, time: to
// Google's hosts, which no page of ours names).
func pageRequests(reqs []string) []string {
	var out []string
	own := regexp.MustCompile(`^\S+ [a-z0-9.-]*\.(google\.com|googleapis\.com|gstatic\.com)(:443)?(/|$)`)
	for _, r := range reqs {
		if !own.MatchString(r) {
			out = append(out, r)
		}
	}
	return out
}

// Static checks of a page: no URL a browser would fetch.
func checkStatic(t testing.TB, page string) {
	t.Helper()
	if m := regexp.MustCompile(`(?i)(src|href|action)\s*=\s*["']?\s*(https?:|//)|url\(\s*['"]?(https?:|//)|@import|<link\b|<iframe\b|<img\b`).FindString(page); m != "" {
		t.Errorf("the page refers to an outside resource: %q", m)
	}
}

// firstRow returns the text of the cells of the first row of the table
// with the given id, tags stripped and entities decoded.
func firstRow(t testing.TB, dom, id string) []string {
	t.Helper()
	i := strings.Index(dom, `id="`+id+`"`)
	if i < 0 {
		t.Fatalf("no table %s in the DOM", id)
	}
	body := dom[i:]
	j := strings.Index(body, "<tbody>")
	if j < 0 {
		t.Fatalf("table %s has no body", id)
	}
	k := strings.Index(body[j:], "</tr>")
	if k < 0 {
		t.Fatalf("table %s has no row", id)
	}
	var cells []string
	for _, m := range regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`).FindAllStringSubmatch(body[j:j+k], -1) {
		cells = append(cells, html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(m[1], "")))
	}
	return cells
}

// TestBrowserSmall renders the hand-made trace: the kernel table names
// both kernels (one of them with "</script><!--" in its name, which must
// stay text), the hottest instruction is the one the data ranks first.
func TestBrowserSmall(t *testing.T) {
	chromium(t)
	dir := t.TempDir()
	idx := writeIndex(t, filepath.Join(dir, "k.idx"), twoKernels())
	w1 := wire.Wave{BeginTime: 0, EndTime: 30, Instructions: []wire.Instruction{inst(0x100, 10, 2, 4), inst(0x104, 20, 0, 6), inst(0x108, 26, 0, 1)}}
	w2 := wire.Wave{SIMD: 2, BeginTime: 1000, EndTime: 1500, Instructions: []wire.Instruction{inst(0x200, 1000, 8, 3)}}
	s0 := writeStream(t, filepath.Join(dir, "se0.rec"), streamPart{run: 1, waves: []wire.Wave{w1, w2}})
	out := filepath.Join(dir, "r.html")
	if r := runTool(t, nil, "--index", idx, "-o", out, s0); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	page, _ := os.ReadFile(out)
	checkStatic(t, string(page))
	r := render(t, out, 1280, 1000, true)
	checkRendered(t, r)
	var names []string
	for _, m := range regexp.MustCompile(`<td class="l kname">([^<]*)</td>`).FindAllStringSubmatch(r.dom, -1) {
		names = append(names, html.UnescapeString(m[1]))
	}
	if strings.Join(names, "|") != "alpha|beta</script><!--" {
		t.Errorf("kernel table shows %q", names)
	}
	// 0x100: latency 4 + idle 10 exposed, 0x104: 6 + 6, 0x200: 8 + 0.
	if row := firstRow(t, r.dom, "hot"); len(row) < 4 || row[1] != "alpha" || row[2] != "0x100" || row[3] != "s_mov_b32 s0, 0" {
		t.Errorf("hottest instruction row %q, want alpha's s_mov_b32 at 0x100", row)
	}
	// The proxy sees what a page fetches: a page with an outside image
	// makes a request the check above would report.
	ctl := filepath.Join(dir, "control.html")
	os.WriteFile(ctl, []byte(`<!DOCTYPE html><html><body><img src="http://attkit-test.invalid/x.png">x</body></html>`), 0o644)
	if reqs := pageRequests(render(t, ctl, 400, 300, false).requests); !strings.Contains(strings.Join(reqs, " "), "GET attkit-test.invalid/x.png") {
		t.Errorf("the proxy saw no request of the control page: %q", reqs)
	}
}

// bigIndex is the index of a kernel of n straight-line instructions at
// 0x1000 (8 to a source line of big.cl, every third line inlined from
// helper.h) and of a small one after it.
func bigIndex(n int) *wire.Index {
	ix := &wire.Index{Objects: []wire.CodeObject{{ID: 1, Path: "/big.hsaco", Target: "gfx942"}}}
	add := func(kind wire.RowKind, a uint64, text, src string) {
		ix.Rows = append(ix.Rows, wire.Row{Kind: kind, CodeObj: 1, Vaddr: a, Size: 4, Text: text, Source: src})
	}
	texts := []string{"v_add_f32_e32 v1, v2, v3", "v_mul_f32_e32 v4, v1, v1", "s_add_u32 s2, s2, 1", "v_mov_b32_e32 v5, 0"}
	add(wire.RowFunction, 0x1000, "; _big", "big")
	a := uint64(0x1000)
	for i := 0; i < n-1; i++ {
		src := fmt.Sprintf("big.cl:%d", i/8+1)
		if (i/8)%3 == 2 {
			src = fmt.Sprintf("helper.h:%d -> %s", i%5+1, src)
		}
		add(wire.RowInstruction, a, texts[i%len(texts)], src)
		a += 4
	}
	add(wire.RowInstruction, a, "s_endpgm", "big.cl:99999")
	a = (a + 0x1000) &^ 0xff
	add(wire.RowFunction, a, "; _small", "small")
	add(wire.RowInstruction, a, "v_mov_b32_e32 v0, 1", "small.cl:1")
	add(wire.RowInstruction, a+4, "s_endpgm", "small.cl:2")
	return ix
}

// TestBrowserLarge renders the report of a generated trace of a kernel of
// 120,000 instructions: the page holds them all in its data, but only a
// screenful of rows is in the DOM (virtual scrolling), and it still names
// the kernels and the hottest instruction, and draws.
func TestBrowserLarge(t *testing.T) {
	chromium(t)
	const n = 120_000
	ix := bigIndex(n)
	dir := t.TempDir()
	idx := writeIndex(t, filepath.Join(dir, "big.idx"), ix)
	var b bytes.Buffer
	w := wire.NewWriter(&b)
	if err := w.WriteHeader(&wire.Header{Producer: "test", Backend: "native", Trace: wire.Trace{Path: "big.att", Run: 1, GFXIP: 9}}); err != nil {
		t.Fatal(err)
	}
	st, err := sqttgen.GenerateTo(&bytes.Buffer{}, sqttgen.Config{Index: ix, Seed: 3, Instrument: true, WavesPerSIMD: 1, WavesPerSlot: 2,
		MaxWaveInsts: 2 * n, GFX9: sqttgen.GFX9{SIMDs: 2},
		Emit: func(bt *wire.Batch) error { return w.WriteBatch(bt) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	t.Logf("generated %d waves, %d instructions", st.Waves, st.Instructions)
	if st.Instructions < n {
		t.Fatalf("only %d instructions generated", st.Instructions)
	}
	rec := filepath.Join(dir, "big.rec")
	os.WriteFile(rec, b.Bytes(), 0o644)
	out := filepath.Join(dir, "big.html")
	if r := runTool(t, nil, "--index", idx, "-o", out, rec); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	page, _ := os.ReadFile(out)
	t.Logf("page of %d bytes", len(page))
	d, _ := pageJSON(t, string(page))
	if len(d.Kernels) < 1 || d.Kernels[0].Name != "big" || d.Kernels[0].Count != n {
		t.Fatalf("kernels %+v", d.Kernels)
	}
	r := render(t, out, 1280, 1000, true)
	checkRendered(t, r)
	rows := strings.Count(r.dom, `class="vrow `)
	if rows == 0 || rows > 300 {
		t.Errorf("%d list rows in the DOM for %d instructions: want a screenful", rows, n)
	}
	if !strings.Contains(r.dom, fmt.Sprintf("%s instructions", commas(n))) {
		t.Errorf("the ISA pane does not count %d instructions", n)
	}
	top := d.Top[0]
	if row := firstRow(t, r.dom, "hot"); len(row) < 4 || row[1] != "big" || row[2] != fmt.Sprintf("%#x", d.Insts.Addr[top]) || row[3] != d.Insts.Text[top] {
		t.Errorf("hottest instruction row %q, want %#x %s", row, d.Insts.Addr[top], d.Insts.Text[top])
	}
}

func commas(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
