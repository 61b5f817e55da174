package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseFormats(t *testing.T) {
	for _, tc := range []struct {
		in              string
		json, csv, html bool
		err             string
	}{
		{"json,csv", true, true, false, ""},
		{" CSV ", false, true, false, ""},
		{"json,,", true, false, false, ""},
		{"json,csv,HTML", true, true, true, ""},
		{"html", false, false, true, ""},
		{"xml,jsn,xml", false, false, false, "Unsupported output format(s): jsn, xml. Expected one or more of: csv, html, json"},
		{" , ", false, false, false, "No output formats requested."},
	} {
		j, c, h, err := parseFormats(tc.in)
		if msg := ""; err != nil {
			msg = err.Error()
			if msg != tc.err {
				t.Errorf("%q: error %q, want %q", tc.in, msg, tc.err)
			}
			continue
		}
		if tc.err != "" || j != tc.json || c != tc.csv || h != tc.html {
			t.Errorf("%q: json %v csv %v html %v, want %v %v %v (error %q)", tc.in, j, c, h, tc.json, tc.csv, tc.html, tc.err)
		}
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
