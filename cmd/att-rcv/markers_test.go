package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/attkit/attkit/internal/rcv"
	"github.com/attkit/attkit/internal/wire"
)

// Packed markers (python-layer §5.11) are normalised and their times
// corrected by default when the index has a marker layout, and passed
// through with --no-decode-markers.
func TestDecodeMarkers(t *testing.T) {
	dir := t.TempDir()
	index := writeFile(t, dir, "code.json", []byte(`{"code": [], "sqtt_funcmap": [[7, 3, "F", "f", "/src/k.cl:3", 256]],
		"sqtt_funcmap_layout": [[7, 12, 4]]}`))
	stream := writeFile(t, dir, "se0.rec", encode(t, part{se: 0, run: 1, batches: []wire.Batch{
		{Type: wire.TypeOccupancy, Occupancy: []wire.Occupancy{{PC: pc(7, 0x100), CU: 1, SIMD: 2, WaveID: 3, Start: true}}},
		{Type: wire.TypeShaderData, ShaderData: []wire.ShaderData{
			{Time: 0x1080, Value: 0x101<<20 | 3<<2, CU: 1, SIMD: 2, WaveID: 3},
			{Time: 0x1010, Value: 0x100<<20 | 3<<2, CU: 1, SIMD: 2, WaveID: 3},
			{Time: 0x1050, Value: 7, CU: 1, SIMD: 2, WaveID: 3, Flags: 1},
		}},
	}}))
	for _, tc := range []struct {
		flag string
		want string
	}{
		{"", `[[4112,12,1,2,3,0],[4143,12,1,2,3,0],[4176,7,1,2,3,1]]`},
		{"--no-decode-markers", `[[4224,269484044,1,2,3,0],[4112,268435468,1,2,3,0],[4176,7,1,2,3,1]]`},
	} {
		out := filepath.Join(dir, "ui"+tc.flag)
		args := []string{"-d", out, "--index", index, stream}
		if tc.flag != "" {
			args = append(args, tc.flag)
		}
		if code, _, stderr := runCmd(t, nil, args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.flag, code, stderr)
		}
		data, err := os.ReadFile(filepath.Join(out, "shaderdata_0_0.json"))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Records json.RawMessage `json:"records"`
		}
		json.Unmarshal(data, &doc)
		var compact []any
		json.Unmarshal(doc.Records, &compact)
		got, _ := json.Marshal(compact)
		if string(got) != tc.want {
			t.Errorf("%q: records %s, want %s", tc.flag, got, tc.want)
		}
		if err := rcv.CheckFolder(out); err != nil {
			t.Errorf("%q: %v", tc.flag, err)
		}
	}
}
