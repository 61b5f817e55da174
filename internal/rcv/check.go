package rcv

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/attkit/attkit/internal/pyjson"
)

// CheckFolder loads the viewer folder dir the way ROCprof Compute Viewer
// does and reports every place where the viewer would drop data or fail,
// silently or not (viewer-loader.md), plus the cross-references it relies
// on: wave and per-trace files listed in filenames.json exist, every line
// number a wave file uses is a LineNumber of code.json, every kernel id of
// an occupancy row or dispatch event is named in "dispatches", and every
// snapshot leaf names a file of the folder. It returns nil for a folder
// the viewer loads completely, else all problems joined.
func CheckFolder(dir string) error {
	c := &checker{dir: dir}
	c.run()
	return errors.Join(c.errs...)
}

type checker struct {
	dir   string
	errs  []error
	lines map[int64]bool // code.json LineNumbers
	maxSE int64
	anyW  bool
	// span is the traced span: the first and last time of a wave entry,
	// an occupancy row or a realtime sample (spanOK once one was seen).
	span   [2]int64
	spanOK bool
}

// see widens the traced span to time t.
func (c *checker) see(t int64) {
	if !c.spanOK {
		c.span, c.spanOK = [2]int64{t, t}, true
	}
	c.span[0], c.span[1] = min(c.span[0], t), max(c.span[1], t)
}

func (c *checker) errorf(file, format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("%s: %s", file, fmt.Sprintf(format, args...)))
}

// load reads and decodes a JSON file of the folder; ok is false (and a
// problem recorded) when it is missing or not JSON.
func (c *checker) load(name string) (any, bool) {
	data, err := os.ReadFile(filepath.Join(c.dir, name))
	if err != nil {
		c.errorf(name, "%v", unwrapPath(err))
		return nil, false
	}
	v, err := pyjson.Decode(data)
	if err != nil {
		c.errorf(name, "not JSON: %v", err)
		return nil, false
	}
	return v, true
}

func isInt(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok || strings.ContainsAny(string(n), ".eE") {
		return 0, false
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		u, err2 := strconv.ParseUint(string(n), 10, 64)
		return int64(u >> 1), err2 == nil // too big for int64, still an integer
	}
	return i, true
}

// isIndex reports whether s is a non-negative decimal integer key.
func isIndex(s string) (int64, bool) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func (c *checker) run() {
	c.lines = map[int64]bool{}
	c.maxSE = -1
	codeRows := c.checkCode()
	fn, ok := c.load("filenames.json")
	if !ok {
		return
	}
	doc, ok := fn.(pyjson.Object)
	if !ok {
		c.errorf("filenames.json", "top level is not an object")
		return
	}
	if v, _ := doc.Get("gfxip"); true {
		if _, ok := isInt(v); !ok {
			c.errorf("filenames.json", "gfxip is not an integer")
		}
	}
	if v, ok := doc.Get("gfxv"); ok {
		if s, ok := v.(string); !ok || s != "vega" && s != "navi" {
			c.errorf("filenames.json", "gfxv is %v, want \"vega\" or \"navi\"", v)
		}
	}
	if v, ok := doc.Get("counter_names"); ok {
		list, ok := v.([]any)
		if !ok {
			c.errorf("filenames.json", "counter_names is not an array")
		}
		for _, e := range list {
			if _, ok := e.(string); !ok {
				c.errorf("filenames.json", "counter_names holds a non-string")
			}
		}
	}
	nWaves := c.checkWaveTree(doc)
	c.checkFileLists(doc, "shaderdata_filenames", c.checkShaderData)
	c.checkFileLists(doc, "other_simd_filenames", c.checkOtherSIMD)
	nOcc := c.checkOccupancy()
	c.checkListedWaves(doc)
	c.checkPerfCounters()
	c.checkRealtime()
	c.checkSnapshots()
	if nWaves == 0 && nOcc == 0 && codeRows == 0 {
		c.errorf(c.dir, "no waves, no occupancy and no code lines: the viewer rejects the folder")
	}
}

