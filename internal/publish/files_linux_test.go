package publish

import (
	"strconv"
	"testing"
	"time"
)

// TestWriteOut: the queued writer starts the early write-out (a syncfs by
// the helper, this test binary again) every writeOutEvery bytes, one at a
// time, and the helper runs through.
func TestWriteOut(t *testing.T) {
	defer func(n int) { writeOutEvery = n }(writeOutEvery)
	writeOutEvery = 1 << 16
	d := NewFiles(t.TempDir())
	data := make([]byte, 1<<15)
	for i := range 8 {
		if err := d.WriteFileLater(strconv.Itoa(i)+".json", data); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Wait(); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(30 * time.Second); d.writingOut.Load() && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := d.wroteOut.Load(); n < 1 || n > 4 {
		t.Errorf("%d write-outs ran through for 256 KiB written, one every 64 KiB at most: want 1 to 4", n)
	}
	d.Close()
}
