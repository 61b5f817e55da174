// Package wire defines the two streams that flow between the attkit tools,
// so that no tool invents its own: the record stream (att-decode writes it,
// att-stats and att-rcv read it) and the index stream (co-index writes it,
// the others read it). docs/wire.md is the byte-level specification; this
// package is its one implementation.
//
// # Record stream
//
// A sequence of msgpack values: a header map (format "attkit-records",
// major version, producer, decoder backend and version, trace path, shader
// engine, run, gfx IP), then one [type, payload] array per decoder callback,
// in callback order. Records are fixed-order arrays; a wave's timeline and
// instructions are flat integer arrays, the cheapest msgpack to read and
// write. Streams concatenate: `cat se0.rec se1.rec` is a valid stream whose
// parts a Reader tells apart by their headers (Reader.Kind, Reader.Part).
// Unknown record types are carried as raw bytes, never dropped.
//
// The Reader is shaped like bufio.Scanner, streams in constant memory
// (it reuses its Batch and the slices in it), rejects a stream that is not
// ours or has an unknown major version with a *VersionError (exit code 3),
// and reports truncated or corrupt input as a *FormatError carrying the byte
// offset (exit code 1).
//
// # JSON projection
//
// JSONWriter (AppendBatch, AppendRecord) gives one JSON object per record, keys sorted
// (so `jq -c` and gojq print the same key order): "type" (the record type's
// lower-case name, or its number when unknown), "se", "run", and the C
// struct members of the newest decoder header, lower-cased; "size" and
// "reserved" members are left out; a PC is {"address","code_object_id"};
// enums are lower-case names ("valu", "stall", "data_lost") or a number when
// the enum does not know the value; occupancy bit-fields are 0 or 1. An
// event's "type" member is called "event_type" (the record's "type" is taken),
// GFXIP's value "gfxip" and RT_FREQUENCY's "frequency". One example per type:
//
//	{"gfxip":9,"run":1,"se":0,"type":"gfxip"}
//	{"byte_offset":96,"event_type":"code_object_load","flags":1,"me_id":1,"payload":2,"pipe_id":0,"run":1,"se":0,"time":4700,"type":"event"}
//	{"byte_offset":96,"dispatch_pkt_addr":140737353990144,"entry_point":{"address":5632,"code_object_id":2},"flags":17,"lds_size":0,"me_id":1,"pipe_id":0,"run":1,"se":0,"sgprs":16,"thread_dim_x":64,"thread_dim_y":1,"thread_dim_z":1,"time":4800,"type":"dispatch","user_sgprs":8,"vgprs":32}
//	{"info":"wave_incomplete","run":1,"se":0,"type":"info"}
//	{"begin_time":5000,"cluster_id":3,"contexts":1,"cu":1,"dispatcher":18,"end_time":9104,"instructions":[{"category":"smem","duration":8,"pc":{"address":5632,"code_object_id":2},"stall":0,"time":5100},{"category":"valu","duration":-3,"pc":{"address":9223372036854775808,"code_object_id":0},"stall":16777215,"time":1099511627776},{"category":14,"duration":0,"pc":{"address":0,"code_object_id":0},"stall":0,"time":0}],"run":1,"se":0,"simd":0,"timeline":[{"duration":100,"type":"idle"},{"duration":3000,"type":"exec"},{"duration":1004,"type":"stall"},{"duration":-1,"type":7}],"type":"wave","wave_id":3,"workgroup_id":5}
//	{"cluster_id":3,"cu":1,"is_ext":1,"me_id":1,"pc":{"address":5632,"code_object_id":2},"pipe_id":2,"run":1,"se":0,"simd":0,"start":1,"time":5000,"type":"occupancy","wave_id":3,"workgroup_id":5}
//	{"realtime_clock":8589934592,"run":1,"se":0,"shader_clock":-5,"type":"realtime"}
//	{"cu":1,"flags":1,"run":1,"se":0,"simd":2,"time":5100,"type":"shaderdata","value":3735928559,"wave_id":3}
//	{"code_object_id":2,"delay":-1,"kernel_entry":{"address":5632,"code_object_id":2},"marker_flags":6,"marker_id":7,"marker_kind":"user_scope","name":"scope \"a\"\né","payload_count":1,"payload_index":0,"record_kind":"payload","run":1,"se":0,"shaderdata":{"cu":0,"flags":1,"simd":0,"time":6,"value":30,"wave_id":0},"source_location":"k.cl:3","type":"marker"}
//	{"category":"vmem","cycles":16,"run":1,"se":0,"time":7000,"type":"inst_other_simd","wgp":2}
//	{"frequency":100000000,"run":1,"se":0,"type":"rt_frequency"}
//	{"bank":1,"cu":1,"events0":1,"events1":2,"events2":3,"events3":65535,"run":1,"se":0,"time":8000,"type":"perfevent"}
//	{"count":2,"data":"AQIDBAUGBwg=","elem_size":4,"run":1,"se":0,"type":12}
//
// A Reader reads the projection back (an input starting with '{'): one
// batch per line, a new part wherever se or run changes, the left-out size
// and reserved members zero.
//
// Package internal/jq runs the tools' --jq programs (gojq) on that
// projection; it drops rejected records with Batch.Keep. It is a package of
// its own so that this one, which every tool imports, does not pull in gojq.
//
// # Index stream
//
// A header map (format "attkit-index"), then tagged arrays: "doc", "object"
// (code objects with id, path, target and load ranges), "row" (instruction
// and label rows: code object, address, size, text as the decoder receives
// it, source chain, line number, counters), "kernel" and the funcmap tables.
// An Index converts losslessly to and from the viewer's code.json
// (ParseCodeJSON, Index.CodeJSON), so a code.json written by rocprofv3 can
// serve as an index too; ReadIndex accepts either.
package wire
