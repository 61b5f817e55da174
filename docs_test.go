package attkit_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The names this test must not find are spelled in two parts, so that
// this file does not hold them.
var (
	oldSpecDir = "shared/" + "spec"     // where the specs lived before docs/spec
	lostNotes  = "sqtt-" + "mismatches" // team notes that never reached the repository
)

// specNames are the clean-room specifications, docs/spec/<name>.md.
var specNames = []string{"sqtt-format", "python-layer", "viewer-loader"}

var headingRE = regexp.MustCompile(`^(#+)\s+(?:Appendix\s+)?([0-9]+(?:\.[0-9]+)*|[A-Z](?:\.[0-9]+)*)\.?\s`)

// readSpec returns the sections of docs/spec/<name>.md by id ("4.3", "A",
// "A.4"): the text from each numbered heading to the next heading of the
// same or a higher level, subsections included.
func readSpec(t *testing.T, name string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("docs", "spec", name+".md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	sections := map[string]string{}
	type open struct {
		id    string
		level int
		from  int
	}
	var stack []open
	closeTo := func(level, at int) {
		for len(stack) > 0 && stack[len(stack)-1].level >= level {
			o := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			sections[o.id] = strings.Join(lines[o.from:at], "\n")
		}
	}
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(l, "#") {
			continue
		}
		level := len(l) - len(strings.TrimLeft(l, "#"))
		closeTo(level, i)
		if m := headingRE.FindStringSubmatch(l); m != nil {
			stack = append(stack, open{m[2], level, i})
		}
	}
	closeTo(0, len(lines))
	return sections
}

// A citation is one reference to a section of a specification, with the
// item or label it names inside the section ("" for none).
type citation struct {
	spec, section, label string
	file                 string
	line                 int
}

var (
	// A spec name, then the references that follow it: "§4.3",
	// "§4.1–4.6", "A.3 item 2", "A.3 items 1-2", "A.4 R6/W1",
	// `A.4 "label"`, "Appendix B", "sections 1, 2.1 and 3", "1.2, 1.3",
	// separated by commas, "and", "or", "to" or a dash.
	citeRE    = regexp.MustCompile(`\b(` + strings.Join(specNames, "|") + `)(?:\.md)?\b`)
	leadRE    = regexp.MustCompile("^`?(?: spec)?,? ?\\(?")
	refRE     = regexp.MustCompile(`^(?:§ ?|[Aa]ppendix |[Aa]ppendices |sections? )?([0-9]+(?:\.[0-9]+)*|[AB](?:\.[0-9]+)?)\b`)
	labelRE   = regexp.MustCompile(`^,? (?:items? ([0-9]+(?: ?(?:[-–,]|and) ?[0-9]+)*)|([RW][0-9]+(?:/[RW][0-9]+)*)\b|"([^"]+)")`)
	sepRE     = regexp.MustCompile(`^(?:, ?| and | or | to | ?[–-] ?)`)
	newlineRE = regexp.MustCompile(`[ \t]*\n[ \t]*(?://+|#+|\*)?[ \t]*`)
)

// citations finds the spec citations in one file's text. Each line break,
// with the indentation and comment marker of the next line, is read as
// one space first, so that a citation may wrap.
func citations(file string, data []byte) []citation {
	var breaks []int // where each line break is in the joined text
	var b strings.Builder
	last := 0
	for _, m := range newlineRE.FindAllIndex(data, -1) {
		b.Write(data[last:m[0]])
		breaks = append(breaks, b.Len())
		b.WriteByte(' ')
		last = m[1]
	}
	b.Write(data[last:])
	s := b.String()
	var out []citation
	for _, m := range citeRE.FindAllStringSubmatchIndex(s, -1) {
		line := 1 + sort.SearchInts(breaks, m[0])
		rest := s[m[1]:]
		rest = rest[len(leadRE.FindString(rest)):]
		for {
			r := refRE.FindStringSubmatch(rest)
			if r == nil {
				break
			}
			c := citation{spec: s[m[2]:m[3]], section: r[1], file: file, line: line}
			rest = rest[len(r[0]):]
			if l := labelRE.FindStringSubmatch(rest); l != nil && c.section[0] >= 'A' {
				c.label = l[1] + l[2] + l[3]
				rest = rest[len(l[0]):]
			}
			out = append(out, c)
			sep := sepRE.FindString(rest)
			if sep == "" {
				break
			}
			rest = rest[len(sep):]
		}
	}
	return out
}

// trackedSources lists the tracked files the citation rules apply to: Go,
// Markdown, C sources and headers, and scripts (files starting with #!).
func trackedSources(t *testing.T) map[string][]byte {
	t.Helper()
	out, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("git ls-files: %v (the test needs a git checkout)", err)
	}
	files := map[string][]byte{}
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		data, err := os.ReadFile(f)
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the working tree
			}
			t.Fatal(err)
		}
		switch filepath.Ext(f) {
		case ".go", ".md", ".c", ".h":
		default:
			if !bytes.HasPrefix(data, []byte("#!")) {
				continue
			}
		}
		files[f] = data
	}
	return files
}

// TestSpecCitations: every citation of a specification in the
// repository's sources resolves inside the repository (citationProblems).
func TestSpecCitations(t *testing.T) {
	files := trackedSources(t)
	if len(files) < 50 {
		t.Fatalf("only %d tracked sources found", len(files))
	}
	problems, n := citationProblems(readSpecs(t), files)
	for _, p := range problems {
		t.Error(p)
	}
	if n < 100 {
		t.Errorf("found only %d citations: is the pattern still right?", n)
	}
	t.Logf("%d citations checked", n)
}

