package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// traceEngine is where scripts/install-deps puts Chrome DevTools' trace
// engine (npm @paulirish/trace_engine); ATT_TRACE_ENGINE overrides it.
func traceEngine(t *testing.T) (node, dir string) {
	dir = os.Getenv("ATT_TRACE_ENGINE")
	if dir == "" {
		dir = "/usr/local/lib/attkit-node/node_modules/@paulirish/trace_engine"
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node: scripts/install-deps installs nodejs and the DevTools trace engine this test loads the timeline with")
	}
	if _, err := os.Stat(filepath.Join(dir, "models", "trace", "trace.js")); err != nil {
		t.Skipf("no DevTools trace engine at %s (scripts/install-deps installs it; ATT_TRACE_ENGINE names another copy)", dir)
	}
	return node, dir
}

// A real consumer reads the timeline as att-timeline means it: Chrome
// DevTools' trace engine (the model behind its Performance panel, which
// opens Trace Event Format files) takes the generated run as a generic
// trace, names the processes SE0 and SE1 and every wave slot's thread, and
// builds each slot's call tree from exactly the wave, instruction and
// stall slices written, nested wave > instruction > stall.
func TestDevToolsReadsTimeline(t *testing.T) {
	node, engine := traceEngine(t)
	out := filepath.Join(t.TempDir(), "gen.json")
	if code, _, stderr := runCmd(t, nil, "-o", out, "--index", genIndex, genStreams[0], genStreams[1]); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	cmd := exec.Command(node, filepath.Join("testdata", "devtools_check.mjs"), engine, out)
	cmd.Stderr = os.Stderr
	res, err := cmd.Output()
	if err != nil {
		t.Fatalf("the trace engine failed on the timeline: %v", err)
	}
	var got struct {
		Generic      bool
		Bounds       struct{ Min, Max int64 }
		ProcessNames map[string]string
		Threads      []struct {
			Pid, Tid  int
			Name      string
			Roots     int
			ByCat     map[string]int
			Misnested int
		}
	}
	if err := json.Unmarshal(res, &got); err != nil {
		t.Fatalf("%v: %s", err, res)
	}

	data, _ := os.ReadFile(out)
	d := parse(t, string(data))
	names := map[[2]int]string{}
	want := map[[2]int]map[string]int{}
	minTs, maxEnd := int64(1<<62), int64(-1<<62)
	for _, e := range d.TraceEvents {
		k := key(*e.Pid, *e.Tid)
		if e.Ph == "M" && e.Name == "thread_name" {
			names[k] = e.Args["name"].(string)
		}
		if e.Ph == "X" {
			if want[k] == nil {
				want[k] = map[string]int{}
			}
			want[k][e.Cat]++
			minTs, maxEnd = min(minTs, *e.Ts), max(maxEnd, *e.Ts+*e.Dur)
		}
	}
	if !got.Generic || got.ProcessNames["1"] != "SE0" || got.ProcessNames["2"] != "SE1" {
		t.Errorf("generic %v, process names %v", got.Generic, got.ProcessNames)
	}
	if got.Bounds.Min != minTs || got.Bounds.Max != maxEnd {
		t.Errorf("trace bounds %+v, slices span [%d, %d]", got.Bounds, minTs, maxEnd)
	}
	seen := 0
	for _, th := range got.Threads {
		k := key(th.Pid, th.Tid)
		w := want[k]
		if w == nil {
			continue
		}
		seen++
		if th.Name != names[k] || th.Roots != w["wave"] || th.Misnested != 0 {
			t.Errorf("thread %v: name %q (want %q), %d roots for %d waves, %d misnested", k, th.Name, names[k], th.Roots, w["wave"], th.Misnested)
		}
		for cat, n := range w {
			if th.ByCat[cat] != n {
				t.Errorf("thread %v: the engine has %d %s slices, the file %d", k, th.ByCat[cat], cat, n)
			}
		}
	}
	if seen != len(want) || seen == 0 {
		t.Errorf("the engine built %d of the %d slice tracks", seen, len(want))
	}
}
