// Command gen makes the record stream's codecs from layout.txt, its one
// table of record names, fields, widths and C struct members: in flows the
// table, out flow internal/wire's layout_gen.go (the field-name lists; each
// record's msgpack writer and width-checked reader, its JSON projection's
// writer and reader, a bit-field word's getter and setter; the switches
// over the record types of a batch) and internal/cdec's convert_gen.go
// (the record sizes the C side needs, and the conversion of the decoder
// library's C structs into wire records). Run it through
// `go generate ./internal/wire/`; layout_gen_test.go fails when a
// committed file is not what it makes.
//
// Usage: gen [-in layout.txt] [-out layout_gen.go] [-cdec ../cdec/convert_gen.go]
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
)

type bit struct {
	name, goField, goType string
	n                     int
}

type field struct {
	name, goField, goType, width string
	jsonKey, enum, c             string
	bits                         []bit   // a bits word's parts, from bit 0
	rec                          *record // {REC} or []REC
}

type record struct {
	name, goType, constant, kind, batch, c string
	fields                                 []field
	parent                                 *record // of an elem: the record whose array it is
	parentField                            string
}

// fn names r in the names of its functions (appendX, readX, jsonX).
func (r *record) fn() string {
	if r.kind == "raw" {
		return "RawBatch"
	}
	return r.goType
}

func main() {
	in := flag.String("in", "layout.txt", "the layout table")
	out := flag.String("out", "layout_gen.go", "internal/wire's Go file to write")
	cdec := flag.String("cdec", "../cdec/convert_gen.go", "internal/cdec's Go file to write")
	flag.Parse()
	f, err := os.Open(*in)
	if err != nil {
		fail(err)
	}
	recs, err := parse(f)
	f.Close()
	if err != nil {
		fail(fmt.Errorf("%s: %w", *in, err))
	}
	for _, o := range []struct {
		path string
		gen  func([]*record) ([]byte, error)
	}{{*out, generateWire}, {*cdec, generateCdec}} {
		src, err := o.gen(recs)
		if err != nil {
			fail(err)
		}
		if err := writeFile(o.path, src); err != nil {
			fail(err)
		}
	}
}

func writeFile(path string, src []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, src, 0o666); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "gen: %v\n", err)
	os.Exit(1)
}

var widths = map[string]bool{"u8": true, "u16": true, "u32": true, "u64": true, "i32": true, "i64": true, "str?": true, "bin": true}

