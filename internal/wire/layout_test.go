package wire

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// docLayouts reads the payload table of docs/wire.md §1: the field names
// of each record type's array, and of a wave's timeline and instructions.
func docLayouts(t *testing.T) map[string][]string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/wire.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\| (\d+|other) \| (\w+) \| (.*) \|$`)
	list := func(s string) []string {
		var out []string
		for _, f := range strings.Split(s, ",") {
			f = strings.TrimSpace(f)
			f = strings.TrimSuffix(f, " (7-array as above)")
			out = append(out, f)
		}
		return out
	}
	first := regexp.MustCompile("`\\[([^`]*)\\]`")
	m := map[string][]string{}
	for _, r := range row.FindAllStringSubmatch(string(doc), -1) {
		name, text := r[2], r[3]
		if f := first.FindStringSubmatch(text); f != nil {
			m[name] = list(f[1])
		}
		if name == "wave" {
			tl := regexp.MustCompile("`timeline` is a flat array of `([^`]*)` pairs").FindStringSubmatch(text)
			in := regexp.MustCompile("6 values per instruction: `([^`]*)`").FindStringSubmatch(text)
			if tl == nil || in == nil {
				t.Fatalf("docs/wire.md: the wave row no longer says how timeline and instructions are laid out:\n%s", text)
			}
			m["timeline"], m["instructions"] = list(tl[1]), list(in[1])
		}
	}
	return m
}

// TestLayoutIsTheDocument: the layout table is docs/wire.md's, name for
// name.
func TestLayoutIsTheDocument(t *testing.T) {
	doc := docLayouts(t)
	check := func(name string, got []string) {
		if !reflect.DeepEqual(got, doc[name]) {
			t.Errorf("%s: layout %q, docs/wire.md %q", name, got, doc[name])
		}
	}
	n := 0
	for ty := TypeGFXIP; ty < typeLast; ty++ {
		if recordFields[ty] != nil {
			check(ty.String(), recordFields[ty])
			n++
		}
	}
	check("timeline", timelineFields)
	check("instructions", instructionFields)
	check("unknown", rawFields)
	if n != 9 || len(doc) != n+3 {
		t.Errorf("%d record layouts, %d in docs/wire.md (%v)", n, len(doc), doc)
	}
}

// fillDistinct sets every integer, string and bool reachable from v to a
// value no other field has (bools alternate), so that two fields swapped in
// the encoding cannot go unnoticed.
func fillDistinct(v reflect.Value, next *uint64) {
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Field(i).CanSet() {
				fillDistinct(v.Field(i), next)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			fillDistinct(v.Index(i), next)
		}
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		*next++
		v.SetUint(*next)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		*next++
		v.SetInt(-int64(*next))
	case reflect.String:
		*next++
		v.SetString("s" + strconv.FormatUint(*next, 10))
	case reflect.Bool:
		*next++
		v.SetBool(*next%2 == 0)
	}
}

// goField returns the Go value docs/wire.md's field name stands for in
// record r: snake case to Go's names (wave_id WaveID, me_id MEID, a.b a
// field of a field), plus the fields that are not one struct member.
func goField(t *testing.T, r reflect.Value, name string) any {
	t.Helper()
	switch {
	case name == "word":
		return uint64(r.Addr().Interface().(*Occupancy).Word())
	case strings.HasPrefix(name, "events"):
		return r.FieldByName("Events").Index(int(name[6] - '0')).Interface()
	case strings.HasPrefix(name, "thread_dim_"):
		return r.FieldByName("ThreadDim").Index(int(name[11] - 'x')).Interface()
	case name == "bin":
		return r.FieldByName("Data").Interface()
	case (name == "name" || name == "source_location") && r.Type() == reflect.TypeOf(Marker{}):
		null := map[string]string{"name": "NameNull", "source_location": "SourceNull"}[name]
		if r.FieldByName(null).Bool() {
			return nil
		}
	}
	for _, part := range strings.Split(name, ".") {
		var goName string
		for _, w := range strings.Split(part, "_") {
			switch w {
			case "id", "pc", "me", "cu", "simd", "wgp", "lds":
				goName += strings.ToUpper(w)
			case "sgprs", "vgprs":
				goName += strings.ToUpper(w[:4]) + "s"
			default:
				goName += strings.ToUpper(w[:1]) + w[1:]
			}
		}
		if goName == "Shaderdata" {
			goName = "ShaderData"
		}
		f := r.FieldByName(goName)
		if !f.IsValid() {
			t.Fatalf("%s: no field %s for %q", r.Type(), goName, name)
		}
		r = f
	}
	return r.Interface()
}

// same compares a msgpack/v5 value with a Go value: integers by value
// whatever their width, the rest as they are.
func same(mp, gov any) bool {
	num := func(x any) (string, bool) {
		v := reflect.ValueOf(x)
		switch v.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return strconv.FormatInt(v.Int(), 10), true
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			return strconv.FormatUint(v.Uint(), 10), true
		}
		return "", false
	}
	if a, ok := num(mp); ok {
		b, ok := num(gov)
		return ok && a == b
	}
	return reflect.DeepEqual(mp, gov)
}

