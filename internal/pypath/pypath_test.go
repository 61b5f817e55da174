package pypath

import "testing"

// The expectations are what CPython's posixpath.normpath returns.
func TestNormpath(t *testing.T) {
	for in, want := range map[string]string{
		"":                  ".",
		".":                 ".",
		"/":                 "/",
		"//":                "//",
		"///":               "/",
		"//a/./b":           "//a/b",
		"a/b/../c":          "a/c",
		"../a":              "../a",
		"a/../..":           "..",
		"/../a":             "/a",
		"src/./k.cl":        "src/k.cl",
		"/opt//rocm/x/../y": "/opt/rocm/y",
		"a/b/":              "a/b",
	} {
		if got := Normpath(in); got != want {
			t.Errorf("Normpath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExpandUser(t *testing.T) {
	home := func() string { return "/home/u" }
	for in, want := range map[string]string{
		"~": "/home/u", "~/lib": "/home/u/lib", "~x/lib": "~x/lib", "/a/~": "/a/~", "": "",
	} {
		if got := ExpandUser(in, home); got != want {
			t.Errorf("ExpandUser(%q) = %q, want %q", in, got, want)
		}
	}
	if got := ExpandUser("~/lib", func() string { return "" }); got != "~/lib" {
		t.Errorf("no home: %q", got)
	}
}