// checkCode checks code.json and collects its line numbers.
func (c *checker) checkCode() int {
	v, ok := c.load("code.json")
	if !ok {
		return 0
	}
	doc, ok := v.(pyjson.Object)
	if !ok {
		c.errorf("code.json", "top level is not an object")
		return 0
	}
	code, _ := doc.Get("code")
	rows, ok := code.([]any)
	if !ok {
		c.errorf("code.json", "\"code\" is not an array")
		return 0
	}
	good := 0
	for i, rv := range rows {
		row, ok := rv.([]any)
		if !ok || len(row) < 10 {
			c.errorf("code.json", "row %d: not an array of at least 10 elements", i)
			continue
		}
		if _, ok := row[0].(string); !ok {
			c.errorf("code.json", "row %d: ISA is not a string", i)
			continue
		}
		line, ok := isInt(row[2])
		if !ok || line < 0 {
			c.errorf("code.json", "row %d: LineNumber %v is not a non-negative integer", i, row[2])
			continue
		}
		if _, ok := row[3].(string); !ok && row[3] != nil {
			c.errorf("code.json", "row %d: Source is neither a string nor null", i)
			continue
		}
		bad := false
		for k := 4; k < 10; k++ {
			if _, ok := row[k].(json.Number); !ok {
				c.errorf("code.json", "row %d: column %d is not a number", i, k)
				bad = true
				break
			}
		}
		if bad {
			continue
		}
		c.lines[line] = true
		good++
	}
	return good
}

// checkWaveTree checks wave_filenames and every wave file it lists.
func (c *checker) checkWaveTree(doc pyjson.Object) int {
	v, ok := doc.Get("wave_filenames")
	if !ok || v == nil {
		return 0
	}
	n := 0
	ses, ok := v.(pyjson.Object)
	if !ok {
		c.errorf("filenames.json", "wave_filenames is not an object")
		return 0
	}
	for _, se := range ses {
		seN, ok := isIndex(se.Key)
		simds, ok2 := se.Value.(pyjson.Object)
		if !ok || !ok2 {
			c.errorf("filenames.json", "wave_filenames: bad shader engine entry %q", se.Key)
			continue
		}
		c.maxSE = max(c.maxSE, seN)
		for _, simd := range simds {
			slots, ok2 := simd.Value.(pyjson.Object)
			if _, ok := isIndex(simd.Key); !ok || !ok2 {
				c.errorf("filenames.json", "wave_filenames[%s]: bad SIMD entry %q", se.Key, simd.Key)
				continue
			}
			for _, slot := range slots {
				waves, ok2 := slot.Value.(pyjson.Object)
				if _, ok := isIndex(slot.Key); !ok || !ok2 {
					c.errorf("filenames.json", "wave_filenames[%s][%s]: bad slot entry %q", se.Key, simd.Key, slot.Key)
					continue
				}
				for _, wv := range waves {
					e, ok2 := wv.Value.([]any)
					if _, ok := isIndex(wv.Key); !ok || !ok2 || len(e) < 3 {
						c.errorf("filenames.json", "wave_filenames[%s][%s][%s]: bad wave entry %q", se.Key, simd.Key, slot.Key, wv.Key)
						continue
					}
					name, ok := e[0].(string)
					_, ok1 := e[1].(json.Number)
					_, ok2 = e[2].(json.Number)
					if !ok || !ok1 || !ok2 {
						c.errorf("filenames.json", "wave_filenames[%s][%s][%s][%s]: want [file, begin, end]", se.Key, simd.Key, slot.Key, wv.Key)
						continue
					}
					for _, x := range e[1:3] {
						if t, ok := isInt(x); ok {
							c.see(t)
						}
					}
					if c.checkWave(name) {
						n++
					}
				}
			}
		}
	}
	return n
}

