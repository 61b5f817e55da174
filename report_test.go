package attkit_test

import (
	"bytes"
	"context"
	"flag"
	"html"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

var updateReportPNG = flag.Bool("update-report-png", false, "TestReportSample: write the screenshot of the sample's report to docs/report.png")

// TestReportSample makes the sample's report as the README's tour does and
// loads it in headless Chromium from a file: the kernel table names the
// index's kernels, the first hottest instruction is the one att-stats
// --format top ranks first, and the screenshot is not blank. With
// -update-report-png the screenshot becomes docs/report.png (a paletted,
// smaller copy), the README's picture.
func TestReportSample(t *testing.T) {
	needTools(t, "llvm-objdump-19")
	chrome, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (Debian package chromium; scripts/install-deps installs it): the sample's report is not checked in a browser")
	}
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(repoRoot(t), "testdata"), filepath.Join(dir, "testdata")); err != nil {
		t.Fatal(err)
	}
	sh := func(c string) string {
		cmd := exec.Command("bash", "-c", c)
		cmd.Dir, cmd.Env = dir, toolEnv()
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v\n%s", c, err, stderrOf(err))
		}
		return string(out)
	}
	sh("co-index testdata/sample/31337_1_code_object_id_1.hsaco > sample.idx")
	sh("for se in 0 1; do att-decode --index sample.idx -o se$se.rec testdata/sample/31337_1_shader_engine_${se}_1.att; done")
	sh("att-report --index sample.idx -o report.html se0.rec se1.rec")
	top := strings.Split(sh("att-stats --index sample.idx --format top -n 1 se0.rec se1.rec"), "\n")
	kernels := regexp.MustCompile(`"text":"; _([^"]+)"`).FindAllStringSubmatch(sh("co-index --format json testdata/sample/31337_1_code_object_id_1.hsaco"), -1)
	// "   1  NonHidden Total Hidden Hits CodeObj 0xVaddr  Instruction / Source"
	m := regexp.MustCompile(`^ +1 +\d+ +\d+ +\d+ +\d+ +1 (0x[0-9a-f]+)  (.*?)( / |$)`).FindStringSubmatch(top[1])
	if m == nil || len(kernels) == 0 {
		t.Fatalf("att-stats top: %q; kernels %q", top, kernels)
	}
	url := "file://" + filepath.Join(dir, "report.html")
	browse := func(args ...string) []byte {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		a := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
			"--disable-background-networking", "--disable-component-update", "--user-data-dir=" + filepath.Join(dir, "profile"),
			"--proxy-server=http://127.0.0.1:9", "--window-size=1180,1700"}, args...)
		cmd := exec.CommandContext(ctx, chrome, append(a, url)...)
		cmd.Dir = dir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("chromium %q: %v\n%s", args, err, stderr.String())
		}
		return stdout.Bytes()
	}
	dom := string(browse("--dump-dom"))
	var shown []string
	for _, k := range regexp.MustCompile(`<td class="l kname">([^<]*)</td>`).FindAllStringSubmatch(dom, -1) {
		shown = append(shown, html.UnescapeString(k[1]))
	}
	for _, k := range kernels {
		if !strings.Contains("|"+strings.Join(shown, "|")+"|", "|"+k[1]+"|") {
			t.Errorf("the kernel table (%q) does not show kernel %s", shown, k[1])
		}
	}
	hot := regexp.MustCompile(`(?s)id="hot".*?<tbody><tr>(.*?)</tr>`).FindStringSubmatch(dom)
	if hot == nil {
		t.Fatalf("no hottest instruction in the page:\n%.3000s", dom)
	}
	var cells []string
	for _, c := range regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`).FindAllStringSubmatch(hot[1], -1) {
		cells = append(cells, html.UnescapeString(c[1]))
	}
	addr := strings.TrimPrefix(m[1], "0x")
	if len(cells) < 4 || strings.TrimLeft(strings.TrimPrefix(cells[2], "0x"), "0") != strings.TrimLeft(addr, "0") || cells[3] != m[2] {
		t.Errorf("the page's hottest instruction %q, att-stats's %s %q", cells, m[1], m[2])
	}
	shot := filepath.Join(dir, "shot.png")
	browse("--screenshot=" + shot)
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	colors := map[[3]uint32]bool{}
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y += 3 {
		for x := bd.Min.X; x < bd.Max.X; x += 3 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colors[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
		}
	}
	if len(colors) < 64 {
		t.Errorf("the screenshot looks blank: %d colours", len(colors))
	}
	if *updateReportPNG {
		// The 256 commonest colours: the page's few flat colours and
		// the commonest shades of its text.
		count := map[color.RGBA]int{}
		for y := bd.Min.Y; y < bd.Max.Y; y++ {
			for x := bd.Min.X; x < bd.Max.X; x++ {
				count[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)]++
			}
		}
		cs := slices.Collect(maps.Keys(count))
		slices.SortFunc(cs, func(a, b color.RGBA) int { return count[b] - count[a] })
		var pal color.Palette
		for _, c := range cs[:min(256, len(cs))] {
			pal = append(pal, c)
		}
		p := image.NewPaletted(bd, pal)
		draw.Draw(p, bd, img, bd.Min, draw.Src)
		var out bytes.Buffer
		if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&out, p); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repoRoot(t), "docs", "report.png"), out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
