package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Counter names flow into filenames.json from --counters, or else from the
// configuration file rocprofv3 writes beside the traces (<pid>_config.json,
// att_param_perfcounters; a SIMD mask other than 0xf is kept as :<hex>).
func TestCounterNames(t *testing.T) {
	sample := filepath.Join("..", "..", "testdata", "sample")
	entries, err := os.ReadDir(sample)
	if err != nil {
		t.Fatal(err)
	}
	config := `{"rocprofiler-sdk-tool": [{"metadata": {"pid": 31337, "config": {"advanced_thread_trace": true,
	  "att_param_perfcounters": [{"counter_name": "SQ_WAVES", "simd_mask": 15}, {"counter_name": "SQ_INST_LEVEL_VMEM", "simd_mask": 3}],
	  "att_param_perf_ctrl": 10}}}]}`
	for _, tc := range []struct {
		name   string
		config string
		args   []string
		want   []string
		err    string
	}{
		{"no config", "", nil, []string{}, ""},
		{"config", config, nil, []string{"SQ_WAVES", "SQ_INST_LEVEL_VMEM:3"}, ""},
		{"flag wins", config, []string{"--counters", "SQ_BUSY_CYCLES"}, []string{"SQ_BUSY_CYCLES"}, ""},
		{"bad config", "{", nil, nil, "31337_config.json: not a rocprofv3 configuration file"},
	} {
		dir := t.TempDir()
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(sample, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644)
		}
		if tc.config != "" {
			os.WriteFile(filepath.Join(dir, "31337_config.json"), []byte(tc.config), 0o644)
		}
		var out, errb bytes.Buffer
		args := append([]string{"--backend", "native", "--formats", "json", "-j", "1"}, tc.args...)
		code := run(append(args, dir), strings.NewReader(""), &out, &errb)
		if tc.err != "" {
			if code == 0 || !strings.Contains(errb.String(), tc.err) {
				t.Errorf("%s: exit %d, %q; want %q", tc.name, code, errb.String(), tc.err)
			}
			continue
		}
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.name, code, errb.String())
		}
		for _, run := range []string{"1", "2"} {
			data, err := os.ReadFile(filepath.Join(dir, "ui_output_"+filepath.Base(dir)+run, "filenames.json"))
			if err != nil {
				t.Fatal(err)
			}
			var fn struct {
				CounterNames []string `json:"counter_names"`
			}
			if err := json.Unmarshal(data, &fn); err != nil || !reflect.DeepEqual(fn.CounterNames, tc.want) {
				t.Errorf("%s: run %s counter_names %q (%v), want %q", tc.name, run, fn.CounterNames, err, tc.want)
			}
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"--counters", "A,A", sample}, strings.NewReader(""), &out, &errb); code != 2 ||
		!strings.Contains(errb.String(), `att-tool: --counters: counter "A" named twice`) {
		t.Errorf("--counters A,A: exit %d, %q", code, errb.String())
	}
}