func parse(r io.Reader) ([]*record, error) {
	var recs []*record
	byName := map[string]*record{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		w := strings.Fields(line)
		opts := map[string]string{}
		for len(w) > 0 {
			k, v, ok := strings.Cut(w[len(w)-1], "=")
			if !ok {
				if w[len(w)-1] != "bits" {
					break
				}
				k, v = "bits", "1"
			}
			switch k {
			case "kind", "batch", "c", "json", "enum", "bits":
				opts[k] = v
			default:
				return nil, fmt.Errorf("line %d: unknown option %q", n, w[len(w)-1])
			}
			w = w[:len(w)-1]
		}
		switch w[0] {
		case "record":
			if len(w) != 4 {
				return nil, fmt.Errorf("line %d: want record NAME GOTYPE CONST [options]", n)
			}
			r := &record{name: w[1], goType: w[2], constant: w[3], kind: opts["kind"], batch: opts["batch"], c: opts["c"]}
			if r.kind == "" {
				r.kind = "array"
			}
			switch r.kind {
			case "array", "each", "one", "elem", "raw":
			default:
				return nil, fmt.Errorf("line %d: unknown kind %q", n, r.kind)
			}
			if (r.constant == "-") != (r.kind == "elem" || r.kind == "raw") {
				return nil, fmt.Errorf("line %d: a record of kind %s has a type constant unless it is an elem or raw", n, r.kind)
			}
			if r.kind != "elem" && r.batch == "" {
				return nil, fmt.Errorf("line %d: no batch= field", n)
			}
			recs = append(recs, r)
			byName[r.name] = r
		case "bit":
			if len(w) != 5 || len(recs) == 0 {
				return nil, fmt.Errorf("line %d: want bit NAME GOFIELD GOTYPE NBITS", n)
			}
			r := recs[len(recs)-1]
			k := len(r.fields) - 1
			if k < 0 || r.fields[k].bits == nil {
				return nil, fmt.Errorf("line %d: a bit line follows a bits field", n)
			}
			nb, err := strconv.Atoi(w[4])
			if err != nil || nb < 1 {
				return nil, fmt.Errorf("line %d: bad bit count %q", n, w[4])
			}
			r.fields[k].bits = append(r.fields[k].bits, bit{w[1], w[2], w[3], nb})
		default:
			if len(w) != 4 || len(recs) == 0 {
				return nil, fmt.Errorf("line %d: want NAME GOFIELD GOTYPE WIDTH [options] after a record line", n)
			}
			r := recs[len(recs)-1]
			f := field{name: w[0], goField: w[1], goType: w[2], width: w[3], jsonKey: opts["json"], enum: opts["enum"], c: opts["c"]}
			if f.jsonKey == "" {
				f.jsonKey = f.name
			}
			if f.c == "" {
				f.c = f.name
			}
			if opts["bits"] != "" {
				f.bits = []bit{}
			}
			if !widths[f.width] && !strings.HasPrefix(f.width, "[]") && !strings.HasPrefix(f.width, "{") {
				return nil, fmt.Errorf("line %d: unknown width %q", n, f.width)
			}
			if (r.kind == "one" || r.kind == "each") && (len(r.fields) > 0 || f.goField != "-") {
				return nil, fmt.Errorf("line %d: a record of kind %s has one field, -", n, r.kind)
			}
			r.fields = append(r.fields, f)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	// Link nested and array fields to their records.
	for _, r := range recs {
		for i := range r.fields {
			f := &r.fields[i]
			if f.bits != nil {
				total := 0
				for _, b := range f.bits {
					total += b.n
				}
				if total != bitsOf(f.width) {
					return nil, fmt.Errorf("record %s: the bits of %s make %d bits, not %d", r.name, f.name, total, bitsOf(f.width))
				}
			}
			name := ""
			switch {
			case strings.HasPrefix(f.width, "[]"):
				name = f.width[2:]
			case strings.HasPrefix(f.width, "{"):
				name = strings.TrimSuffix(f.width[1:], "}")
			default:
				continue
			}
			sub := byName[name]
			if sub == nil {
				return nil, fmt.Errorf("record %s: field %s: no record %s", r.name, f.name, name)
			}
			if f.width[0] == '[' {
				if sub.kind != "elem" || sub.parent != nil {
					return nil, fmt.Errorf("record %s: field %s: %s is not an elem record of one array", r.name, f.name, name)
				}
				sub.parent, sub.parentField = r, f.name
			}
			f.rec = sub
		}
	}
	return recs, nil
}

func bitsOf(width string) int {
	n, _ := strconv.Atoi(width[1:])
	return n
}

func names(r *record) string {
	var q []string
	for _, f := range r.fields {
		q = append(q, strconv.Quote(f.name))
	}
	return strings.Join(q, ", ")
}

// conv converts val of type from to type to, leaving out a conversion to
// the same type.
func conv(to, from, val string) string {
	if to == from {
		return val
	}
	return to + "(" + val + ")"
}

func split2(s string) (string, string) {
	a, b, _ := strings.Cut(s, ",")
	return a, b
}

// val is the Go expression of field f of the record v (a pointer).
func val(v string, f field) string {
	if f.goField == "-" {
		return v
	}
	return v + "." + strings.TrimSuffix(f.goField, "()")
}

// appendCall is the call that writes expr, of Go type goType, with width w.
func appendCall(w, goType, expr string) string {
	switch w {
	case "u8":
		return "appendU8(dst, " + conv("uint8", goType, expr) + ")"
	case "u16":
		return "appendU16(dst, " + conv("uint16", goType, expr) + ")"
	case "u32":
		return "appendU32(dst, " + conv("uint32", goType, expr) + ")"
	case "u64":
		return "appendUint(dst, " + conv("uint64", goType, expr) + ")"
	case "i32":
		return "appendI32(dst, " + conv("int32", goType, expr) + ")"
	case "i64":
		return "appendInt(dst, " + conv("int64", goType, expr) + ")"
	}
	panic("no append for width " + w)
}

// readCall is the expression that reads field name of record rec, of
// width w, as Go type goType.
func readCall(rec, name, w, goType string) string {
	if w[0] == 'i' {
		return conv(goType, "int64", fmt.Sprintf("m.in(%s, %q, %s)", rec, name, w[1:]))
	}
	return conv(goType, "uint64", fmt.Sprintf("m.un(%s, %q, %s)", rec, name, w[1:]))
}

type gen struct{ b bytes.Buffer }

func (g *gen) p(format string, args ...any) { fmt.Fprintf(&g.b, format, args...) }

func generateWire(recs []*record) ([]byte, error) {
	g := &gen{}
	g.p("// Code generated by internal/wire/internal/gen from layout.txt; DO NOT EDIT.\n\n")
	g.p("package wire\n\n")
	g.p("import (\n\"encoding/base64\"\n\"strconv\"\n)\n\n")
	g.p("// recordFields holds the names of the fields of each record's msgpack\n")
	g.p("// array, in order (docs/wire.md §1, \"Payloads\").\n")
	g.p("var recordFields = [typeLast][]string{\n")
	for _, r := range recs {
		if r.kind == "array" {
			g.p("\t%s: {%s},\n", r.constant, names(r))
		}
	}
	g.p("}\n\n")
	for _, r := range recs {
		switch r.kind {
		case "elem":
			g.p("// %sFields names the values of one %s element.\n", r.name, r.name)
			g.p("var %sFields = []string{%s}\n\n", r.name, names(r))
		case "raw":
			g.p("// rawFields names the values of an %s batch.\n", r.name)
			g.p("var rawFields = []string{%s}\n\n", names(r))
		}
	}
	for _, r := range recs {
		switch r.kind {
		case "array", "raw":
			g.recordCodec(r)
		case "elem":
			g.elemCodec(r)
		}
		for _, f := range r.fields {
			if f.bits != nil {
				g.bitsWord(r, f)
			}
		}
	}
	g.batchSwitches(recs)
	src, err := format.Source(g.b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("generated code does not parse: %w\n%s", err, g.b.Bytes())
	}
	return src, nil
}

// bitsWord writes the getter and setter of a bit-field word.
func (g *gen) bitsWord(r *record, f field) {
	name := strings.TrimSuffix(f.goField, "()")
	typ := "uint" + f.width[1:]
	g.p("// %s returns the bit-field word %s as the C struct holds it.\n", name, f.name)
	g.p("func (v *%s) %s() %s {\n\tvar w %s\n", r.goType, name, typ, typ)
	at := 0
	for _, b := range f.bits {
		if b.goType == "bool" {
			g.p("\tif v.%s {\n\t\tw |= 1 << %d\n\t}\n", b.goField, at)
		} else {
			g.p("\tw |= %s(v.%s&%#x) << %d\n", typ, b.goField, uint64(1)<<b.n-1, at)
		}
		at += b.n
	}
	g.p("\treturn w\n}\n\n")
	g.p("// Set%s unpacks the bit-field word %s into v.\n", name, f.name)
	g.p("func (v *%s) Set%s(w %s) {\n", r.goType, name, typ)
	at = 0
	for _, b := range f.bits {
		if b.goType == "bool" {
			g.p("\tv.%s = w&(1<<%d) != 0\n", b.goField, at)
		} else {
			g.p("\tv.%s = %s(w >> %d & %#x)\n", b.goField, b.goType, at, uint64(1)<<b.n-1)
		}
		at += b.n
	}
	g.p("}\n\n")
}

// writeFields writes the msgpack writer's lines of r's fields.
func (g *gen) writeFields(r *record) {
	for _, f := range r.fields {
		v := val("v", f)
		switch {
		case f.width == "str?":
			s, null := split2(f.goField)
			g.p("\tdst = appendStrOrNil(dst, v.%s, v.%s)\n", s, null)
		case f.width == "bin":
			g.p("\tdst = appendBin(dst, %s)\n", v)
		case f.width[0] == '{':
			g.p("\tdst = append%s(dst, &%s)\n", f.rec.goType, v)
		case f.width[0] == '[':
			g.p("\tdst = appendArrayLen(dst, %d*len(%s))\n", len(f.rec.fields), v)
			g.p("\tfor i := range %s {\n\t\tdst = append%s(dst, &%s[i])\n\t}\n", v, f.rec.goType, v)
		case strings.HasSuffix(f.goField, "()"):
			g.p("\tdst = %s\n", appendCall(f.width, "uint"+f.width[1:], v+"()"))
		default:
			g.p("\tdst = %s\n", appendCall(f.width, f.goType, v))
		}
	}
}

// readFields writes the msgpack reader's lines of r's fields.
func (g *gen) readFields(r *record, label string) {
	g.p("\tconst r = %q\n", label)
	for _, f := range r.fields {
		v := val("v", f)
		switch {
		case f.width == "str?":
			s, null := split2(f.goField)
			g.p("\tv.%s, v.%s = m.strOrNil()\n", s, null)
		case f.width == "bin":
			g.p("\t%s = m.bin(%s[:0])\n", v, v)
		case f.width[0] == '{':
			g.p("\tm.read%s(&%s)\n", f.rec.goType, v)
		case f.width[0] == '[':
			g.p("\t%s = m.read%ss(%s[:0])\n", v, f.rec.goType, v)
		case strings.HasSuffix(f.goField, "()"):
			g.p("\tv.Set%s(%s)\n", strings.TrimSuffix(f.goField, "()"), readCall("r", f.name, f.width, "uint"+f.width[1:]))
		default:
			g.p("\t%s = %s\n", v, readCall("r", f.name, f.width, f.goType))
		}
	}
}

// recordCodec writes the msgpack and JSON codecs of an array record.
func (g *gen) recordCodec(r *record) {
	fn := r.fn()
	label := r.name
	if r.kind == "raw" {
		label = r.name + " batch"
	}
	g.p("// append%s writes one %s array.\n", fn, r.name)
	g.p("func append%s(dst []byte, v *%s) []byte {\n", fn, r.goType)
	g.p("\tdst = appendArrayLen(dst, %d)\n", len(r.fields))
	g.writeFields(r)
	g.p("\treturn dst\n}\n\n")
	g.p("// read%s reads one %s array, checking every width.\n", fn, r.name)
	g.p("func (m *mpReader) read%s(v *%s) {\n", fn, r.goType)
	g.p("\tif !m.wantArray(%q, %d) {\n\t\treturn\n\t}\n", label, len(r.fields))
	g.readFields(r, label)
	g.p("}\n\n")
	g.jsonCodec(r)
}

// elemCodec writes the codecs of the element of a flat array: its values
// without an array header, the flat array's reader with a fast path over
// buffered bytes, and a JSON object with its keys sorted.
func (g *gen) elemCodec(r *record) {
	fn := r.goType
	label := r.parent.name + " " + r.name
	n := len(r.fields)
	g.p("// append%s writes the values of one %s element.\n", fn, r.name)
	g.p("func append%s(dst []byte, v *%s) []byte {\n", fn, r.goType)
	g.writeFields(r)
	g.p("\treturn dst\n}\n\n")
	g.p("// read%ss reads the flat array of a %s's %s (%d values per element),\n", fn, r.parent.name, r.parentField, n)
	g.p("// appending the elements to dst.\n")
	g.p("func (m *mpReader) read%ss(dst []%s) []%s {\n", fn, r.goType, r.goType)
	g.p("\tn := m.arrayLen()\n")
	g.p("\tif n%%%d != 0 {\n\t\tm.failf(\"%s: %%d values is not a multiple of %d\", n)\n\t\treturn dst\n\t}\n", n, label, n)
	g.p("\tfor i := 0; i < n/%d && m.err == nil; i++ {\n", n)
	g.p("\t\tif !slowPath {\n\t\t\tvar k int\n\t\t\tif dst, k = m.fast%ss(dst, n/%d-i); k > 0 {\n\t\t\t\ti += k - 1\n\t\t\t\tcontinue\n\t\t\t}\n\t\t}\n", fn, n)
	g.p("\t\tdst = extend(dst)\n\t\tv := &dst[len(dst)-1]\n")
	g.readFields(r, label)
	g.p("\t}\n\treturn dst\n}\n\n")
	g.p("// fast%ss decodes up to max %s elements straight from the bytes bufio\n", fn, r.name)
	g.p("// already holds and appends them to dst. It stops before an element that\n")
	g.p("// is not wholly buffered or has a value that is not an integer of its\n")
	g.p("// field's width, and returns how many it decoded; the byte-wise path\n")
	g.p("// then takes the next one, refilling the buffer or reporting the error.\n")
	g.p("func (m *mpReader) fast%ss(dst []%s, max int) ([]%s, int) {\n", fn, r.goType, r.goType)
	g.p("\tif m.err != nil {\n\t\treturn dst, 0\n\t}\n")
	g.p("\tp, _ := m.br.Peek(m.br.Buffered())\n\toff, k := 0, 0\n")
	g.p("\tfor k < max {\n\t\to := off\n\t\tvar e %s\n", r.goType)
	for i, f := range r.fields {
		if !widths[f.width] || f.width[0] != 'u' && f.width[0] != 'i' {
			panic("elem " + r.name + ": only integer fields")
		}
		decl := "="
		if i == 0 {
			decl = ":="
		}
		fits := fmt.Sprintf("fitsU(x, neg, %s)", f.width[1:])
		from := "uint64"
		x := "x"
		if f.width[0] == 'i' {
			fits = fmt.Sprintf("fitsI(x, neg, %s)", f.width[1:])
			from, x = "int64", "int64(x)"
		}
		g.p("\t\tx, n, neg %s decodeIntAt(p[o:])\n", decl)
		g.p("\t\tif n == 0 || !%s {\n\t\t\tbreak\n\t\t}\n", fits)
		g.p("\t\t%s = %s\n\t\to += n\n", val("e", f), conv(f.goType, from, x))
	}
	g.p("\t\tdst = append(dst, e)\n\t\toff = o\n\t\tk++\n\t}\n")
	g.p("\tm.br.Discard(off)\n\tm.off += int64(off)\n\treturn dst, k\n}\n\n")

	// JSON: one object, its members in key order.
	type member struct{ key, code string }
	var ms []member
	for i := 0; i < len(r.fields); i++ {
		f := r.fields[i]
		if f.name == "size" || f.name == "reserved" {
			continue
		}
		if pre, ok := strings.CutSuffix(f.name, ".address"); ok {
			ms = append(ms, member{pre, fmt.Sprintf("dst = appendPC(dst, v.%s)", strings.TrimSuffix(f.goField, ".Address"))})
			i++
			continue
		}
		v := val("v", f)
		switch {
		case f.enum != "":
			ms = append(ms, member{f.jsonKey, fmt.Sprintf("dst = appendEnum(dst, %s.String())", v)})
		case f.width[0] == 'i':
			ms = append(ms, member{f.jsonKey, fmt.Sprintf("dst = strconv.AppendInt(dst, %s, 10)", conv("int64", f.goType, v))})
		default:
			ms = append(ms, member{f.jsonKey, fmt.Sprintf("dst = strconv.AppendUint(dst, %s, 10)", conv("uint64", f.goType, v))})
		}
	}
	sort.Slice(ms, func(a, b int) bool { return ms[a].key < ms[b].key })
	g.p("// appendJSON%ss appends the JSON projection of %s elements: an array\n", fn, r.name)
	g.p("// of objects, their keys sorted.\n")
	g.p("func appendJSON%ss(dst []byte, s []%s) []byte {\n\tdst = append(dst, '[')\n", fn, r.goType)
	g.p("\tfor i := range s {\n\t\tv := &s[i]\n\t\tif i > 0 {\n\t\t\tdst = append(dst, ',')\n\t\t}\n")
	for i, m := range ms {
		sep := ","
		if i == 0 {
			sep = "{"
		}
		g.p("\t\tdst = append(dst, `%s%q:`...)\n\t\t%s\n", sep, m.key, m.code)
	}
	g.p("\t\tdst = append(dst, '}')\n\t}\n\treturn append(dst, ']')\n}\n\n")
	g.jsonReader(r)
}

// jsonCodec writes the JSON projection's writer and reader of an array
// record (docs/wire.md §2).
func (g *gen) jsonCodec(r *record) {
	fn := r.fn()
	g.p("// json%s adds the JSON projection's members of a %s to o.\n", fn, r.name)
	g.p("func (o *objBuilder) json%s(v *%s) {\n", fn, r.goType)
	for i := 0; i < len(r.fields); i++ {
		f := r.fields[i]
		v := val("v", f)
		if f.name == "size" || f.name == "reserved" {
			continue
		}
		if pre, ok := strings.CutSuffix(f.name, ".address"); ok {
			g.p("\to.pc(%q, v.%s)\n", pre, strings.TrimSuffix(f.goField, ".Address"))
			i++
			continue
		}
		switch {
		case f.bits != nil:
			for _, b := range f.bits {
				switch {
				case b.name == "-":
				case b.goType == "bool":
					g.p("\to.bool(%q, v.%s)\n", b.name, b.goField)
				default:
					g.p("\to.uint(%q, uint64(v.%s))\n", b.name, b.goField)
				}
			}
		case f.width == "str?":
			s, null := split2(f.goField)
			g.p("\to.strOrNull(%q, v.%s, v.%s)\n", f.jsonKey, s, null)
		case f.width == "bin":
			g.p("\to.str(%q, base64.StdEncoding.EncodeToString(%s))\n", f.jsonKey, v)
		case f.width[0] == '{':
			g.p("\to.raw(%q, o.sub(func(s *objBuilder) { s.json%s(&%s) }))\n", f.jsonKey, f.rec.goType, v)
		case f.width[0] == '[':
			g.p("\t{\n\t\ts := len(o.scr)\n\t\to.scr = appendJSON%ss(o.scr, %s)\n\t\to.end(%q, s)\n\t}\n", f.rec.goType, v, f.jsonKey)
		case f.enum != "":
			g.p("\to.enum(%q, %s.String())\n", f.jsonKey, v)
		case f.width[0] == 'i':
			g.p("\to.int(%q, %s)\n", f.jsonKey, conv("int64", f.goType, v))
		default:
			g.p("\to.uint(%q, %s)\n", f.jsonKey, conv("uint64", f.goType, v))
		}
	}
	g.p("}\n\n")
	g.jsonReader(r)
}

// jsonReader writes the reader of r's JSON projection.
func (g *gen) jsonReader(r *record) {
	fn := r.fn()
	g.p("// json%s reads the JSON projection of a %s: what it leaves out reads as 0.\n", fn, r.name)
	g.p("func (o *jobj) json%s(v *%s) {\n", fn, r.goType)
	for i := 0; i < len(r.fields); i++ {
		f := r.fields[i]
		v := val("v", f)
		if f.name == "size" || f.name == "reserved" {
			g.p("\t%s = 0\n", v)
			continue
		}
		if pre, ok := strings.CutSuffix(f.name, ".address"); ok {
			g.p("\tv.%s = o.pc(%q)\n", strings.TrimSuffix(f.goField, ".Address"), pre)
			i++
			continue
		}
		switch {
		case f.bits != nil:
			for _, b := range f.bits {
				switch {
				case b.name == "-":
					g.p("\tv.%s = 0\n", b.goField)
				case b.goType == "bool":
					g.p("\tv.%s = o.bit(%q)\n", b.goField, b.name)
				default:
					g.p("\tv.%s = %s\n", b.goField, conv(b.goType, "uint64", fmt.Sprintf("o.uint(%q, %d)", b.name, b.n)))
				}
			}
		case f.width == "str?":
			s, null := split2(f.goField)
			g.p("\tv.%s, v.%s = o.strOrNull(%q)\n", s, null, f.jsonKey)
		case f.width == "bin":
			g.p("\t%s = o.bin(%q, %s[:0])\n", v, f.jsonKey, v)
		case f.width[0] == '{':
			g.p("\t%s = %s{}\n", v, f.rec.goType)
			g.p("\tif sub, ok := o.object(%q); ok {\n\t\tsub.json%s(&%s)\n\t\to.fail(sub.err)\n\t}\n", f.jsonKey, f.rec.goType, v)
		case f.width[0] == '[':
			g.p("\t%s = jsonElems(o, %q, %s[:0], (*jobj).json%s)\n", v, f.jsonKey, v, f.rec.goType)
		case f.enum != "":
			g.p("\t%s = %s(o.enum(%q, %s[:], %s, %v))\n", v, f.goType, f.jsonKey, f.enum, f.width[1:], f.width[0] == 'i')
		case f.width[0] == 'i':
			g.p("\t%s = %s\n", v, conv(f.goType, "int64", fmt.Sprintf("o.int(%q, %s)", f.jsonKey, f.width[1:])))
		default:
			g.p("\t%s = %s\n", v, conv(f.goType, "uint64", fmt.Sprintf("o.uint(%q, %s)", f.jsonKey, f.width[1:])))
		}
	}
	g.p("}\n\n")
}

// batchSwitches writes the switches over a batch's record type: the
// msgpack payload's writer and reader and the JSON projection's.
func (g *gen) batchSwitches(recs []*record) {
	var raw *record
	for _, r := range recs {
		if r.kind == "raw" {
			raw = r
		}
	}
	g.p("// appendPayload writes the payload of batch b (docs/wire.md §1); spill\n")
	g.p("// takes the encoding between records once it is large.\n")
	g.p("func appendPayload(dst []byte, b *Batch, spill spiller) []byte {\n\tswitch b.Type {\n")
	for _, r := range recs {
		f := r.fields[0]
		switch r.kind {
		case "one":
			g.p("\tcase %s:\n\t\tdst = %s\n", r.constant, appendCall(f.width, f.goType, "b."+r.batch))
		case "each":
			g.p("\tcase %s:\n\t\tdst = appendArrayLen(dst, len(b.%s))\n", r.constant, r.batch)
			g.p("\t\tfor _, v := range b.%s {\n\t\t\tdst = spill.check(dst)\n\t\t\tdst = %s\n\t\t}\n", r.batch, appendCall(f.width, f.goType, "v"))
		case "array":
			g.p("\tcase %s:\n\t\tdst = appendArrayLen(dst, len(b.%s))\n", r.constant, r.batch)
			g.p("\t\tfor i := range b.%s {\n\t\t\tdst = spill.check(dst)\n\t\t\tdst = append%s(dst, &b.%s[i])\n\t\t}\n", r.batch, r.goType, r.batch)
		}
	}
	g.p("\tdefault:\n\t\tdst = append%s(dst, &b.%s)\n\t}\n\treturn dst\n}\n\n", raw.fn(), raw.batch)

	g.p("// readPayload reads the payload of a batch of type t into rd's batch,\n")
	g.p("// which was reset to that type.\n")
	g.p("func (rd *Reader) readPayload(t RecordType) {\n\tm, b := &rd.m, &rd.batch\n\tswitch t {\n")
	var lists []string
	for _, r := range recs {
		switch r.kind {
		case "one":
			f := r.fields[0]
			g.p("\tcase %s:\n\t\tb.%s = %s\n", r.constant, r.batch, readCall(strconv.Quote(r.name), f.name, f.width, f.goType))
		case "each", "array":
			lists = append(lists, r.constant)
		}
	}
	g.p("\tcase %s:\n\t\trd.readRecords(t, m.arrayLen())\n", strings.Join(lists, ", "))
	g.p("\tdefault:\n\t\tm.read%s(&b.%s)\n\t}\n}\n\n", raw.fn(), raw.batch)

	g.p("// readN appends n records of type t, an array or value per record, to b.\n")
	g.p("func (m *mpReader) readN(b *Batch, t RecordType, n int) {\n\tswitch t {\n")
	for _, r := range recs {
		switch r.kind {
		case "each":
			f := r.fields[0]
			g.p("\tcase %s:\n\t\tfor i := 0; i < n && m.err == nil; i++ {\n", r.constant)
			g.p("\t\t\tb.%s = append(b.%s, %s)\n\t\t}\n", r.batch, r.batch, readCall(strconv.Quote(r.name), f.name, f.width, f.goType))
		case "array":
			g.p("\tcase %s:\n\t\tfor i := 0; i < n && m.err == nil; i++ {\n", r.constant)
			g.p("\t\t\tb.%s = extend(b.%s)\n\t\t\tm.read%s(&b.%s[len(b.%s)-1])\n\t\t}\n", r.batch, r.batch, r.goType, r.batch, r.batch)
		}
	}
	g.p("\t}\n}\n\n")

	g.p("// jsonRecord adds the JSON projection's members of record i of b to o.\n")
	g.p("func (o *objBuilder) jsonRecord(b *Batch, i int) {\n\tswitch b.Type {\n")
	for _, r := range recs {
		f := r.fields[0]
		switch r.kind {
		case "one":
			g.p("\tcase %s:\n\t\to.uint(%q, %s)\n", r.constant, f.jsonKey, conv("uint64", f.goType, "b."+r.batch))
		case "each":
			if f.enum == "" {
				panic("kind each: only enums")
			}
			g.p("\tcase %s:\n\t\to.enum(%q, b.%s[i].String())\n", r.constant, f.jsonKey, r.batch)
		case "array":
			g.p("\tcase %s:\n\t\to.json%s(&b.%s[i])\n", r.constant, r.goType, r.batch)
		}
	}
	g.p("\tdefault:\n\t\to.json%s(&b.%s)\n\t}\n}\n\n", raw.fn(), raw.batch)

	g.p("// jsonBatch reads one record of type t from its JSON projection into b,\n")
	g.p("// which was reset to that type.\n")
	g.p("func (o *jobj) jsonBatch(b *Batch, t RecordType) {\n\tswitch t {\n")
	for _, r := range recs {
		f := r.fields[0]
		switch r.kind {
		case "one":
			g.p("\tcase %s:\n\t\tb.%s = %s\n", r.constant, r.batch, conv(f.goType, "uint64", fmt.Sprintf("o.uint(%q, %s)", f.jsonKey, f.width[1:])))
		case "each":
			g.p("\tcase %s:\n\t\tb.%s = append(b.%s, %s(o.enum(%q, %s[:], %s, %v)))\n", r.constant, r.batch, r.batch,
				f.goType, f.jsonKey, f.enum, f.width[1:], f.width[0] == 'i')
		case "array":
			g.p("\tcase %s:\n\t\tb.%s = extend(b.%s)\n\t\to.json%s(&b.%s[len(b.%s)-1])\n", r.constant, r.batch, r.batch, r.goType, r.batch, r.batch)
		}
	}
	g.p("\tdefault:\n\t\to.json%s(&b.%s)\n\t}\n}\n\n", raw.fn(), raw.batch)
}

// wireType qualifies a Go type of package wire for use in package cdec.
func wireType(t string) string {
	if t != "" && t[0] >= 'A' && t[0] <= 'Z' {
		return "wire." + t
	}
	return t
}

// cExpr is the Go expression of C member spec of c: "a.b", "a[i]", or
// "a[lo:hi]" (bits lo..hi-1 of a, as a uint64).
func cExpr(spec string) string {
	if i := strings.Index(spec, "["); i > 0 && strings.Contains(spec, ":") {
		lo, hi, _ := strings.Cut(strings.TrimSuffix(spec[i+1:], "]"), ":")
		l, _ := strconv.Atoi(lo)
		h, _ := strconv.Atoi(hi)
		return fmt.Sprintf("uint64(c.%s)>>%d&%#x", spec[:i], l, uint64(1)<<(h-l)-1)
	}
	return "c." + spec
}

func cSizeof(c string) string {
	if strings.HasPrefix(c, "cdec_") {
		return "unsafe.Sizeof(C." + c + "{})"
	}
	return "unsafe.Sizeof(C." + c + "(0))"
}

func generateCdec(recs []*record) ([]byte, error) {
	g := &gen{}
	g.p("// Code generated by internal/wire/internal/gen from internal/wire/layout.txt; DO NOT EDIT.\n\n")
	g.p("//go:build cgo\n\npackage cdec\n\n/*\n#include <stdint.h>\n#include \"cdec.h\"\n*/\nimport \"C\"\n\n")
	g.p("import (\n\t\"unsafe\"\n\n\t\"github.com/attkit/attkit/internal/wire\"\n)\n\n")
	g.p("// recordLayout is what the C side must know of each known record type's\n")
	g.p("// C struct: its size, whether it begins with its own size (a newer\n")
	g.p("// library's larger struct is then read at that stride), and whether it\n")
	g.p("// points to wave arrays or strings that must be copied with it.\n")
	g.p("var recordLayout = [...]cLayout{\n")
	for _, r := range recs {
		if r.constant == "-" || r.c == "pointer" {
			continue
		}
		var opts []string
		if r.kind == "array" && r.fields[0].name == "size" {
			opts = append(opts, "selfSized: true")
		}
		for _, f := range r.fields {
			switch {
			case strings.HasPrefix(f.width, "[]") && !slices.Contains(opts, "waves: true"):
				opts = append(opts, "waves: true")
			case f.width == "str?" && !slices.Contains(opts, "strings: true"):
				opts = append(opts, "strings: true")
			}
		}
		g.p("\twire.%s: {%s},\n", r.constant, strings.Join(append([]string{"size: " + cSizeof(r.c)}, opts...), ", "))
	}
	g.p("}\n\n")
	g.p("// convertRecords fills b, reset to the known type t, from n records\n")
	g.p("// of C memory at data, es bytes apart (a GFXIP batch carries no data).\n")
	g.p("func convertRecords(b *wire.Batch, t wire.RecordType, data unsafe.Pointer, n int, es uintptr) {\n\tswitch t {\n")
	for _, r := range recs {
		if r.constant == "-" || r.c == "pointer" {
			continue
		}
		g.p("\tcase wire.%s:\n", r.constant)
		f := r.fields[0]
		switch r.kind {
		case "one":
			g.p("\t\tb.%s = %s\n", r.batch, conv(f.goType, "", fmt.Sprintf("*(*C.%s)(data)", r.c)))
		case "each":
			g.p("\t\tb.%s = grow(b.%s, n)\n\t\tfor i := range n {\n", r.batch, r.batch)
			g.p("\t\t\tb.%s[i] = %s(*(*C.%s)(unsafe.Add(data, uintptr(i)*es)))\n\t\t}\n", r.batch, wireType(f.goType), r.c)
		case "array":
			g.p("\t\tb.%s = grow(b.%s, n)\n", r.batch, r.batch)
			pointers := false
			for _, f := range r.fields {
				pointers = pointers || f.width == "str?" || strings.HasPrefix(f.width, "[]")
			}
			loop := fmt.Sprintf("convert%s(&b.%s[i], (*C.%s)(unsafe.Add(data, uintptr(i)*es)))", r.goType, r.batch, r.c)
			if pointers {
				g.p("\t\tfor i := range n {\n\t\t\t%s\n\t\t}\n", loop)
			} else {
				g.p("\t\tinParts(n, func(lo, hi int) {\n\t\t\tfor i := lo; i < hi; i++ {\n\t\t\t\t%s\n\t\t\t}\n\t\t})\n", loop)
			}
		}
	}
	g.p("\t}\n}\n\n")
	for _, r := range recs {
		if r.kind != "array" && r.kind != "elem" {
			continue
		}
		g.p("// convert%s copies one %s from its C struct.\n", r.goType, r.name)
		g.p("func convert%s(v *wire.%s, c *C.%s) {\n", r.goType, r.goType, r.c)
		for _, f := range r.fields {
			v := val("v", f)
			switch {
			case f.c == "-":
			case f.width == "str?":
				s, null := split2(f.goField)
				g.p("\tv.%s, v.%s = cText(c.%s), c.%s == nil\n", s, null, f.c, f.c)
			case f.width[0] == '{':
				g.p("\tconvert%s(&%s, &c.%s)\n", f.rec.goType, v, f.c)
			case f.width[0] == '[':
				arr, count, _ := strings.Cut(f.c, ",")
				g.p("\t{\n\t\tn := 0\n\t\tif c.%s != nil {\n\t\t\tn = int(c.%s)\n\t\t}\n", arr, count)
				g.p("\t\t%s = grow(%s, n)\n\t\tif n > 0 {\n\t\t\tsrc := unsafe.Slice(c.%s, n)\n", v, v, arr)
				g.p("\t\t\tfor i := range %s {\n\t\t\t\tconvert%s(&%s[i], &src[i])\n\t\t\t}\n\t\t}\n\t}\n", v, f.rec.goType, v)
			case strings.HasSuffix(f.goField, "()"):
				g.p("\tv.Set%s(%s)\n", strings.TrimSuffix(f.goField, "()"), conv("uint"+f.width[1:], "", cExpr(f.c)))
			default:
				g.p("\t%s = %s\n", v, conv(wireType(f.goType), "", cExpr(f.c)))
			}
		}
		g.p("}\n\n")
	}
	src, err := format.Source(g.b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("generated cdec code does not parse: %w\n%s", err, g.b.Bytes())
	}
	return src, nil
}