// TestCitationProblems: the checker reports each kind of broken citation,
// at its line, and accepts the good ones, wrapped ones included.
func TestCitationProblems(t *testing.T) {
	// The spec names are filled in here, so that TestSpecCitations does
	// not find these citations in this file.
	names := strings.NewReplacer("{pl}", "python-layer", "{sf}", "sqtt-format", "{vl}", "viewer-loader")
	files := map[string][]byte{}
	for name, text := range map[string]string{
		"good.go": "// {pl} §4.3 and §4.1–4.6; {sf}.md\n// A.3 items 1-2, §2.1.3\n" +
			"// ({sf}.md A.4, \"gfx9 vs AMD's 0.1.6\n// library\" item c), {sf}.md A.4 R6/W1\n" +
			"// {sf}.md Appendix B, {pl} spec §3\n",
		"move.md": "The specs moved from " + oldSpecDir + "/ to docs/spec.\n",
		"bad.go": "// {pl} §4.9\n// {sf}.md A.4 R99\n// {sf}.md A.3\n// item 99\n" +
			"// see ../" + oldSpecDir + "/x.md\n// " + lostNotes + ".md R7\n// {vl} §2\n" +
			"// {sf}.md A.4 \"no such list\", {sf}.md §2.9\n",
		"script": "#!/bin/sh\n# {pl} §99\n",
	} {
		files[name] = []byte(names.Replace(text))
	}
	got, n := citationProblems(readSpecs(t), files)
	want := []string{
		"bad.go:1: python-layer cites section 4.9",
		"bad.go:2: sqtt-format A.4 has no item \"R99\"",
		"bad.go:3: sqtt-format A.3 has no item \"99\"",
		"bad.go:5: names " + oldSpecDir,
		"bad.go:6: cites " + lostNotes,
		"bad.go:7: viewer-loader cites section 2",
		"bad.go:8: sqtt-format A.4 has no item \"no such list\"",
		"bad.go:8: sqtt-format cites section 2.9",
		"script:2: python-layer cites section 99",
	}
	if len(got) != len(want) {
		t.Errorf("%d problems, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || strings.HasPrefix(g, w)
		}
		if !found {
			t.Errorf("no problem %q among:\n%s", w, strings.Join(got, "\n"))
		}
	}
	if n != 16 {
		t.Errorf("%d citations, want 16 (9 good, 7 bad)", n)
	}
}

func readSpecs(t *testing.T) map[string]map[string]string {
	t.Helper()
	specs := map[string]map[string]string{}
	for _, n := range specNames {
		specs[n] = readSpec(t, n)
	}
	return specs
}

// citationProblems checks files (name to content) and returns one message
// per broken citation, sorted, and the number of citations seen. A
// citation such as "sqtt-format.md §2.1.3", "python-layer §4.3" or
// "sqtt-format.md A.4 R7" must name a section heading of
// docs/spec/<spec>.md, and an item or label after an appendix section
// ("A.3 item 2", "A.4 R6/W1", `A.4 "label"`) must be in that section. The
// old location of the specs may appear only in Markdown lines that also
// name docs/spec (describing the move), and the team notes that never
// reached the repository not at all.
func citationProblems(specs map[string]map[string]string, files map[string][]byte) ([]string, int) {
	var problems []string
	n := 0
	for f, data := range files {
		for i, l := range strings.Split(string(data), "\n") {
			if strings.Contains(l, lostNotes) {
				problems = append(problems, fmt.Sprintf("%s:%d: cites %s, which is not in the repository (sqtt-format.md A.4 holds its items)", f, i+1, lostNotes))
			}
			if strings.Contains(l, oldSpecDir) && (filepath.Ext(f) != ".md" || !strings.Contains(l, "docs/spec")) {
				problems = append(problems, fmt.Sprintf("%s:%d: names %s: the specs are in docs/spec", f, i+1, oldSpecDir))
			}
		}
		for _, c := range citations(f, data) {
			n++
			text, ok := specs[c.spec][c.section]
			if !ok {
				problems = append(problems, fmt.Sprintf("%s:%d: %s cites section %s, which docs/spec/%s.md has no heading for", c.file, c.line, c.spec, c.section, c.spec))
			} else if c.label != "" && !hasLabel(text, c.label) {
				problems = append(problems, fmt.Sprintf("%s:%d: %s %s has no item %q", c.file, c.line, c.spec, c.section, c.label))
			}
		}
	}
	sort.Strings(problems)
	return problems, n
}

// hasLabel reports whether a section holds an item: a numbered item
// ("2" for "2. ..."), a bold label ("R6/W1": **R6** and **W1**), or a
// quoted name.
func hasLabel(section, label string) bool {
	flat := strings.Join(strings.Fields(section), " ")
	if label[0] >= '0' && label[0] <= '9' {
		for _, k := range regexp.MustCompile(`[0-9]+`).FindAllString(label, -1) {
			if !regexp.MustCompile(`(?m)^` + k + `\. `).MatchString(section) {
				return false
			}
		}
		return true
	}
	if regexp.MustCompile(`^[RW][0-9]+(?:/[RW][0-9]+)*$`).MatchString(label) {
		for _, l := range strings.Split(label, "/") {
			if !strings.Contains(section, "**"+l+"**") {
				return false
			}
		}
		return true
	}
	return strings.Contains(flat, `"`+label+`"`)
}
