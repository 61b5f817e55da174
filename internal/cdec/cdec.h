// Declarations shared by the cgo files of package cdec. The layouts are the
// x86-64 ones of sqtt-format.md §4.5, written from the specification; the
// bit-field words are plain uint32_t here and unpacked in Go.
#ifndef ATTKIT_CDEC_H
#define ATTKIT_CDEC_H

#include <stddef.h>
#include <stdint.h>

typedef struct { uint64_t address; uint64_t code_object_id; } cdec_pc;
typedef struct { int64_t time; uint16_t events[4]; uint8_t cu; uint8_t bank; } cdec_perfevent;
typedef struct {
	cdec_pc pc; uint64_t time; uint8_t reserved; uint8_t cu; uint8_t simd; uint8_t wave_id;
	uint32_t word;
} cdec_occupancy;
typedef struct { int32_t state; int32_t duration; } cdec_wave_state;
typedef struct { uint32_t word; int32_t duration; int64_t time; cdec_pc pc; } cdec_inst;
typedef struct {
	uint8_t cu; uint8_t simd; uint8_t wave_id; uint8_t contexts;
	uint8_t dispatcher; uint8_t workgroup_id; uint8_t cluster_id; uint8_t reserved;
	uint64_t size; int64_t begin_time; int64_t end_time;
	uint64_t timeline_size; uint64_t instructions_size;
	cdec_wave_state* timeline; cdec_inst* instructions;
} cdec_wave;
typedef struct { int64_t shader_clock; uint64_t realtime_clock; uint64_t reserved; } cdec_realtime;
typedef struct {
	int64_t time; uint64_t value; uint8_t cu; uint8_t simd; uint8_t wave_id; uint8_t flags;
	uint32_t reserved;
} cdec_shaderdata;
typedef struct { uint64_t size; int64_t time; uint16_t cycles; uint8_t wgp; uint8_t category; } cdec_other_simd;
typedef struct {
	uint64_t size; int64_t time; int32_t kind; uint8_t me_id; uint8_t pipe_id; uint16_t flags;
	uint64_t payload; uint64_t byte_offset;
} cdec_event;
typedef struct {
	uint64_t size; int64_t time; uint8_t me_id; uint8_t pipe_id; uint16_t user_sgprs; int32_t flags;
	uint32_t vgprs; uint32_t sgprs; uint32_t lds_size; uint32_t dim[3];
	uint64_t dispatch_pkt_addr; uint64_t byte_offset; cdec_pc entry_point;
} cdec_dispatch;
typedef struct {
	uint64_t size; cdec_shaderdata shaderdata; cdec_pc kernel_entry; uint64_t code_object_id;
	const char* name; const char* source_location;
	uint32_t marker_id; uint32_t record_kind; uint32_t marker_kind; uint32_t marker_flags;
	uint32_t payload_index; uint32_t payload_count; int32_t delay; uint32_t reserved;
} cdec_marker;
typedef struct { uint64_t size; uint32_t major; uint32_t minor; uint32_t patch; } cdec_version;

// One batch in a chunk of the session's ring (session.h): this header,
// then the records (8-byte aligned), then the wave arrays or marker strings
// the copied records now point to.
typedef struct {
	int32_t type;
	uint32_t pad;
	uint64_t raw;   // GFXIP: the callback's pointer value
	uint64_t count; // the callback's record count
	uint64_t elem;  // the records' stride, chosen by cdec_push; 0 when none were copied
	void* data;     // the copied records; NULL when none (NULL from the library, or an unknown layout)
	uint64_t next;  // bytes from this header to the next one
} cdec_item;

// The library's entry points, NULL when not exported.
typedef struct {
	void* parse_data;
	void* get_info_string;
	void* get_status_string;
	void* create_handle;
	void* destroy_handle;
	void* set_isa_callback;
	void* set_se_data_callback;
	void* set_record_filter;
	void* parse;
	void* codeobj_load;
	void* codeobj_unload;
	void* get_version;
} cdec_fns;

// Go callbacks (callback_cgo.go), made from the parse thread; the userdata
// is a runtime/cgo.Handle.
extern int cdecGoISA(char** text, uint64_t* len, uint64_t* memSize, uint64_t addr, uint64_t coid, uintptr_t ud);
extern uint64_t cdecGoData(uint8_t** buf, uint64_t* size, uintptr_t ud);

#endif
