package driver

// A decode runs on two cores while one is spare (Options.Cores): the
// native decoder then splits itself (sqtt.Decoder.Split), its front
// reading the tokens and keeping the waves' state on the caller's
// goroutine, its back stitching the waves and calling the session's emit
// (the architecture check, warnings, the sink: encoding and writing) on
// another. The sink sees the same batches in the same order as on one
// core, so the output is the same, byte for byte; only the time changes.
// AMD's library (internal/cdec) parses on a C thread of its own already
// while Decode converts and emits on the caller's goroutine, and takes no
// spare core.

// splitCore takes a spare core, if any, for a split decode, until release.
func (d *Driver) splitCore() (ok bool, release func()) {
	if d.spare.Add(-1) < 0 {
		d.spare.Add(1)
		return false, func() {}
	}
	return true, func() { d.spare.Add(1) }
}
