package capture

import (
	"strings"
	"testing"
)

// TestGroupInputs: traces and code objects go by the <pid>_<agent> of
// their names; objects named after no group go to every group; traces
// without the rocprofv3 name form their own group; --group keeps one.
func TestGroupInputs(t *testing.T) {
	fd := &Found{
		Traces: []string{"/c/h/100_1_shader_engine_0_1.att", "/c/h/200_1_shader_engine_0_1.att",
			"/c/h/100_1_shader_engine_1_1.att", "/c/x.att"},
		Objects: []string{"/c/h/100_1_code_object_id_1.hsaco", "/c/h/200_1_code_object_id_1.hsaco",
			"/c/k.hsaco", "/c/h/300_1_code_object_id_2.hsaco"},
	}
	groups, err := GroupInputs(fd, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range groups {
		var s []string
		for _, tr := range g.Traces {
			s = append(s, tr.Path[strings.LastIndexByte(tr.Path, '/')+1:])
		}
		for _, o := range g.Objects {
			s = append(s, o[strings.LastIndexByte(o, '/')+1:])
		}
		got = append(got, g.Key+": "+strings.Join(s, " "))
	}
	want := []string{
		"100_1: 100_1_shader_engine_0_1.att 100_1_shader_engine_1_1.att 100_1_code_object_id_1.hsaco k.hsaco 300_1_code_object_id_2.hsaco",
		"200_1: 200_1_shader_engine_0_1.att 200_1_code_object_id_1.hsaco k.hsaco 300_1_code_object_id_2.hsaco",
		": x.att k.hsaco 300_1_code_object_id_2.hsaco",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("groups:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if groups[0].Traces[1].SE != 1 || groups[2].Traces[0].Run != 1 {
		t.Errorf("shader engines and runs not assigned per group: %+v %+v", groups[0].Traces, groups[2].Traces)
	}
	if g, err := GroupInputs(fd, "200_1"); err != nil || len(g) != 1 || g[0].Key != "200_1" {
		t.Errorf("--group 200_1: %v %v", g, err)
	}
	if _, err := GroupInputs(fd, "9_9"); err == nil || !strings.Contains(err.Error(), "the inputs hold 100_1, 200_1, traces without a prefix") {
		t.Errorf("--group 9_9: %v", err)
	}
}
