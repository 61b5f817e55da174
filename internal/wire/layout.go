package wire

//go:generate go run ./internal/gen

// The record stream's layout (docs/wire.md §1, "Payloads") is defined once,
// in layout.txt: its names and widths. internal/gen makes layout_gen.go from
// it (recordFields, timelineFields, instructionFields, rawFields and each
// record's appendX and readX); layout_gen_test.go checks the committed file
// is what the table makes, and layout_test.go decodes a stream with
// msgpack/v5 into []any and checks every position, and this table, against
// docs/wire.md.

// Array lengths of the layout, as the writer and reader use them.
var (
	nTimeline    = len(timelineFields)
	nInstruction = len(instructionFields)
	nRaw         = len(rawFields)
)
