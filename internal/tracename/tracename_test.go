package tracename

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name    string
		se, run int
		ok      bool
	}{
		{"1234_5_shader_engine_3_2.att", 3, 2, true},
		{"/a/b/X_SHADER_ENGINE_0_1.ATT", 0, 1, true},
		{"captures/x_shader_engine_0_1.att", 0, 1, true},
		{"x_shader_engine_0_1.att.bak", 0, 0, false},
		{"shader_engine_0_1.att", 0, 0, false},
		{"a.att", 0, 0, false},
		{"x_shader_engine_99999999999999999999_1.att", 0, 0, false},
	} {
		se, run, ok := Parse(tc.name)
		if se != tc.se || run != tc.run || ok != tc.ok {
			t.Errorf("Parse(%q) = %d, %d, %v", tc.name, se, run, ok)
		}
	}
}

func TestAssignSpecExample(t *testing.T) {
	got := Assign([]string{"a.att", "x_shader_engine_0_1.att", "b.att"})
	want := []Trace{{"a.att", 1, 1, false}, {"x_shader_engine_0_1.att", 0, 1, true}, {"b.att", 2, 1, false}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v", got)
	}
	// SEs used by other runs do not block run 1, and gaps are not refilled.
	got = Assign([]string{"p_shader_engine_1_2.att", "a.att", "p_shader_engine_2_1.att", "b.att", "c.att"})
	ses := []int{got[1].SE, got[3].SE, got[4].SE}
	if !reflect.DeepEqual(ses, []int{0, 1, 3}) {
		t.Errorf("SEs %v, want [0 1 3]", ses)
	}
}

func TestExpand(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b_shader_engine_1_1.att", "a_shader_engine_0_1.att", "code.json", "z.ATT"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	os.Mkdir(filepath.Join(dir, "sub.att.d"), 0o755)
	got, err := Expand([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "a_shader_engine_0_1.att"), filepath.Join(dir, "b_shader_engine_1_1.att"), filepath.Join(dir, "z.ATT")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v", got)
	}
	if _, err := Expand([]string{filepath.Join(dir, "missing.att")}); err == nil || !strings.Contains(err.Error(), "input does not exist: ") {
		t.Errorf("missing path: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("1234_5_shader_engine_3_2.att")
	f.Add("a.att")
	f.Fuzz(func(t *testing.T, name string) {
		se, run, ok := Parse(name)
		if ok && (se < 0 || run < 0) {
			t.Fatalf("negative numbers from %q", name)
		}
		tr := Assign([]string{name, name})
		if len(tr) != 2 {
			t.Fatal("lost a trace")
		}
	})
}
