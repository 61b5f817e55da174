package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCmd(stdin string, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

func TestAttName(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a.att", "x_shader_engine_0_1.att", "b.att", "9_2_Shader_Engine_3_2.ATT", "code.json"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	p := func(n string) string { return filepath.Join(dir, n) }
	out, errs, code := runCmd("", p("a.att"), p("x_shader_engine_0_1.att"), p("b.att"))
	want := p("a.att") + "\t1\t1\n" + p("x_shader_engine_0_1.att") + "\t0\t1\n" + p("b.att") + "\t2\t1\n"
	if code != 0 || out != want || errs != "" {
		t.Errorf("args: code %d out %q err %q", code, out, errs)
	}
	// Paths on stdin, JSON out.
	out, _, code = runCmd(p("9_2_Shader_Engine_3_2.ATT")+"\n", "--format", "json")
	if code != 0 || out != `{"path":"`+p("9_2_Shader_Engine_3_2.ATT")+`","se":3,"run":2,"named":true}`+"\n" {
		t.Errorf("stdin json: %d %q", code, out)
	}
	// A directory lists its .att files, sorted.
	out, _, code = runCmd("", dir)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 4 || !strings.HasPrefix(lines[0], p("9_2_Shader_Engine_3_2.ATT")+"\t3\t2") {
		t.Errorf("dir: %d %q", code, out)
	}
	// A missing path is an error naming it.
	_, errs, code = runCmd("", p("nope.att"))
	if code != 1 || errs != "att-name: input does not exist: "+p("nope.att")+"\n" {
		t.Errorf("missing: %d %q", code, errs)
	}
	_, errs, code = runCmd("", "--format", "xml")
	if code != 2 || !strings.HasPrefix(errs, "att-name: ") {
		t.Errorf("usage: %d %q", code, errs)
	}
	out, _, code = runCmd("", "--help")
	if code != 0 || !strings.Contains(out, "Usage: att-name") {
		t.Errorf("help: %d %q", code, out)
	}
	out, _, code = runCmd("", "--version")
	if code != 0 || !strings.HasPrefix(out, "att-name ") {
		t.Errorf("version: %d %q", code, out)
	}
}
