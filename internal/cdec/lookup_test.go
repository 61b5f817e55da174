package cdec

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func touch(t *testing.T, dir string, names ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLookupOrder(t *testing.T) {
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	a, b := filepath.Join(tmp, "a"), filepath.Join(home, "b")
	rocmHome, rocmPath := filepath.Join(tmp, "rh"), filepath.Join(tmp, "rp")
	site := filepath.Join(tmp, "site")
	for _, d := range []string{a, b, rocmHome, rocmPath, filepath.Join(site, "_rocm_sdk_core"), filepath.Join(site, "_rocm_profiler")} {
		touch(t, d)
	}
	env := map[string]string{
		"HOME":            home,
		"LD_LIBRARY_PATH": a + "::~/b:" + a,
		"ROCM_HOME":       rocmHome,
		"ROCM_PATH":       rocmPath,
	}
	roots := searchRoots(envOf(env), []string{site})
	want := []string{a, b, filepath.Join(rocmHome, "lib"), filepath.Join(rocmPath, "lib"),
		filepath.Join(site, "_rocm_sdk_core", "lib"), filepath.Join(site, "_rocm_profiler", "lib"), "/opt/rocm/lib"}
	if !reflect.DeepEqual(roots, want) {
		t.Errorf("roots:\n got %q\nwant %q", roots, want)
	}

	// Nothing found anywhere: every root is listed, then the loader names.
	pl := lookup("", envOf(env), []string{site})
	if pl.file != "" || !reflect.DeepEqual(pl.loaders, loaderNames) {
		t.Fatalf("plan %+v", pl)
	}
	if len(pl.tried) != 1+len(want) || pl.tried[0].where != EnvLib || pl.tried[2].where != b {
		t.Errorf("tried %+v", pl.tried)
	}

	// The first root holding the library wins, even over later SONAMEs.
	touch(t, filepath.Join(rocmPath, "lib"), "librocprof-trace-decoder.so.0")
	touch(t, b, "librocprof-trace-decoder.so")
	pl = lookup("", envOf(env), []string{site})
	if pl.file != filepath.Join(b, "librocprof-trace-decoder.so") || len(pl.tried) != 2 {
		t.Errorf("got %+v", pl)
	}

	// The environment variable beats the search; the path beats both.
	env[EnvLib] = "/x/from-env.so"
	if pl = lookup("", envOf(env), nil); pl.file != "/x/from-env.so" || pl.origin != EnvLib {
		t.Errorf("env: %+v", pl)
	}
	if pl = lookup("/y/flag.so", envOf(env), nil); pl.file != "/y/flag.so" || pl.origin != "--lib" {
		t.Errorf("path: %+v", pl)
	}
}

func TestFindInRoot(t *testing.T) {
	for _, tc := range []struct {
		files []string
		dirs  []string
		want  string
	}{
		{[]string{"librocprof-trace-decoder.so", "librocprof-trace-decoder.so.0.2"}, nil, "librocprof-trace-decoder.so.0.2"},
		{[]string{"librocprof-trace-decoder.so", "librocprof-trace-decoder.so.0"}, nil, "librocprof-trace-decoder.so.0"},
		{[]string{"librocprof-trace-decoder.so.0.2.0", "librocprof-trace-decoder.so"}, nil, "librocprof-trace-decoder.so.0.2.0"},
		{[]string{"librocprof-trace-decoder.so"}, nil, "librocprof-trace-decoder.so"},
		// No candidate name: the newest versioned file, numerically.
		{[]string{"librocprof-trace-decoder.so.0.1.9", "librocprof-trace-decoder.so.0.1.10", "librocprof-trace-decoder.so.0.1.6"}, nil,
			"librocprof-trace-decoder.so.0.1.10"},
		{[]string{"librocprof-trace-decoder.so.0.1"}, []string{"librocprof-trace-decoder.so.0.3"}, "librocprof-trace-decoder.so.0.1"},
		{[]string{"libother.so"}, nil, ""},
	} {
		dir := t.TempDir()
		touch(t, dir, tc.files...)
		for _, d := range tc.dirs {
			touch(t, filepath.Join(dir, d))
		}
		got, ok := findInRoot(dir)
		if tc.want == "" {
			if ok {
				t.Errorf("%v: found %s", tc.files, got)
			}
			continue
		}
		if got != filepath.Join(dir, tc.want) {
			t.Errorf("%v: got %s, want %s", tc.files, got, tc.want)
		}
	}
}

func TestVersionLess(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		less bool
	}{
		{"librocprof-trace-decoder.so.0.9", "librocprof-trace-decoder.so.0.10", true},
		{"librocprof-trace-decoder.so.0.10", "librocprof-trace-decoder.so.0.9", false},
		{"librocprof-trace-decoder.so.0.2", "librocprof-trace-decoder.so.0.2.1", true},
		{"librocprof-trace-decoder.so.0.2.rc1", "librocprof-trace-decoder.so.0.2.1", true},
	} {
		if got := versionLess(tc.a, tc.b); got != tc.less {
			t.Errorf("versionLess(%s, %s) = %v", tc.a, tc.b, got)
		}
	}
}

func TestFallbackStrings(t *testing.T) {
	if got := fallbackStatusString(StatusNotImplemented); got != "ROCPROFILER_THREAD_TRACE_DECODER_STATUS_ERROR_NOT_IMPLEMENTED" {
		t.Error(got)
	}
	if got := fallbackStatusString(9); got != "STATUS_UNKNOWN" {
		t.Error(got)
	}
	if got := fallbackInfoString(4); got != "INFO_LAST" {
		t.Error(got)
	}
}
