package main

import (
	"fmt"
	"reflect"
	"slices"
	"sort"

	"github.com/attkit/attkit/internal/sqttgen"
	"github.com/attkit/attkit/internal/wire"
)

// Differences are named by keys that leave the values out, so that inputs
// with the same kind of difference share a key: "native panic at ...",
// "status: native ok / library invalid shader data",
// "wave.instruction.Duration", "occupancy.count (native fewer)",
// "batching: native occupancy / library wave". diffKeys lists every key of
// one comparison, most important first: a decoder that did not return,
// then the status, then the records type by type (GFXIP, INFO, waves,
// occupancy, shader data, realtime, the rest), then how they were batched.

// typeOrder is the order in which record types are compared.
var typeOrder = []wire.RecordType{
	wire.TypeGFXIP, wire.TypeInfo, wire.TypeWave, wire.TypeOccupancy, wire.TypeShaderData,
	wire.TypeRealtime, wire.TypeRTFrequency, wire.TypePerfEvent, wire.TypeInstOtherSIMD,
	wire.TypeEvent, wire.TypeDispatch, wire.TypeMarker,
}

type keyList struct {
	keys []string
	seen map[string]bool
}

func (k *keyList) add(key string) {
	if k.seen == nil {
		k.seen = map[string]bool{}
	}
	if !k.seen[key] {
		k.seen[key] = true
		k.keys = append(k.keys, key)
	}
}

// diffKeys compares the native outcome n with the library's l.
func diffKeys(n, l *outcome) []string {
	var k keyList
	if n.fatal != "" {
		k.add("native " + n.fatal)
	}
	if l.fatal != "" {
		k.add("library " + l.fatal)
	}
	if len(k.keys) > 0 {
		return k.keys
	}
	if n.status != l.status {
		k.add(fmt.Sprintf("status: native %s / library %s", n.status, l.status))
		return k.keys
	}
	types := slices.Clone(typeOrder)
	for _, bs := range [][]wire.Batch{n.batches, l.batches} {
		for i := range bs {
			if !slices.Contains(types, bs[i].Type) {
				types = append(types, bs[i].Type)
			}
		}
	}
	for _, t := range types {
		compareRecords(&k, t.String(), records(n.batches, t), records(l.batches, t))
	}
	if d := batching(n.batches, l.batches); d != "" {
		k.add("batching: " + d)
	}
	return k.keys
}

// records lists the records of type t of every batch (sqttgen.Records).
func records(bs []wire.Batch, t wire.RecordType) []any {
	var out []any
	for i := range bs {
		if bs[i].Type == t {
			out = append(out, sqttgen.Records(&bs[i])...)
		}
	}
	return out
}

func countKey(name string, n, l int) string {
	if n > l {
		return name + ".count (native more)"
	}
	return name + ".count (native fewer)"
}

// compareRecords adds the keys of the differences between two record
// lists of one type: their count, their order (the same records in another
// order), or each field that differs in some record.
func compareRecords(k *keyList, name string, n, l []any) {
	if len(n) != len(l) {
		k.add(countKey(name, len(n), len(l)))
		return
	}
	var diff []int
	for i := range n {
		if !reflect.DeepEqual(n[i], l[i]) {
			diff = append(diff, i)
		}
	}
	if len(diff) == 0 {
		return
	}
	if len(diff) > 1 && sameMultiset(n, l) {
		k.add(name + ".order")
		return
	}
	for _, i := range diff {
		if nw, ok := n[i].(wire.Wave); ok {
			compareWave(k, &nw, l[i].(wire.Wave))
			continue
		}
		fieldKeys(k, name, reflect.ValueOf(n[i]), reflect.ValueOf(l[i]))
	}
}

func sameMultiset(n, l []any) bool {
	str := func(s []any) []string {
		out := make([]string, len(s))
		for i, v := range s {
			out[i] = fmt.Sprintf("%+v", v)
		}
		sort.Strings(out)
		return out
	}
	return slices.Equal(str(n), str(l))
}

// compareWave names the differences of one wave: its instructions first,
// then its timeline, then the other fields.
func compareWave(k *keyList, n *wire.Wave, l wire.Wave) {
	if len(n.Instructions) != len(l.Instructions) {
		k.add(countKey("wave.instructions", len(n.Instructions), len(l.Instructions)))
	} else {
		for i := range n.Instructions {
			if n.Instructions[i] != l.Instructions[i] {
				fieldKeys(k, "wave.instruction", reflect.ValueOf(n.Instructions[i]), reflect.ValueOf(l.Instructions[i]))
			}
		}
	}
	if len(n.Timeline) != len(l.Timeline) {
		k.add(countKey("wave.timeline", len(n.Timeline), len(l.Timeline)))
	} else {
		for i := range n.Timeline {
			if n.Timeline[i] != l.Timeline[i] {
				fieldKeys(k, "wave.timeline", reflect.ValueOf(n.Timeline[i]), reflect.ValueOf(l.Timeline[i]))
			}
		}
	}
	hn, hl := *n, l
	hn.Timeline, hn.Instructions, hl.Timeline, hl.Instructions = nil, nil, nil, nil
	fieldKeys(k, "wave", reflect.ValueOf(hn), reflect.ValueOf(hl))
}

// fieldKeys adds prefix.Field for every exported field that differs,
// descending into structs (wave.instruction.PC.Address).
func fieldKeys(k *keyList, prefix string, a, b reflect.Value) {
	if a.Kind() != reflect.Struct {
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			k.add(prefix)
		}
		return
	}
	for i := 0; i < a.NumField(); i++ {
		f := a.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		fa, fb := a.Field(i), b.Field(i)
		if reflect.DeepEqual(fa.Interface(), fb.Interface()) {
			continue
		}
		if fa.Kind() == reflect.Struct {
			fieldKeys(k, prefix+"."+f.Name, fa, fb)
		} else {
			k.add(prefix + "." + f.Name)
		}
	}
}

// batching describes the first difference in how the records were cut
// into batches: the type of a batch, or its size.
func batching(n, l []wire.Batch) string {
	name := func(bs []wire.Batch, i int) string {
		if i >= len(bs) {
			return "end"
		}
		return bs[i].Type.String()
	}
	for i := 0; i < len(n) || i < len(l); i++ {
		if i >= len(n) || i >= len(l) || n[i].Type != l[i].Type {
			return fmt.Sprintf("native %s / library %s", name(n, i), name(l, i))
		}
		if n[i].Len() != l[i].Len() {
			return n[i].Type.String() + " batch sizes"
		}
	}
	return ""
}
