package attkit_test

import (
	"bytes"
	"context"
	"encoding/json"
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

	"github.com/attkit/attkit/internal/report"
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

// TestAttToolHTML: att-tool --formats json,csv,html writes each run's
// report beside its viewer folder and stats CSV (report_<folder>.html),
// with the data att-report makes from the same records; the folders and
// CSVs are what they are without html; the report belongs to the same
// publish set, so a refused re-run leaves all and --force replaces all.
func TestAttToolHTML(t *testing.T) {
	needTools(t, "llvm-objdump-19")
	out := t.TempDir()
	_, stderr, code := attTool(t, nil, "-d", out, "-j", "2", "--backend", "native", "--formats", "json,csv,html", "testdata/sample")
	if code != 0 {
		t.Fatalf("att-tool exit %d: %s", code, stderr)
	}
	for _, r := range []string{"1", "2"} {
		if !strings.Contains(stderr, "att-tool: report: "+filepath.Join(out, "report_ui_output_sample"+r+".html")+"\n") {
			t.Errorf("stderr does not name run %s's report: %s", r, stderr)
		}
	}
	// att-report on run 1's records.
	dir := t.TempDir()
	cmd := exec.Command("bash", "-c", "co-index "+repoRoot(t)+"/testdata/sample/31337_1_code_object_id_1.hsaco > s.idx && "+
		"for se in 0 1; do att-decode --backend native --index s.idx "+repoRoot(t)+"/testdata/sample/31337_1_shader_engine_${se}_1.att; done | att-report --index s.idx -o r.html")
	cmd.Dir, cmd.Env = dir, toolEnv()
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("att-report: %v\n%s", err, b)
	}
	data := func(path string) *report.Data {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?s)<script type="application/json" id="data">(.*?)</script>`).FindSubmatch(b)
		if m == nil {
			t.Fatalf("%s: no data element", path)
		}
		var d report.Data
		if err := json.Unmarshal(m[1], &d); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return &d
	}
	tool, own := data(filepath.Join(out, "report_ui_output_sample1.html")), data(filepath.Join(dir, "r.html"))
	for what, pair := range map[string][2]any{"kernels": {tool.Kernels, own.Kernels}, "instructions": {tool.Insts, own.Insts},
		"lines": {tool.Lines, own.Lines}, "occupancy": {tool.SEs, own.SEs}, "top": {tool.Top, own.Top}} {
		a, _ := json.Marshal(pair[0])
		b, _ := json.Marshal(pair[1])
		if !bytes.Equal(a, b) || len(a) < 10 {
			t.Errorf("%s differ between att-tool's report and att-report's:\n%.600s\n%.600s", what, a, b)
		}
	}
	// A refused re-run changes nothing; --force replaces the report too.
	page := filepath.Join(out, "report_ui_output_sample2.html")
	old, _ := os.ReadFile(page)
	os.WriteFile(page, []byte("stale"), 0o644)
	if _, stderr, code := attTool(t, nil, "-d", out, "--backend", "native", "--formats", "json,csv,html", "testdata/sample"); code != 1 {
		t.Errorf("re-run without --force: exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(page); string(b) != "stale" {
		t.Errorf("a refused re-run replaced the report")
	}
	if _, stderr, code := attTool(t, nil, "-d", out, "--force", "--backend", "native", "--formats", "json,csv,html", "testdata/sample"); code != 0 {
		t.Fatalf("re-run with --force: exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(page); !bytes.Equal(b, old) {
		t.Errorf("--force did not write the report anew")
	}
	// Without the reports, the outputs are the goldens of json,csv.
	for _, r := range []string{"1", "2"} {
		os.Remove(filepath.Join(out, "report_ui_output_sample"+r+".html"))
	}
	checkGolden(t, out)
}
