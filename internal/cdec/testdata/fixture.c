// TEST FIXTURE for package cdec: NOT a trace decoder and never used outside
// tests. It exports the entry points of librocprof-trace-decoder (V1
// parse_data and the V2 handle API) so that the binding's plumbing can be
// tested without ROCm. The "trace" it parses is a text script, one command a
// line, that tells it which callbacks to make:
//
//   gfxip N                 GFXIP callback with N as the pointer value
//   rec T COUNT SEED        COUNT records of known type T filled with pattern bytes
//   recsz T COUNT SEED SZ   as rec, but the records are SZ bytes apart and their
//                           leading u64 size says SZ (a newer, larger struct)
//   raw T COUNT SEED SZ     unknown type T: leading u64 = SZ (0: an implausible 3)
//   null T COUNT            callback with a NULL pointer
//   wavenull N              one wave claiming N states/instructions with NULL arrays
//   isa ADDR COID CAP       ask the ISA callback with a CAP-byte buffer, retry on
//                           OUT_OF_RESOURCES, and report it all as type 201
//   echo                    report the whole current buffer as type 202
//   threadrec T COUNT SEED  as rec, from a new thread
//   parrec T COUNT SEED N   N threads at once, thread i: "isa 4096+4i 0 64",
//                           then "rec T COUNT SEED+i" (N <= 16)
//   fail S                  stop parsing and return status S
//   bench W I               W wave callbacks of I instructions each (benchmarks)
//   huge T                  type T claiming 2^40 records over a 64-byte buffer
//   hugewave                a wave claiming 2^40 instructions over a 64-byte array
//   # ...                   ignored (a NUL byte ends the script)
//
// Build variants: -DFIXTURE_V1_ONLY (no handle API), -DFIXTURE_NO_STATUS_STRING
// (get_status_string missing), -DFIXTURE_V2_NO_PARSE (create_handle without
// parse), -DFIXTURE_NO_DISASM (codeobj_load returns NOT_IMPLEMENTED),
// -DFIXTURE_NO_VERSION (no get_version, as before 0.2.2), -DFIXTURE_NO_PARSE_DATA
// (no parse_data).
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct { uint64_t address, code_object_id; } pc_t;
typedef int (*trace_cb_t)(int type, void* data, uint64_t count, void* ud);
typedef int (*isa_cb_t)(char* text, uint64_t* memory_size, uint64_t* size, pc_t pc, void* ud);
typedef uint64_t (*se_cb_t)(uint8_t** buf, uint64_t* size, void* ud);

enum { OK = 0, ERR = 1, OOR = 2, INVAL = 3, BADDATA = 4, NOTIMPL = 5 };

// Natural struct sizes per record type (sqtt-format.md §4.5); 0 = no array.
static const size_t elem_size[12] = {0, 32, 24, 64, 4, 40, 24, 24, 8, 24, 80, 104};

static uint8_t pattern(uint64_t seed, uint64_t k, uint64_t i) {
	return (uint8_t)(seed * 131 + k * 29 + i * 7 + 1);
}

static void fill(uint8_t* p, size_t n, uint64_t seed, uint64_t k) {
	for (size_t i = 0; i < n; i++) p[i] = pattern(seed, k, i);
}

static void put64(uint8_t* p, uint64_t v) { memcpy(p, &v, 8); }

typedef struct {
	trace_cb_t trace;
	void* trace_ud;
	isa_cb_t isa;
	void* isa_ud;
	int handle; // 0 for V1
	const uint8_t* buf;
	uint64_t buf_size;
} ctx_t;

#define MAX_HANDLES 64
#define MAX_OBJS 16
typedef struct {
	int used;
	isa_cb_t isa;
	void* isa_ud;
	se_cb_t se;
	void* se_ud;
	int nobj;
	struct { uint64_t id, addr, size, elf_size; const uint8_t* elf; } obj[MAX_OBJS];
} handle_t_;
static handle_t_ handles[MAX_HANDLES];
static int next_handle __attribute__((unused)) = 1;
static pthread_mutex_t handles_mu __attribute__((unused)) = PTHREAD_MUTEX_INITIALIZER;