// checkWave checks one wave file; it reports whether the viewer keeps it.
func (c *checker) checkWave(name string) bool {
	if strings.Contains(name, "/") || !strings.HasPrefix(name, "se") || strings.Contains(name[2:], "se") {
		c.errorf(name, "the viewer finds code.json by cutting the path at its last \"se\": a wave file name must start with \"se\", hold no other \"se\" and sit in the folder")
		return false
	}
	v, ok := c.load(name)
	if !ok {
		return false
	}
	doc, ok := v.(pyjson.Object)
	if !ok {
		c.errorf(name, "top level is not an object")
		return false
	}
	wv, _ := doc.Get("wave")
	wave, ok := wv.(pyjson.Object)
	if !ok {
		c.errorf(name, "no \"wave\" object")
		return false
	}
	for _, k := range []string{"id", "begin", "end"} {
		x, _ := wave.Get(k)
		if _, ok := isInt(x); !ok {
			c.errorf(name, "wave.%s is not an integer: the wave is dropped", k)
			return false
		}
	}
	iv, _ := wave.Get("instructions")
	insts, ok := iv.([]any)
	if !ok {
		c.errorf(name, "wave.instructions is not an array: the wave is empty")
		return false
	}
	for i, rv := range insts {
		row, ok := rv.([]any)
		if !ok || len(row) < 5 {
			c.errorf(name, "instruction %d: not an array of 5 numbers: the wave is dropped", i)
			return false
		}
		for k := 0; k < 5; k++ {
			if _, ok := isInt(row[k]); !ok {
				c.errorf(name, "instruction %d: column %d is not an integer: the wave is dropped", i, k)
				return false
			}
		}
		if cat, _ := isInt(row[1]); cat < 0 || cat >= 16 {
			c.errorf(name, "instruction %d: category %d has no token type", i, cat)
		}
		if line, _ := isInt(row[4]); line != -1 && !c.lines[line] {
			c.errorf(name, "instruction %d: line %d is not a LineNumber of code.json", i, line)
		}
	}
	if tv, ok := wave.Get("timeline"); ok {
		states, ok := tv.([]any)
		if !ok {
			c.errorf(name, "wave.timeline is not an array")
		}
		for i, sv := range states {
			s, ok := sv.([]any)
			if !ok || len(s) < 2 {
				c.errorf(name, "timeline %d: not a [state, duration] pair", i)
				return false
			}
			st, ok1 := isInt(s[0])
			_, ok2 := isInt(s[1])
			if !ok1 || !ok2 || st < 0 || st > 4 {
				c.errorf(name, "timeline %d: not a [state 0-4, duration] pair", i)
				return false
			}
		}
	}
	if wc, ok := wave.Get("waitcnt"); ok {
		if _, ok := wc.([]any); !ok {
			c.errorf(name, "wave.waitcnt is not an array")
		}
	}
	c.anyW = true
	return true
}

// checkListedWaves reports wave files in the folder that filenames.json
// does not list (the viewer would never show them).
func (c *checker) checkListedWaves(doc pyjson.Object) {
	listed := map[string]bool{}
	v, _ := doc.Get("wave_filenames")
	ses, _ := v.(pyjson.Object)
	for _, se := range ses {
		simds, _ := se.Value.(pyjson.Object)
		for _, simd := range simds {
			slots, _ := simd.Value.(pyjson.Object)
			for _, slot := range slots {
				waves, _ := slot.Value.(pyjson.Object)
				for _, wv := range waves {
					if e, ok := wv.Value.([]any); ok && len(e) > 0 {
						if s, ok := e[0].(string); ok {
							listed[s] = true
						}
					}
				}
			}
		}
	}
	matches, _ := filepath.Glob(filepath.Join(c.dir, "se*_sm*_sl*_wv*.json"))
	for _, m := range matches {
		if b := filepath.Base(m); !listed[b] {
			c.errorf(b, "wave file not listed in filenames.json")
		}
	}
}

