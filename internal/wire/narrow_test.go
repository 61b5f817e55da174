package wire

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// A value that does not fit its field is an error naming the record, the
// field and the value's byte offset; on 478e79a CU=300 read as 44.
func TestNarrowingChecked(t *testing.T) {
	var hdr bytes.Buffer
	if err := WriteStream(&hdr, &Header{}); err != nil {
		t.Fatal(err)
	}
	h := hdr.Bytes()
	// Hand-made: [1, [[pc.address, pc.code_object_id, time, reserved, cu=300, simd, wave_id, word]]]
	occ := []byte{0x92, 0x01, 0x91, 0x98, 0x00, 0x00, 0x05, 0x00, 0xcd, 0x01, 0x2c, 0x00, 0x00, 0x00}
	cuOff := len(h) + 8
	for _, tc := range []struct {
		name, rec, field string
		batch            []byte
		off              int
	}{
		{"occupancy cu 300", "occupancy", "cu", occ, cuOff},
		// wave with cu=0, simd=256
		{"wave simd 256", "wave", "simd", []byte{0x92, 0x03, 0x91, 0x9d, 0x00, 0xcd, 0x01, 0x00}, len(h) + 5},
		// event type 2^31 (int32)
		{"event type", "event", "type", []byte{0x92, 0x05, 0x91, 0x98, 0x00, 0x00, 0xce, 0x80, 0x00, 0x00, 0x00}, len(h) + 6},
		// realtime shader_clock a uint64 above MaxInt64
		{"realtime shader_clock", "realtime", "shader_clock", []byte{0x92, 0x07, 0x91, 0x93, 0xcf, 0x80, 0, 0, 0, 0, 0, 0, 0}, len(h) + 4},
		// an instruction's category 256
		{"instruction category", "wave instruction", "category", append([]byte{0x92, 0x03, 0x91, 0x9d,
			0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x90, 0x96}, 0xcd, 0x01, 0x00, 0, 0, 0, 0, 0), len(h) + 17},
		// a batch type above uint32
		{"batch type", "batch", "type", []byte{0x92, 0xcf, 1, 0, 0, 0, 0, 0, 0, 0, 0x93, 0, 0, 0xc0}, len(h) + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := append(append([]byte{}, h...), tc.batch...)
			rd := NewReader(bytes.NewReader(data), "x.rec")
			for rd.Scan() {
				if rd.Kind() == KindBatch {
					t.Fatalf("read a batch: %+v", rd.Batch())
				}
			}
			err := rd.Err()
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v, want a FieldError", err)
			}
			if fe.Record != tc.rec || fe.Field != tc.field || fe.Offset != int64(tc.off) {
				t.Fatalf("error names %s.%s at %d, want %s.%s at %d (%v)", fe.Record, fe.Field, fe.Offset,
					tc.rec, tc.field, tc.off, err)
			}
			if !strings.Contains(err.Error(), "does not fit") {
				t.Fatalf("error %q does not say the value does not fit", err)
			}
		})
	}
	// The same record with CU=255 reads, and writes back to its bytes.
	ok := append([]byte{}, occ...)
	ok[8], ok[9], ok[10] = 0xcc, 0xff, 0x00
	ok = append(ok[:10], ok[11:]...)
	rd := NewReader(bytes.NewReader(append(append([]byte{}, h...), ok...)), "x.rec")
	var got []byte
	for rd.Scan() {
		if rd.Kind() == KindBatch {
			if cu := rd.Batch().Occupancy[0].CU; cu != 255 {
				t.Fatalf("cu %d, want 255", cu)
			}
			got = AppendBatch(got, rd.Batch())
		}
	}
	if err := rd.Err(); err != nil || !bytes.Equal(got, ok) {
		t.Fatalf("read back % x (%v), want % x", got, err, ok)
	}
}