// checkRecord compares the msgpack array of one record with its Go value,
// field by field, with the names of docs/wire.md.
func checkRecord(t *testing.T, what string, arr any, r reflect.Value, names []string) {
	t.Helper()
	a, ok := arr.([]any)
	if !ok || len(a) != len(names) {
		t.Fatalf("%s: %#v is not a %d-array", what, arr, len(names))
	}
	for i, name := range names {
		switch name {
		case "shaderdata":
			checkRecord(t, what+".shaderdata", a[i], r.FieldByName("ShaderData"), recordFields[TypeShaderData])
		case "timeline", "instructions":
			fields, per := timelineFields, "Timeline"
			if name == "instructions" {
				fields, per = instructionFields, "Instructions"
			}
			flat, _ := a[i].([]any)
			s := r.FieldByName(per)
			if len(flat) != len(fields)*s.Len() || s.Len() == 0 {
				t.Fatalf("%s.%s: %d values for %d entries", what, name, len(flat), s.Len())
			}
			for k := 0; k < s.Len(); k++ {
				checkRecord(t, fmt.Sprintf("%s.%s[%d]", what, name, k), flat[k*len(fields):(k+1)*len(fields)], s.Index(k), fields)
			}
		default:
			if want := goField(t, r, name); !same(a[i], want) {
				t.Errorf("%s: position %d (%s) holds %#v, want %#v", what, i, name, a[i], want)
			}
		}
	}
}

// TestLayoutPositions writes a batch of every type whose fields all differ
// and reads the stream back with msgpack/v5 into []any: every field sits
// at the position docs/wire.md gives it.
func TestLayoutPositions(t *testing.T) {
	var next uint64
	var batches []Batch
	for _, b := range sampleBatches() {
		typ := b.Type
		fillDistinct(reflect.ValueOf(&b).Elem(), &next)
		b.Type = typ
		batches = append(batches, b)
	}
	data := encodeStream(t, sampleHeader(), batches)
	dec := msgpack.NewDecoder(bytes.NewReader(data))
	if _, err := dec.DecodeInterface(); err != nil { // the header map
		t.Fatal(err)
	}
	slices := map[RecordType]string{TypeOccupancy: "Occupancy", TypePerfEvent: "PerfEvents", TypeWave: "Waves",
		TypeEvent: "Events", TypeShaderData: "ShaderData", TypeRealtime: "Realtime", TypeInstOtherSIMD: "OtherSIMD",
		TypeDispatch: "Dispatches", TypeMarker: "Markers"}
	checked := 0
	for i := range batches {
		b := &batches[i]
		v, err := dec.DecodeInterface()
		if err != nil {
			t.Fatal(err)
		}
		pair, ok := v.([]any)
		if !ok || len(pair) != 2 || !same(pair[0], uint64(b.Type)) {
			t.Fatalf("batch %d: %#v is not [type, payload]", i, v)
		}
		bv := reflect.ValueOf(b).Elem()
		switch {
		case b.Type == TypeGFXIP || b.Type == TypeRTFrequency:
			want := map[RecordType]uint64{TypeGFXIP: b.GFXIP, TypeRTFrequency: b.RTFrequency}[b.Type]
			if !same(pair[1], want) {
				t.Errorf("%v: payload %#v, want %d", b.Type, pair[1], want)
			}
		case b.Type == TypeInfo:
			if p, _ := pair[1].([]any); len(p) != len(b.Info) || !same(p[0], uint64(b.Info[0])) {
				t.Errorf("info: payload %#v, want %v", pair[1], b.Info)
			}
		case !b.Type.Known():
			checkRecord(t, "unknown", pair[1], bv.FieldByName("Raw"), rawFields)
		default:
			recs, _ := pair[1].([]any)
			s := bv.FieldByName(slices[b.Type])
			if len(recs) != s.Len() || s.Len() == 0 {
				t.Fatalf("%v: %d records in the stream, %d in the batch", b.Type, len(recs), s.Len())
			}
			for k := range recs {
				checkRecord(t, fmt.Sprintf("%v[%d]", b.Type, k), recs[k], s.Index(k), recordFields[b.Type])
			}
		}
		checked++
	}
	if checked != len(batches) || len(batches) < 13 {
		t.Errorf("%d of %d batches checked", checked, len(batches))
	}
}