// checkFileLists checks shaderdata_filenames or other_simd_filenames.
func (c *checker) checkFileLists(doc pyjson.Object, key string, check func(name string)) {
	v, ok := doc.Get(key)
	if !ok {
		return
	}
	ses, ok := v.(pyjson.Object)
	if !ok {
		c.errorf("filenames.json", "%s is not an object", key)
		return
	}
	for _, se := range ses {
		list, ok := se.Value.([]any)
		if _, ok2 := isIndex(se.Key); !ok || !ok2 {
			c.errorf("filenames.json", "%s: bad shader engine entry %q", key, se.Key)
			continue
		}
		for i, ev := range list {
			e, ok := ev.([]any)
			if !ok || len(e) < 3 {
				c.errorf("filenames.json", "%s[%s][%d]: fewer than 3 elements: skipped", key, se.Key, i)
				continue
			}
			name, ok := e[0].(string)
			_, ok1 := isInt(e[1])
			_, ok2 := isInt(e[2])
			if !ok || !ok1 || !ok2 {
				c.errorf("filenames.json", "%s[%s][%d]: want [file, begin, end]", key, se.Key, i)
				continue
			}
			check(name)
		}
	}
}

func (c *checker) rows(name string, doc pyjson.Object, key string, min int) {
	v, _ := doc.Get(key)
	rows, ok := v.([]any)
	if !ok {
		c.errorf(name, "%q is not an array", key)
		return
	}
	for i, rv := range rows {
		row, ok := rv.([]any)
		if !ok || len(row) < min {
			c.errorf(name, "%s %d: not an array of %d numbers", key, i, min)
			return
		}
		for k := 0; k < min; k++ {
			if _, ok := isInt(row[k]); !ok {
				c.errorf(name, "%s %d: column %d is not an integer", key, i, k)
				return
			}
		}
	}
}

func (c *checker) object(name string) (pyjson.Object, bool) {
	v, ok := c.load(name)
	if !ok {
		return nil, false
	}
	doc, ok := v.(pyjson.Object)
	if !ok {
		c.errorf(name, "top level is not an object")
	}
	return doc, ok
}

// optionalObject is object for a file the folder may lack: false, and no
// problem, when it does.
func (c *checker) optionalObject(name string) (pyjson.Object, bool) {
	if _, err := os.Stat(filepath.Join(c.dir, name)); err != nil {
		return nil, false
	}
	return c.object(name)
}

func (c *checker) checkShaderData(name string) {
	if doc, ok := c.object(name); ok {
		c.rows(name, doc, "records", 6)
	}
}

func (c *checker) checkOtherSIMD(name string) {
	doc, ok := c.object(name)
	if !ok {
		return
	}
	v, _ := doc.Get("instructions_schema")
	schema, ok := v.([]any)
	if !ok {
		c.errorf(name, "instructions_schema is not an array")
		return
	}
	for _, s := range schema {
		if _, ok := s.(string); !ok {
			c.errorf(name, "instructions_schema holds a non-string")
		}
	}
	c.rows(name, doc, "instructions", len(schema))
}

