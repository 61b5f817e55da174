package wire

//go:generate go run ./internal/gen

// The record stream's layout (docs/wire.md §1, "Payloads", and the JSON
// projection of §2) is defined once, in layout.txt: its names, widths and
// C struct members. internal/gen makes from it layout_gen.go here
// (recordFields, timelineFields, instructionFields, rawFields, each
// record's appendX, readX and JSON codec, Occupancy's Word and SetWord,
// the switches over a batch's type) and internal/cdec's convert_gen.go;
// layout_gen_test.go checks the committed files are what the table makes,
// and layout_test.go decodes a stream with msgpack/v5 into []any and
// checks every position, and this table, against docs/wire.md.