// emit_known builds COUNT records of type T, SZ bytes apart, and calls back.
static int emit_known(ctx_t* c, int t, uint64_t count, uint64_t seed, size_t sz) {
	if (t < 1 || t > 11 || elem_size[t] == 0) return BADDATA;
	if (sz == 0) sz = elem_size[t];
	uint8_t* a = calloc(count ? count : 1, sz);
	// wave arrays and marker strings live until the callback returns
	void** extra = calloc(2 * (count ? count : 1), sizeof(void*));
	char** strs = calloc(2 * (count ? count : 1), sizeof(char*));
	for (uint64_t k = 0; k < count; k++) {
		uint8_t* r = a + k * sz;
		fill(r, sz, seed, k);
		switch (t) {
		case 3: { // wave: timeline and instruction arrays
			uint64_t nt = 3 + k, ni = 5 + k;
			uint8_t* tl = malloc(nt * 8);
			uint8_t* in = malloc(ni * 32);
			for (uint64_t j = 0; j < nt; j++) fill(tl + j * 8, 8, seed + 1, j);
			for (uint64_t j = 0; j < ni; j++) fill(in + j * 32, 32, seed + 2, j);
			put64(r + 32, nt);
			put64(r + 40, ni);
			memcpy(r + 48, &tl, 8);
			memcpy(r + 56, &in, 8);
			extra[2 * k] = tl;
			extra[2 * k + 1] = in;
			break;
		}
		case 11: { // marker: name NULL when k%3==2, location NULL when k%3==1
			char* name = NULL;
			char* loc = NULL;
			if (k % 3 != 2) {
				name = malloc(64);
				snprintf(name, 64, "name-%llu-%llu", (unsigned long long)seed, (unsigned long long)k);
			}
			if (k % 3 != 1) {
				loc = malloc(64);
				snprintf(loc, 64, "file%llu.c:%llu", (unsigned long long)seed, (unsigned long long)k);
			}
			memcpy(r + 56, &name, 8);
			memcpy(r + 64, &loc, 8);
			strs[2 * k] = name;
			strs[2 * k + 1] = loc;
			put64(r, sz);
			break;
		}
		case 5: case 9: case 10:
			put64(r, sz);
			break;
		}
	}
	int s = c->trace(t, a, count, c->trace_ud);
	for (uint64_t k = 0; k < 2 * count; k++) {
		free(extra[k]);
		free(strs[k]);
	}
	free(extra);
	free(strs);
	free(a);
	(void)s; // like the real parser, the callback's status is ignored
	return OK;
}

static int emit_raw(ctx_t* c, int t, uint64_t count, uint64_t seed, uint64_t sz) {
	uint64_t step = sz ? sz : 16;
	uint8_t* a = calloc(count ? count : 1, step);
	for (uint64_t k = 0; k < count; k++) {
		fill(a + k * step, step, seed, k);
		put64(a + k * step, sz ? sz : 3);
	}
	c->trace(t, a, count, c->trace_ud);
	free(a);
	return OK;
}

// builtin_isa answers from the code objects loaded on the handle: it reads
// the stored ELF bytes, which the binding must keep valid.
static int builtin_isa(int h, char* text, uint64_t* mem, uint64_t* size, pc_t pc) {
	handle_t_* hd = &handles[h];
	for (int i = 0; i < hd->nobj; i++) {
		if (hd->obj[i].id != pc.code_object_id) continue;
		char tmp[128];
		const uint8_t* e = hd->obj[i].elf;
		int n = snprintf(tmp, sizeof tmp, "builtin id=%llu addr=%llu elf=%02x%02x%02x%02x size=%llu",
			(unsigned long long)pc.code_object_id, (unsigned long long)pc.address,
			e[0], e[1], e[2], e[3], (unsigned long long)hd->obj[i].elf_size);
		*mem = 4;
		if ((uint64_t)n > *size) { *size = n; return OOR; }
		memcpy(text, tmp, n);
		*size = n;
		return OK;
	}
	return INVAL;
}