// checkOccupancy checks occupancy.json; it returns the number of rows.
func (c *checker) checkOccupancy() int {
	const name = "occupancy.json"
	doc, ok := c.optionalObject(name)
	if !ok {
		return 0
	}
	if v, _ := doc.Get("version"); true {
		if s, ok := v.(string); !ok || !strings.HasPrefix(s, "3") {
			c.errorf(name, "version %v does not start with 3", v)
		}
	}
	named := map[int64]bool{}
	if v, ok := doc.Get("dispatches"); ok {
		d, ok := v.(pyjson.Object)
		if !ok {
			c.errorf(name, "dispatches is not an object")
		}
		for _, m := range d {
			id, ok := isIndex(m.Key)
			if _, ok2 := m.Value.(string); !ok || !ok2 {
				c.errorf(name, "dispatches: bad entry %q", m.Key)
				continue
			}
			named[id] = true
		}
	}
	kernel := func(where string, v any) {
		id, ok := isInt(v)
		if !ok || id < 0 {
			c.errorf(name, "%s: kernel id %v is not a non-negative integer", where, v)
		} else if !named[id] {
			c.errorf(name, "%s: kernel id %d has no name in dispatches", where, id)
		}
	}
	n := 0
	for _, m := range doc {
		se, ok := isIndex(m.Key)
		if !ok {
			continue
		}
		c.maxSE = max(c.maxSE, se)
		rows, ok := m.Value.([]any)
		if !ok {
			c.errorf(name, "SE %s: not an array", m.Key)
			continue
		}
		for i, rv := range rows {
			row, ok := rv.([]any)
			if !ok || len(row) < 6 {
				c.errorf(name, "SE %s row %d: fewer than 6 elements: skipped", m.Key, i)
				continue
			}
			width := 6
			if len(row) >= 11 {
				width = 11
			}
			bad := false
			for k := 0; k < width; k++ {
				x, ok := isInt(row[k])
				if !ok {
					c.errorf(name, "SE %s row %d: column %d is not an integer: the rest of the file is abandoned", m.Key, i, k)
					bad = true
					break
				}
				if k >= 1 && k <= 3 && (x < 0 || x > 255) {
					c.errorf(name, "SE %s row %d: column %d = %d does not fit 8 bits", m.Key, i, k, x)
				}
			}
			if bad {
				break
			}
			t, _ := isInt(row[0])
			c.see(t)
			kernel(fmt.Sprintf("SE %s row %d", m.Key, i), row[5])
			n++
		}
	}
	if v, ok := doc.Get("events"); ok {
		ev, ok := v.(pyjson.Object)
		if !ok {
			c.errorf(name, "events is not an object")
		}
		for _, m := range ev {
			list, ok := m.Value.([]any)
			if _, ok2 := isIndex(m.Key); !ok || !ok2 {
				c.errorf(name, "events: bad shader engine entry %q", m.Key)
				continue
			}
			for i, e := range list {
				o, ok := e.(pyjson.Object)
				if !ok {
					c.errorf(name, "events[%s][%d]: not an object: skipped", m.Key, i)
					continue
				}
				kind, _ := o.Get("kind")
				switch kind {
				case "dispatch":
					k, _ := o.Get("kernel_id")
					kernel(fmt.Sprintf("events[%s][%d]", m.Key, i), k)
				case "event":
				default:
					c.errorf(name, "events[%s][%d]: kind %v: skipped", m.Key, i, kind)
				}
			}
		}
	}
	return n
}

func (c *checker) checkPerfCounters() {
	matches, _ := filepath.Glob(filepath.Join(c.dir, "se*_perfcounter.json"))
	for _, m := range matches {
		name := filepath.Base(m)
		se, ok := isIndex(strings.TrimSuffix(strings.TrimPrefix(name, "se"), "_perfcounter.json"))
		if !ok {
			continue
		}
		if se > c.maxSE {
			c.errorf(name, "never read: the viewer reads perf counters of SEs up to the largest SE with waves or occupancy (%d)", c.maxSE)
		}
		if doc, ok := c.object(name); ok {
			c.rows(name, doc, "data", 7)
		}
	}
}

func (c *checker) checkRealtime() {
	const name = "realtime.json"
	doc, ok := c.optionalObject(name)
	if !ok {
		return
	}
	md, _ := doc.Get("metadata")
	mo, ok := md.(pyjson.Object)
	f, _ := mo.Get("frequency")
	if _, ok2 := isInt(f); !ok || !ok2 {
		c.errorf(name, "metadata.frequency is not an integer")
	}
	for _, m := range doc {
		if !strings.HasPrefix(m.Key, "SE") {
			continue
		}
		if _, ok := isIndex(m.Key[2:]); !ok {
			c.errorf(name, "key %q: no shader engine number after SE", m.Key)
		}
		c.rows(name, pyjson.Object{{Key: m.Key, Value: m.Value}}, m.Key, 2)
	}
	c.checkAlignment(doc)
}

