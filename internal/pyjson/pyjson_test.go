package pyjson

import (
	"encoding/json"
	"os/exec"
	"testing"
)

// want was printed by CPython 3.11's json.dumps(obj, indent=2) for the same
// value; TestMatchesPython re-checks it against python3 when present.
const want = `{
  "a": "\u00e9\u2028\ud83d\ude00\u007f<>&/\"\\\n\t\u0001",
  "b": [],
  "c": {},
  "d": null,
  "e": true,
  "f": 1.5,
  "g": [
    [
      1
    ]
  ]
}`

func value() Object {
	return Object{
		{"a", "é\u2028\U0001F600\x7f<>&/\"\\\n\t\x01"},
		{"b", []any{}},
		{"c", Object{}},
		{"d", nil},
		{"e", true},
		{"f", 1.5},
		{"g", [][]int{{1}}},
	}
}

func TestMarshal(t *testing.T) {
	if got := string(Marshal(value())); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestMatchesPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not on PATH; the constant was checked against it")
	}
	script := `import json,sys
print(json.dumps({"a":"\u00e9\u2028\U0001F600\x7f<>&/\"\\\n\t\x01","b":[],"c":{},"d":None,"e":True,"f":1.5,"g":[[1]]},indent=2),end="")`
	out, err := exec.Command(py, "-c", script).Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != want {
		t.Errorf("python3 printed\n%s", out)
	}
}

func TestDecodeKeepsOrder(t *testing.T) {
	in := `{"z": 1, "a": [2, {"y": null, "b": "x"}], "n": 12345678901234567890}`
	v, err := Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	got := string(Marshal(v))
	wantOut := "{\n  \"z\": 1,\n  \"a\": [\n    2,\n    {\n      \"y\": null,\n      \"b\": \"x\"\n    }\n  ],\n  \"n\": 12345678901234567890\n}"
	if got != wantOut {
		t.Errorf("got\n%s", got)
	}
	if _, err := Decode([]byte(`{"a": 1} x`)); err == nil {
		t.Error("trailing data accepted")
	}
	if _, err := Decode([]byte(`[1, 2`)); err == nil {
		t.Error("truncated JSON accepted")
	}
	raw := Marshal(Object{{"r", json.RawMessage(`{"q":[1]}`)}})
	if string(raw) != "{\n  \"r\": {\n    \"q\": [\n      1\n    ]\n  }\n}" {
		t.Errorf("raw message: %s", raw)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(want))
	f.Add([]byte(`[1, {"a": "b"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Decode(data)
		if err != nil {
			return
		}
		out := Marshal(v)
		v2, err := Decode(out)
		if err != nil {
			t.Fatalf("re-decoding our own output: %v\n%s", err, out)
		}
		if string(Marshal(v2)) != string(out) {
			t.Fatalf("not stable:\n%s", out)
		}
	})
}
