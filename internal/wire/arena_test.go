package wire

import (
	"reflect"
	"testing"
)

// TestArena: batches cloned into one arena equal their originals, share no
// memory with them or with each other (overwriting the originals or
// appending to a copy leaves every copy as it was), and an arena Reset and
// filled again gives equal copies.
func TestArena(t *testing.T) {
	var a Arena
	for round := 0; round < 2; round++ {
		bs := sampleBatches()
		fresh := sampleBatches()
		var copies []Batch
		n := 0
		for i := range bs {
			copies = append(copies, a.Clone(&bs[i]))
			n += bs[i].Len()
		}
		if a.Len() < n {
			t.Errorf("round %d: Len %d, want at least the %d records", round, a.Len(), n)
		}
		for i := range bs {
			scribble(reflect.ValueOf(&bs[i]).Elem())
		}
		for i := range copies {
			if len(copies[i].Info) > 0 {
				copies[i].Info = append(copies[i].Info, Info(0x7777))
			}
			for j := range copies[i].Waves {
				if w := &copies[i].Waves[j]; len(w.Instructions) > 0 {
					w.Instructions = append(w.Instructions, Instruction{Duration: -1})
				}
			}
		}
		for i := range copies {
			c := copies[i]
			if len(c.Info) > 0 {
				c.Info = c.Info[:len(c.Info)-1]
			}
			c.Waves = append([]Wave(nil), c.Waves...)
			for j := range c.Waves {
				if w := &c.Waves[j]; len(w.Instructions) > 0 {
					w.Instructions = w.Instructions[:len(w.Instructions)-1]
				}
			}
			if want := fresh[i].Clone(); !reflect.DeepEqual(c, want) {
				t.Errorf("round %d, %v: arena copy changed:\n%+v\n%+v", round, want.Type, c, want)
			}
		}
		a.Reset()
		if a.Len() != 0 {
			t.Errorf("Len %d after Reset", a.Len())
		}
	}
	// Two copies side by side: appending to the first leaves the second.
	b := Batch{Type: TypeWave, Waves: []Wave{{Instructions: []Instruction{{Duration: 1}}}}}
	first, second := a.Clone(&b), a.Clone(&b)
	_ = append(first.Waves[0].Instructions, Instruction{Duration: 2})
	_ = append(first.Waves, Wave{CU: 9})
	if second.Waves[0].Instructions[0].Duration != 1 {
		t.Errorf("an append to a copy overwrote the next copy: %+v", second.Waves[0])
	}
}
