package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseFormats(t *testing.T) {
	for _, tc := range []struct {
		in        string
		json, csv bool
		err       string
	}{
		{"json,csv", true, true, ""},
		{" CSV ", false, true, ""},
		{"json,,", true, false, ""},
		{"xml,jsn,xml", false, false, "Unsupported output format(s): jsn, xml. Expected one or more of: csv, json"},
		{" , ", false, false, "No output formats requested."},
	} {
		j, c, err := parseFormats(tc.in)
		if msg := ""; err != nil {
			msg = err.Error()
			if msg != tc.err {
				t.Errorf("%q: error %q, want %q", tc.in, msg, tc.err)
			}
			continue
		}
		if tc.err != "" || j != tc.json || c != tc.csv {
			t.Errorf("%q: json %v csv %v, want %v %v (error %q)", tc.in, j, c, tc.json, tc.csv, tc.err)
		}
	}
}

// TestGroupInputs: traces and code objects go by the <pid>_<agent> of
// their names; objects named after no group go to every group; traces
// without the rocprofv3 name form their own group; --group keeps one.
func TestGroupInputs(t *testing.T) {
	fd := &found{
		traces: []string{"/c/h/100_1_shader_engine_0_1.att", "/c/h/200_1_shader_engine_0_1.att",
			"/c/h/100_1_shader_engine_1_1.att", "/c/x.att"},
		objects: []string{"/c/h/100_1_code_object_id_1.hsaco", "/c/h/200_1_code_object_id_1.hsaco",
			"/c/k.hsaco", "/c/h/300_1_code_object_id_2.hsaco"},
	}
	groups, err := groupInputs(fd, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range groups {
		var s []string
		for _, tr := range g.traces {
			s = append(s, tr.Path[strings.LastIndexByte(tr.Path, '/')+1:])
		}
		for _, o := range g.objects {
			s = append(s, o[strings.LastIndexByte(o, '/')+1:])
		}
		got = append(got, g.key+": "+strings.Join(s, " "))
	}
	want := []string{
		"100_1: 100_1_shader_engine_0_1.att 100_1_shader_engine_1_1.att 100_1_code_object_id_1.hsaco k.hsaco 300_1_code_object_id_2.hsaco",
		"200_1: 200_1_shader_engine_0_1.att 200_1_code_object_id_1.hsaco k.hsaco 300_1_code_object_id_2.hsaco",
		": x.att k.hsaco 300_1_code_object_id_2.hsaco",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("groups:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if groups[0].traces[1].SE != 1 || groups[2].traces[0].Run != 1 {
		t.Errorf("shader engines and runs not assigned per group: %+v %+v", groups[0].traces, groups[2].traces)
	}
	if g, err := groupInputs(fd, "200_1"); err != nil || len(g) != 1 || g[0].key != "200_1" {
		t.Errorf("--group 200_1: %v %v", g, err)
	}
	if _, err := groupInputs(fd, "9_9"); err == nil || !strings.Contains(err.Error(), "the inputs hold 100_1, 200_1, traces without a prefix") {
		t.Errorf("--group 9_9: %v", err)
	}
}

// TestUsage runs the command in-process on usage errors: exit 2, one
// message and the --help hint on stderr, nothing on stdout.
func TestUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"-j", "-3", "x"}, {"--code-object", "=k", "x"}, {"--compat", "0.2", "x"}} {
		var out, errb bytes.Buffer
		code := run(args, strings.NewReader(""), &out, &errb)
		if code != 2 || out.Len() != 0 || !strings.HasPrefix(errb.String(), "att-tool: ") ||
			!strings.HasSuffix(errb.String(), "Run 'att-tool --help' for usage.\n") || strings.Count(errb.String(), "\n") != 2 {
			t.Errorf("%q: exit %d stdout %q stderr %q", args, code, out.String(), errb.String())
		}
	}
}
