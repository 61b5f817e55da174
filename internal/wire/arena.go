package wire

// An Arena holds copies of batches in a few shared backing arrays, so that
// a caller keeping many batches for a while (a stage of a pipeline) copies
// them without an allocation per batch. Reset empties it for reuse, keeping
// the arrays: the batches copied before must not be used after it. The
// zero value is ready to use.
type Arena struct {
	info    []Info
	occ     []Occupancy
	perf    []PerfEvent
	waves   []Wave
	states  []WaveState
	insts   []Instruction
	events  []Event
	sd      []ShaderData
	rt      []Realtime
	other   []OtherSIMD
	disp    []Dispatch
	markers []Marker
	raw     []byte
	n       int
}

// Clone returns a deep copy of b whose records live in the arena: it shares
// no memory with b. Empty slices become nil in the copy, as with
// Batch.Clone.
func (a *Arena) Clone(b *Batch) Batch {
	c := *b
	c.Info = keep(a, &a.info, b.Info)
	c.Occupancy = keep(a, &a.occ, b.Occupancy)
	c.PerfEvents = keep(a, &a.perf, b.PerfEvents)
	c.Events = keep(a, &a.events, b.Events)
	c.ShaderData = keep(a, &a.sd, b.ShaderData)
	c.Realtime = keep(a, &a.rt, b.Realtime)
	c.OtherSIMD = keep(a, &a.other, b.OtherSIMD)
	c.Dispatches = keep(a, &a.disp, b.Dispatches)
	c.Markers = keep(a, &a.markers, b.Markers)
	c.Raw.Data = keep(a, &a.raw, b.Raw.Data)
	c.Waves = keep(a, &a.waves, b.Waves)
	for i := range c.Waves {
		c.Waves[i].Timeline = keep(a, &a.states, c.Waves[i].Timeline)
		c.Waves[i].Instructions = keep(a, &a.insts, c.Waves[i].Instructions)
	}
	return c
}

// Len returns how many elements (records, instructions, timeline states,
// raw bytes) the arena holds since its last Reset; each is at most a few
// dozen bytes.
func (a *Arena) Len() int { return a.n }

// Reset empties the arena, keeping its arrays for the next copies.
func (a *Arena) Reset() {
	a.info, a.occ, a.perf, a.waves = a.info[:0], a.occ[:0], a.perf[:0], clear0(a.waves)
	a.states, a.insts, a.events, a.sd = a.states[:0], a.insts[:0], a.events[:0], a.sd[:0]
	a.rt, a.other, a.disp, a.markers, a.raw = a.rt[:0], a.other[:0], a.disp[:0], a.markers[:0], a.raw[:0]
	a.n = 0
}

// clear0 empties the waves, dropping their references to the other arrays.
func clear0(w []Wave) []Wave {
	clear(w)
	return w[:0]
}

// keep appends s to the arena's array *store and returns the copy, its
// capacity capped so that an append to it cannot reach the next copy; nil
// when s is empty.
func keep[T any](a *Arena, store *[]T, s []T) []T {
	if len(s) == 0 {
		return nil
	}
	i := len(*store)
	*store = append(*store, s...)
	a.n += len(s)
	return (*store)[i:len(*store):len(*store)]
}
