package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"testing"
)

// FuzzTimeline feeds arbitrary bytes as a record stream: att-timeline
// never panics, and whenever it succeeds its output is one JSON object
// (a trace a reader can open).
func FuzzTimeline(f *testing.F) {
	for _, p := range genStreams {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[:min(len(data), 4096)])
	}
	f.Add([]byte(`{"type":"wave","se":0,"cu":1,"simd":0,"wave_id":2,"begin_time":5,"end_time":9}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		code, stdout, _ := runCmd(t, bytes.NewReader(data), "--start", "0", "--max-size", "1MB")
		if code == 0 && !json.Valid([]byte(stdout)) {
			t.Fatalf("exit 0 with invalid JSON: %.200s", stdout)
		}
	})
}

// FuzzParseSize: parseSize accepts exactly what it can give back.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"256MB", "1", "20kb", " 3 G", "0", "-1MB", "9999999999999GB", "MB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseSize(s)
		if err != nil {
			return
		}
		if n <= 0 {
			t.Fatalf("%q: %d", s, n)
		}
		if m, err := parseSize(strconv.FormatInt(n, 10)); err != nil || m != n {
			t.Fatalf("%q = %d, but %d reads as %d, %v", s, n, n, m, err)
		}
	})
}
