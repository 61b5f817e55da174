package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/attkit/attkit/internal/capture"
	"github.com/attkit/attkit/internal/tracename"
)

// FuzzParseSize: no input panics; a size read is positive.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"256MB", "0x10000000", "4000", "1GB", "", "-1", "9999999999G", "0x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, err := parseSize(s); err == nil && n <= 0 {
			t.Fatalf("%q: %d", s, n)
		}
	})
}

// FuzzReadConfig: a <pid>_config.json of any content never panics; a
// buffer size read is positive.
func FuzzReadConfig(f *testing.F) {
	f.Add([]byte(`{"rocprofiler-sdk-tool": [{"metadata": {"config": {"att_param_buffer_size": 4200, "att_param_target_cu": "0x1"}}}]}`))
	f.Add([]byte(`{"rocprofiler-sdk-tool": []}`))
	f.Add([]byte(`[1,2`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "7_config.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		g := &capture.Group{Key: "7_1", Traces: []tracename.Trace{{Path: filepath.Join(dir, "7_1_shader_engine_0_1.att")}}}
		if c := readConfig(g); c.bufferSize < 0 {
			t.Fatalf("buffer size %d", c.bufferSize)
		}
	})
}