static int query_isa(ctx_t* c, uint64_t addr, uint64_t coid, uint64_t cap) {
	pc_t pc = {addr, coid};
	uint64_t mem = 0, size = cap, calls = 1;
	char* text = malloc(cap ? cap : 1);
	int s1, s2;
	if (c->isa) s1 = c->isa(text, &mem, &size, pc, c->isa_ud);
	else s1 = builtin_isa(c->handle, text, &mem, &size, pc);
	s2 = s1;
	if (s1 == OOR) {
		if (size <= cap) { free(text); return ERR; } // protocol violated
		free(text);
		text = malloc(size);
		cap = size;
		calls++;
		if (c->isa) s2 = c->isa(text, &mem, &size, pc, c->isa_ud);
		else s2 = builtin_isa(c->handle, text, &mem, &size, pc);
	}
	uint64_t tl = (s2 == OK) ? size : 0;
	uint64_t esz = 48 + ((tl + 7) & ~(uint64_t)7);
	uint8_t* r = calloc(1, esz);
	put64(r, esz);
	put64(r + 8, (uint64_t)s1);
	put64(r + 16, (uint64_t)s2);
	put64(r + 24, mem);
	put64(r + 32, tl);
	put64(r + 40, calls);
	if (tl) memcpy(r + 48, text, tl);
	c->trace(201, r, 1, c->trace_ud);
	free(r);
	free(text);
	return OK;
}

// echo reports the buffer as 8-byte elements: {8}, {length}, then the bytes.
static int echo(ctx_t* c) {
	uint64_t n = 2 + (c->buf_size + 7) / 8;
	uint8_t* r = calloc(n, 8);
	put64(r, 8);
	put64(r + 8, c->buf_size);
	memcpy(r + 16, c->buf, c->buf_size);
	c->trace(202, r, n, c->trace_ud);
	free(r);
	return OK;
}

typedef struct { ctx_t* c; int t; uint64_t count, seed; } thread_arg;
static void* thread_main(void* p) {
	thread_arg* a = p;
	emit_known(a->c, a->t, a->count, a->seed, 0);
	return NULL;
}

static void* par_main(void* p) {
	thread_arg* a = p;
	for (int r = 0; r < 50; r++) { // many callbacks, so that they overlap
		query_isa(a->c, 4096 + 4 * (a->seed % 16), 0, 64);
		emit_known(a->c, a->t, a->count, a->seed, 0);
	}
	return NULL;
}

static int parrec(ctx_t* c, int t, uint64_t count, uint64_t seed, uint64_t n) {
	pthread_t th[16];
	thread_arg ta[16];
	if (n > 16) return BADDATA;
	for (uint64_t i = 0; i < n; i++) {
		thread_arg x = {c, t, count, seed + i};
		ta[i] = x;
		pthread_create(&th[i], NULL, par_main, &ta[i]);
	}
	for (uint64_t i = 0; i < n; i++) pthread_join(th[i], NULL);
	return OK;
}

static int bench(ctx_t* c, uint64_t waves, uint64_t insts) {
	uint8_t w[64];
	uint8_t* in = calloc(insts ? insts : 1, 32);
	uint8_t tl[16];
	fill(w, 64, 7, 0);
	fill(tl, 16, 8, 0);
	for (uint64_t j = 0; j < insts; j++) fill(in + j * 32, 32, 9, j);
	put64(w + 32, 2);
	put64(w + 40, insts);
	uint8_t* tlp = tl;
	memcpy(w + 48, &tlp, 8);
	memcpy(w + 56, &in, 8);
	for (uint64_t k = 0; k < waves; k++) c->trace(3, w, 1, c->trace_ud);
	free(in);
	return OK;
}