// checkAlignment applies the viewer's realtime alignment (viewer-loader.md,
// its realtime.json section) to the samples of doc and reports a shader
// engine it would shift by more than the traced span (waves, occupancy
// and the realtime samples themselves, on the shader clock): one realtime
// clock serves all shader engines, so their offsets stay within the time
// the capture took, and a larger one means the clocks disagree. The
// viewer's Occupancy, Kernel Dispatch and Global views then squeeze all
// data into a sliver of their time axis.
func (c *checker) checkAlignment(doc pyjson.Object) {
	type sample struct {
		sc int64
		rc uint64
	}
	type bounds struct{ lo, hi sample }
	var ses []int64
	per := map[int64]bounds{}
	for _, m := range doc {
		if !strings.HasPrefix(m.Key, "SE") {
			continue
		}
		se, ok := isIndex(m.Key[2:])
		rows, _ := m.Value.([]any)
		if !ok || len(rows) == 0 {
			continue
		}
		var b bounds
		n := 0
		for _, rv := range rows {
			row, _ := rv.([]any)
			if len(row) < 2 {
				break
			}
			sc, ok1 := row[0].(json.Number)
			rc, ok2 := row[1].(json.Number)
			if !ok1 || !ok2 {
				break
			}
			s := sample{}
			var err1, err2 error
			s.sc, err1 = strconv.ParseInt(string(sc), 10, 64)
			s.rc, err2 = strconv.ParseUint(string(rc), 10, 64)
			if err1 != nil || err2 != nil {
				break
			}
			c.see(s.sc)
			if n == 0 {
				b = bounds{s, s}
			}
			if s.sc < b.lo.sc {
				b.lo = s
			}
			if s.sc > b.hi.sc {
				b.hi = s
			}
			n++
		}
		if n == 0 {
			continue
		}
		if _, dup := per[se]; !dup {
			ses = append(ses, se)
		}
		per[se] = b
	}
	if len(per) < 2 {
		return
	}
	// The rate of the realtime clock in ticks per shader clock, from the
	// SEs whose samples rise over a span.
	dsc, drc := 25.0, 1.0
	for _, b := range per {
		if b.hi.sc > b.lo.sc && b.lo.sc > 0 && b.hi.rc > b.lo.rc {
			dsc += float64(b.hi.sc - b.lo.sc)
			drc += float64(b.hi.rc - b.lo.rc)
		}
	}
	k := drc / dsc
	origin := map[int64]float64{}
	anchor := math.Inf(1)
	for se, b := range per {
		origin[se] = float64(b.lo.rc) - float64(b.lo.sc)*k
		anchor = min(anchor, origin[se])
	}
	sort.Slice(ses, func(i, j int) bool { return ses[i] < ses[j] })
	span := c.span[1] - c.span[0]
	for _, se := range ses {
		if off := (origin[se] - anchor) / k; off > float64(span) {
			c.errorf("realtime.json", "SE%d: the viewer's realtime alignment shifts it by %.0f cycles, more than the traced span of %d cycles: the shader engines' realtime clocks disagree", se, off, span)
		}
	}
}

func (c *checker) checkSnapshots() {
	const name = "snapshots.json"
	doc, ok := c.optionalObject(name)
	if !ok {
		return
	}
	var walk func(path string, o pyjson.Object)
	walk = func(path string, o pyjson.Object) {
		for _, m := range o {
			p := path + "/" + m.Key
			switch v := m.Value.(type) {
			case pyjson.Object:
				walk(p, v)
			case string:
				if _, err := os.Stat(filepath.Join(c.dir, v)); err != nil || strings.Contains(v, "/") {
					c.errorf(name, "%s: snapshot file %q is not in the folder", p, v)
				}
			default:
				c.errorf(name, "%s: neither a directory object nor a file name", p)
			}
		}
	}
	walk("", doc)
}
