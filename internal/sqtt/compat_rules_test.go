package sqtt

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"unsafe"

	"github.com/attkit/attkit/internal/backend"
	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

// withRules decodes as d does, following r instead of d.Compat's rules.
type withRules struct {
	d Decoder
	r rules
}

func (w *withRules) Decode(ctx context.Context, r io.Reader, p isa.Provider, emit backend.Emit) error {
	return w.d.decode(ctx, r, p, emit, w.r)
}

// TestCompatRules checks compat.go's table. The newest and the 0.1.6
// rules differ in exactly the named rules: every field of rules is a
// rule, clear for Newest and set for Lib016 (and an unknown Compat has
// Newest's). And every rule is needed: with any one of them off, the 0.1.6
// records of some trace whose records are AMD's 0.1.6 library's change, so
// no rule is dead or unpinned. The traces: the cases of TestLibrary016
// (their library records are committed), the RDNA traces of
// TestRDNADifferential016 and the gfx9 traces of
// TestCompat016MatchesLibrary (compared with the library where
// ROCPROF_TRACE_DECODER_LIB names it), and the real traces where the
// corpus is (TestRealTraces016).
func TestCompatRules(t *testing.T) {
	rt := reflect.TypeFor[rules]()
	newest, lib016 := reflect.ValueOf(Newest.rules()), reflect.ValueOf(Lib016.rules())
	for i := range rt.NumField() {
		f := rt.Field(i)
		if f.Type.Kind() != reflect.Bool {
			t.Fatalf("rules.%s is a %v, not a rule (bool)", f.Name, f.Type)
		}
		if newest.Field(i).Bool() || !lib016.Field(i).Bool() {
			t.Errorf("rules.%s: %v for Newest, %v for Lib016; want false, true", f.Name, newest.Field(i).Bool(), lib016.Field(i).Bool())
		}
	}
	if Compat(len(CompatNames)).rules() != (rules{}) {
		t.Errorf("an unknown Compat does not have Newest's rules")
	}

	cases := libCases016()
	for _, tr := range RDNADiffTraces() {
		cases = append(cases, libCase{tr.Name, tr.Data, tr.ISA})
	}
	cases = append(cases, gfx9LibCases(t)...)
	cases = append(cases, realCases(t)...)
	want := make([][]byte, len(cases))
	lib := &Decoder{Compat: Lib016, PoolLimit: -1}
	for i := range rt.NumField() {
		f := rt.Field(i)
		r := Lib016.rules()
		*(*bool)(unsafe.Add(unsafe.Pointer(&r), f.Offset)) = false
		without := &withRules{Decoder{PoolLimit: -1}, r}
		found := ""
		for j, c := range cases {
			if want[j] == nil {
				want[j], _ = caseJSON(lib, c)
			}
			if got, _ := caseJSON(without, c); !bytes.Equal(got, want[j]) {
				found = c.name
				break
			}
		}
		if found == "" {
			t.Errorf("rules.%s off changes the records of no case: the rule is dead or no case pins it", f.Name)
			continue
		}
		t.Logf("rules.%s: pinned by %s", f.Name, found)
	}
}

// realCases are the real traces of ../shared/real as cases, with their
// capture's code.json as ISA; none when the corpus is absent.
func realCases(t *testing.T) []libCase {
	if testutil.RealDir() == "" {
		return nil
	}
	var cs []libCase
	for _, c := range testutil.RealCorpus(t) {
		ix, err := wire.ReadIndexFile(c.CodeJSON)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range c.Traces {
			data, err := os.ReadFile(tr.File)
			if err != nil {
				t.Fatal(err)
			}
			cs = append(cs, libCase{name: c.Name + "/" + filepath.Base(tr.File), data: data, isa: isa.NewTable(ix)})
		}
	}
	return cs
}