// run executes one buffer's script.
static int run(ctx_t* c, const uint8_t* data, uint64_t size) {
	char* s = malloc(size + 1);
	memcpy(s, data, size);
	s[size] = 0;
	c->buf = data;
	c->buf_size = size;
	int status = OK;
	char* save = NULL;
	for (char* line = strtok_r(s, "\n", &save); line && status == OK; line = strtok_r(NULL, "\n", &save)) {
		char cmd[32];
		unsigned long long a = 0, b = 0, d = 0, e = 0;
		int n = sscanf(line, "%31s %llu %llu %llu %llu", cmd, &a, &b, &d, &e);
		if (n < 1 || cmd[0] == '#') continue;
		if (!strcmp(cmd, "gfxip")) c->trace(0, (void*)(uintptr_t)a, 0, c->trace_ud);
		else if (!strcmp(cmd, "rec")) status = emit_known(c, (int)a, b, d, 0);
		else if (!strcmp(cmd, "recsz")) status = emit_known(c, (int)a, b, d, e);
		else if (!strcmp(cmd, "raw")) status = emit_raw(c, (int)a, b, d, e);
		else if (!strcmp(cmd, "null")) c->trace((int)a, NULL, b, c->trace_ud);
		else if (!strcmp(cmd, "wavenull")) {
			uint8_t w[64];
			fill(w, 64, 5, 0);
			put64(w + 32, a);
			put64(w + 40, a);
			memset(w + 48, 0, 16);
			c->trace(3, w, 1, c->trace_ud);
		} else if (!strcmp(cmd, "huge")) {
			uint8_t small[64];
			fill(small, 64, 3, 0);
			put64(small, 8);
			c->trace((int)a, small, 1ull << 40, c->trace_ud);
		} else if (!strcmp(cmd, "hugewave")) {
			uint8_t w[64], in[64];
			fill(w, 64, 5, 0);
			fill(in, 64, 6, 0);
			uint8_t* inp = in;
			put64(w + 32, 0);
			put64(w + 40, 1ull << 40);
			memset(w + 48, 0, 8);
			memcpy(w + 56, &inp, 8);
			c->trace(3, w, 1, c->trace_ud);
		} else if (!strcmp(cmd, "isa")) status = query_isa(c, a, b, d);
		else if (!strcmp(cmd, "echo")) status = echo(c);
		else if (!strcmp(cmd, "threadrec")) {
			pthread_t th;
			thread_arg ta = {c, (int)a, b, d};
			pthread_create(&th, NULL, thread_main, &ta);
			pthread_join(th, NULL);
		} else if (!strcmp(cmd, "parrec")) status = parrec(c, (int)a, b, d, e);
		else if (!strcmp(cmd, "fail")) status = (int)a;
		else if (!strcmp(cmd, "bench")) status = bench(c, a, b);
		else status = BADDATA;
	}
	free(s);
	return status;
}

__attribute__((unused)) static int run_source(ctx_t* c, se_cb_t se, void* se_ud) {
	for (;;) {
		uint8_t* buf = NULL;
		uint64_t size = 0;
		if (se(&buf, &size, se_ud) == 0 || buf == NULL || size == 0) return OK;
		int s = run(c, buf, size);
		if (s != OK) return s;
	}
}

EXPORT const char* rocprof_trace_decoder_get_info_string(int info) {
	static char buf[8][32];
	static int slot;
	char* b = buf[slot++ & 7];
	snprintf(b, 32, "FIXTURE_INFO_%d", info);
	return b;
}

#ifndef FIXTURE_NO_STATUS_STRING
EXPORT const char* rocprof_trace_decoder_get_status_string(int status) {
	static const char* names[] = {"FIXTURE_SUCCESS", "FIXTURE_ERROR", "FIXTURE_OUT_OF_RESOURCES",
		"FIXTURE_INVALID_ARGUMENT", "FIXTURE_INVALID_SHADER_DATA", "FIXTURE_NOT_IMPLEMENTED"};
	if (status >= 0 && status < 6) return names[status];
	return "FIXTURE_STATUS_UNKNOWN";
}
#endif

#ifndef FIXTURE_NO_PARSE_DATA
EXPORT int rocprof_trace_decoder_parse_data(se_cb_t se, trace_cb_t trace, isa_cb_t isa, void* ud) {
	if (!se || !trace || !isa) return INVAL;
	ctx_t c = {trace, ud, isa, ud, 0, NULL, 0};
	return run_source(&c, se, ud);
}
#endif

#ifndef FIXTURE_V1_ONLY
typedef struct { uint64_t handle; } handle_t;

static handle_t_* lookup_handle(handle_t h) {
	if (h.handle == 0 || h.handle >= MAX_HANDLES || !handles[h.handle].used) return NULL;
	return &handles[h.handle];
}

