//go:build cgo

package sqtt_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/cdec"
	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/sqtt"
	"github.com/attkit/attkit/internal/wire"
)

// byType016 collects the records of a decode per record type, in order,
// normalised to what the 0.1.6 library can report (sqtt-format.md 4.6 and
// A.3): no EVENT or DISPATCH records, no wave size, occupancy without
// me/pipe/is_ext/workgroup/cluster. Records are compared per type because
// the order of the end-of-buffer callbacks differs (A.3 item 4), and
// without wave dispatcher, workgroup and cluster (reserved bytes in 0.1.6).
func byType016(t *testing.T, d interface {
	Decode(context.Context, *bytes.Reader, isa.Provider, func(*wire.Batch) error) error
}, data []byte, p isa.Provider) map[wire.RecordType][]string {
	t.Helper()
	out := map[wire.RecordType][]string{}
	err := d.Decode(context.Background(), bytes.NewReader(data), p, func(b *wire.Batch) error {
		switch b.Type {
		case wire.TypeEvent, wire.TypeDispatch:
			return nil
		case wire.TypeGFXIP:
			out[b.Type] = append(out[b.Type], fmt.Sprint(b.GFXIP))
		case wire.TypeRTFrequency:
			out[b.Type] = append(out[b.Type], fmt.Sprint(b.RTFrequency))
		case wire.TypeWave:
			// 0.1.6 emits an RDNA wave at its WAVE_END, the newest source
			// at the next start in its slot or at the end of the buffer
			// (A.3 item 4): compare waves in begin-time order.
			for _, w := range b.Waves {
				w.Size, w.Dispatcher, w.WorkgroupID, w.ClusterID = 0, 0, 0, 0 // reserved in 0.1.6
				out[b.Type] = append(out[b.Type], fmt.Sprintf("%020d %03d %03d %03d %+v", w.BeginTime, w.CU, w.SIMD, w.WaveID, w))
			}
			sort.Strings(out[b.Type])
		case wire.TypeOccupancy:
			for _, o := range b.Occupancy {
				o.MEID, o.PipeID, o.IsExt, o.WorkgroupID, o.ClusterID = 0, 0, false, 0, 0
				out[b.Type] = append(out[b.Type], fmt.Sprintf("%+v", o))
			}
		default:
			v := reflect.ValueOf(*b)
			for i := 0; i < v.NumField(); i++ {
				f := v.Field(i)
				if f.Kind() == reflect.Slice {
					for j := 0; j < f.Len(); j++ {
						out[b.Type] = append(out[b.Type], fmt.Sprintf("%+v", f.Index(j).Interface()))
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type decodeFunc func(context.Context, *bytes.Reader, isa.Provider, func(*wire.Batch) error) error

func (f decodeFunc) Decode(ctx context.Context, r *bytes.Reader, p isa.Provider, emit func(*wire.Batch) error) error {
	return f(ctx, r, p, emit)
}

// TestRDNADifferential016 decodes the RDNA vectors, scenarios and
// generated test-kernel traces with the native decoder under Compat Lib016 and
// with AMD's library named by ROCPROF_TRACE_DECODER_LIB (0.1.6), and
// requires the same records.
func TestRDNADifferential016(t *testing.T) {
	lib := os.Getenv(cdec.EnvLib)
	if lib == "" {
		t.Skip("set " + cdec.EnvLib + " to the path of librocprof-trace-decoder.so to compare with AMD's library")
	}
	d, err := cdec.Load(lib)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if !strings.HasPrefix(d.Version(), "0.1") && d.API() != "v1" {
		t.Skipf("%s is not a 0.1.x library: Compat016 reproduces 0.1.6", d.Version())
	}
	native := decodeFunc(func(ctx context.Context, r *bytes.Reader, p isa.Provider, emit func(*wire.Batch) error) error {
		d := &sqtt.Decoder{Compat: sqtt.Lib016, PoolLimit: -1}
		return d.Decode(ctx, r, p, func(b *wire.Batch) error { return emit(b) })
	})
	amd := decodeFunc(func(ctx context.Context, r *bytes.Reader, p isa.Provider, emit func(*wire.Batch) error) error {
		return d.Decode(ctx, r, p, func(b *wire.Batch) error { return emit(b) })
	})
	type trace struct {
		name string
		data []byte
		p    isa.Provider
	}
	var traces []trace
	for _, tr := range sqtt.RDNADiffTraces() {
		traces = append(traces, trace{tr.Name, tr.Data, tr.ISA})
	}
	for _, g := range []struct{ gen, kernels string }{
		{"gfx10", "gfx1030"}, {"gfx11", "gfx1100"}, {"gfx12", "gfx1201"},
		{"gfx10-plain", "gfx1030"}, {"gfx11-plain", "gfx1100"}, {"gfx12-plain", "gfx1201"},
	} {
		dir := filepath.Join("testdata", "rdna")
		ix, err := wire.ReadIndexFile(filepath.Join(dir, g.kernels+".index"))
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(dir, g.gen+".att"))
		if err != nil {
			t.Fatal(err)
		}
		if h := binary.LittleEndian.Uint64(data); h>>28&0xF == 0 {
			// DPRate 1 instead of 0: the same dp rate (1) for the newest
			// reading, and for 0.1.6, which reads 0 as 0 (W2).
			binary.LittleEndian.PutUint64(data, h|1<<28)
		}
		traces = append(traces, trace{name: "generated " + g.gen, data: data, p: isa.NewTable(ix)})
	}
	for _, tr := range traces {
		got, want := byType016(t, native, tr.data, tr.p), byType016(t, amd, tr.data, tr.p)
		if !reflect.DeepEqual(got, want) {
			var sb strings.Builder
			for typ := wire.RecordType(0); typ < 12; typ++ {
				if !reflect.DeepEqual(got[typ], want[typ]) {
					fmt.Fprintf(&sb, "%v: %d native, %d amd records\n", typ, len(got[typ]), len(want[typ]))
					for i := 0; i < len(got[typ]) && i < len(want[typ]); i++ {
						if a, b := got[typ][i], want[typ][i]; a != b {
							j := 0
							for j < len(a) && j < len(b) && a[j] == b[j] {
								j++
							}
							from := max(j-120, 0)
							fmt.Fprintf(&sb, " record %d from byte %d:\n native ...%s\n    amd ...%s\n", i, from,
								a[from:min(j+200, len(a))], b[from:min(j+200, len(b))])
							break
						}
					}
				}
			}
			t.Errorf("%s: records differ from %s\n%s", tr.name, d.Version(), sb.String())
		}
	}
}