EXPORT int rocprof_trace_decoder_create_handle(handle_t* out) {
	if (!out) return INVAL;
	pthread_mutex_lock(&handles_mu);
	if (next_handle >= MAX_HANDLES) {
		pthread_mutex_unlock(&handles_mu);
		return OOR;
	}
	out->handle = next_handle;
	memset(&handles[next_handle], 0, sizeof handles[0]);
	handles[next_handle++].used = 1;
	pthread_mutex_unlock(&handles_mu);
	return OK;
}

EXPORT int rocprof_trace_decoder_destroy_handle(handle_t h) {
	handle_t_* hd = lookup_handle(h);
	if (!hd) return INVAL;
	hd->used = 0;
	return OK;
}

EXPORT int rocprof_trace_decoder_set_isa_callback(handle_t h, isa_cb_t cb, void* ud) {
	handle_t_* hd = lookup_handle(h);
	if (!hd) return INVAL;
	hd->isa = cb;
	hd->isa_ud = ud;
	return OK;
}

EXPORT int rocprof_trace_decoder_set_se_data_callback(handle_t h, se_cb_t cb, void* ud) {
	handle_t_* hd = lookup_handle(h);
	if (!hd) return INVAL;
	hd->se = cb;
	hd->se_ud = ud;
	return OK;
}

EXPORT int rocprof_trace_decoder_codeobj_load(handle_t h, uint64_t id, uint64_t addr, uint64_t size, const void* elf, uint64_t elf_size) {
	handle_t_* hd = lookup_handle(h);
	if (!hd) return INVAL;
#ifdef FIXTURE_NO_DISASM
	(void)id; (void)addr; (void)size; (void)elf; (void)elf_size;
	return NOTIMPL;
#else
	if (!elf || elf_size < 4 || memcmp(elf, "\x7f" "ELF", 4) != 0) return ERR;
	for (int i = 0; i < hd->nobj; i++) {
		if (hd->obj[i].id == id) {
			hd->obj[i].addr = addr; hd->obj[i].size = size;
			hd->obj[i].elf = elf; hd->obj[i].elf_size = elf_size;
			return OK;
		}
	}
	if (hd->nobj == MAX_OBJS) return OOR;
	hd->obj[hd->nobj].id = id; hd->obj[hd->nobj].addr = addr; hd->obj[hd->nobj].size = size;
	hd->obj[hd->nobj].elf = elf; hd->obj[hd->nobj].elf_size = elf_size;
	hd->nobj++;
	return OK;
#endif
}

EXPORT int rocprof_trace_decoder_codeobj_unload(handle_t h, uint64_t id) {
	handle_t_* hd = lookup_handle(h);
	if (!hd) return INVAL;
#ifdef FIXTURE_NO_DISASM
	(void)id;
	return NOTIMPL;
#else
	for (int i = 0; i < hd->nobj; i++) {
		if (hd->obj[i].id == id) {
			hd->obj[i] = hd->obj[--hd->nobj];
			return OK;
		}
	}
	return ERR;
#endif
}

#ifndef FIXTURE_V2_NO_PARSE
EXPORT int rocprof_trace_decoder_parse(handle_t h, const void* data, uint64_t size, trace_cb_t trace, void* ud) {
	handle_t_* hd = lookup_handle(h);
	if (!hd || !trace) return INVAL;
#ifdef FIXTURE_NO_DISASM
	if (!hd->isa) return NOTIMPL;
#else
	if (!hd->isa && hd->nobj == 0) return NOTIMPL;
#endif
	ctx_t c = {trace, ud, hd->isa, hd->isa_ud, (int)h.handle, NULL, 0};
	if (hd->se) return run_source(&c, hd->se, hd->se_ud);
	if (size == 0) return OK;
	if (!data) return INVAL;
	return run(&c, data, size);
}
#endif

#ifndef FIXTURE_NO_VERSION
typedef struct { uint64_t size; uint32_t major, minor, patch; } version_t;
EXPORT int rocprof_trace_decoder_get_version(version_t* v) {
	if (!v) return INVAL;
	v->size = sizeof *v;
	v->major = 0;
	v->minor = 2;
	v->patch = 99;
	return OK;
}
#endif
#endif
