// The C side of one decode (a cdec_session), included only by cdec_cgo.go.
//
// The library's parse call runs on a C thread of its own (cdec_parse_main), never
// on a Go thread: its trace callback copies each batch, with the wave
// arrays and marker strings it points to, into a ring of chunks, and the Go
// side converts and emits the batches of a full chunk while the library
// goes on decoding. So the library thread never enters the Go runtime for
// a record batch, and record conversion and output run in parallel with
// decoding. The ring is bounded (CDEC_CHUNKS chunks of CDEC_CHUNK bytes, or
// one batch if larger): a slow consumer blocks the library, memory stays
// constant. Go is called from the library thread only for an ISA answer the
// cache does not have (once per PC) and for the data callback.
//
// Go tells this file what it knows of the record layouts (cdec_layout) so
// that the sizes, strides and pointer fields are defined once, in Go.
#ifndef ATTKIT_CDEC_SESSION_H
#define ATTKIT_CDEC_SESSION_H

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "cdec.h"

enum { CDEC_OK = 0, CDEC_ERROR = 1, CDEC_OOR = 2, CDEC_INVAL = 3 };

// What Go knows of record type t (0 <= t < CDEC_TYPES): the struct size (0
// for an unknown type), whether the struct starts with its own u64 size
// (a newer library's larger struct is then read at that stride), and which
// pointers the records hold; and the bounds on counts and sizes. It is one
// cache line, read on every callback.
enum { CDEC_FLAT = 0, CDEC_WAVES = 1, CDEC_MARKERS = 2 };
enum { CDEC_KIND = 3, CDEC_SELF_SIZED = 4 }; // bits of cdec_layout.flags
#define CDEC_TYPES 16
typedef struct {
	uint16_t size[CDEC_TYPES];
	uint8_t flags[CDEC_TYPES];
	uint64_t max_bytes;
	uint32_t max_records;
	uint16_t min_elem, max_elem;
} __attribute__((aligned(64))) cdec_layout;


// Why a session failed, first cause only.
enum {
	CDEC_FAIL_NONE = 0,
	CDEC_FAIL_GO = 1,       // Go recorded the error (ISA or data callback, consumer)
	CDEC_FAIL_COUNT = 2,    // a batch claimed fail_a records
	CDEC_FAIL_BYTES = 3,    // fail_a records of fail_b bytes
	CDEC_FAIL_WAVE = 4,     // a wave claimed fail_a states and fail_b instructions
	CDEC_FAIL_NOMEM = 5,    // no C memory for fail_a bytes
	CDEC_FAIL_THREAD = 6,   // the parse thread could not start
};

typedef struct {
	uint8_t* buf;
	uint64_t cap, len;
	int full; // owned by the consumer
} cdec_chunk;

#define CDEC_CHUNKS 4
#define CDEC_CHUNK (1u << 20)

typedef struct {
	uint64_t addr, coid;
	char* text;      // malloc'ed by Go, NULL when empty
	uint64_t len, mem;
	int status;      // CDEC_OK or CDEC_INVAL (a miss)
	int used;
	uint64_t pad[2]; // one entry, one cache line
} cdec_isa_entry;

// The parse call the thread makes.
enum { CDEC_PARSE_V1 = 1, CDEC_PARSE_V2 = 2 };

// The session. What the library's callbacks touch every time (the
// producer's state and the layout) is packed into two cache lines of their
// own: between two callbacks the library runs through megabytes of its own
// data, and each further line the callbacks touch was a cache miss that
// measurably slowed the library thread. The ring's handover state, which
// the Go thread touches too, is on other lines.
typedef struct {
	struct {
		int32_t lock;         // producers (library threads), ISA cache: cdec_lock
		int32_t failed;       // a CDEC_FAIL_* cause, set once (atomically)
		uint8_t* buf;         // the chunk being filled: ring[w]
		uint64_t cap, len;
		cdec_isa_entry* tab;  // ISA cache: open addressing, power-of-two size
		uint64_t tabcap, tabn;
		int32_t w;
	} __attribute__((aligned(64))) p;
	cdec_layout layout;

	uintptr_t handle;       // runtime/cgo.Handle of the Go session
	uint64_t fail_type, fail_a, fail_b;
	uint64_t max_text;      // bound on a marker string

	pthread_mutex_t mu __attribute__((aligned(64))); // ring handover
	pthread_cond_t cond;
	cdec_chunk ring[CDEC_CHUNKS]; // a chunk is the consumer's while full
	int r;                  // chunk being consumed
	int done, stop;         // parse returned; consumer gone

	// The parse call, made by the thread.
	int mode;
	void* fn;
	uint64_t h;
	const void* data;
	uint64_t size;
	int status;
	pthread_t thread;
	int started;

	// C memory the library reads (the trace buffers), freed by the parse
	// thread as soon as the parse returns, or with the session.
	void** owned;
	size_t nowned, capowned;
} cdec_session;

// cdec_lock and cdec_unlock serialize the library's callbacks, in case it
// makes them from several threads. The lock word is on the producer's
// line, so taking it costs no extra cache miss; a waiting thread spins
// briefly, then yields (the holder may be asking Go for an ISA answer).
static void cdec_lock(int32_t* l) {
	int spins = 0;
	while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(l, __ATOMIC_RELAXED)) {
			if (++spins > 64) sched_yield();
#if defined(__x86_64__) || defined(__i386__)
			else __builtin_ia32_pause();
#endif
		}
	}
}
static void cdec_unlock(int32_t* l) { __atomic_store_n(l, 0, __ATOMIC_RELEASE); }

// cdec_prefault maps the pages of a large buffer malloc has just mapped
// (a trace, or a ring chunk for a large batch) before it is filled, in one
// call instead of one page fault per 4 KiB page: on a VM where a fault
// costs microseconds (page-table isolation, no PCID) that is most of the
// time a trace's read takes. Not transparent huge pages, which this used to
// ask for: where the kernel compacts memory for them on demand (THP defrag
// "madvise", the default), a fresh process waited 30-90 ms for them on a
// machine whose memory the page cache filled (2 December 2026). Advice
// only: a kernel without MADV_POPULATE_WRITE (before 5.14) faults the pages
// as they are written, as before.
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
static void cdec_prefault(void* p, size_t n) {
	const uintptr_t page = 4096;
	uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1), e = ((uintptr_t)p + n) & ~(page - 1);
	if (e > a) madvise((void*)a, e - a, MADV_POPULATE_WRITE);
}

// cdec_own hands p to the session; 0 when out of memory (p is not taken).
static int cdec_own(cdec_session* s, void* p) {
	if (s->nowned == s->capowned) {
		size_t cap = s->capowned ? 2 * s->capowned : 8;
		void** a = realloc(s->owned, cap * sizeof *a);
		if (a == NULL) return 0;
		s->owned = a;
		s->capowned = cap;
	}
	s->owned[s->nowned++] = p;
	return 1;
}

static void cdec_free_owned(cdec_session* s) {
	for (size_t i = 0; i < s->nowned; i++) free(s->owned[i]);
	free(s->owned);
	s->owned = NULL;
	s->nowned = s->capowned = 0;
}

static cdec_session* cdec_session_new(uintptr_t handle) {
	void* m = NULL;
	if (posix_memalign(&m, 64, sizeof(cdec_session)) != 0) return NULL;
	cdec_session* s = m;
	memset(s, 0, sizeof *s);
	s->handle = handle;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cond, NULL);
	return s;
}

static void cdec_session_free(cdec_session* s) {
	if (s == NULL) return;
	for (size_t i = 0; i < s->p.tabcap; i++) free(s->p.tab[i].text);
	free(s->p.tab);
	for (int i = 0; i < CDEC_CHUNKS; i++) free(s->ring[i].buf);
	cdec_free_owned(s);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cond);
	free(s);
}

static uintptr_t cdec_session_ud(cdec_session* s) { return (uintptr_t)s; }
static cdec_layout* cdec_session_layout(cdec_session* s) { return &s->layout; }
static void cdec_set_max_text(cdec_session* s, uint64_t n) { s->max_text = n; }

// cdec_fail records the first cause; 1 if this call set it.
static int cdec_fail(cdec_session* s, int why, uint64_t type, uint64_t a, uint64_t b) {
	int32_t zero = 0;
	if (!__atomic_compare_exchange_n(&s->p.failed, &zero, why, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return 0;
	s->fail_type = type;
	s->fail_a = a;
	s->fail_b = b;
	return 1;
}

static int cdec_failed(cdec_session* s) { return __atomic_load_n(&s->p.failed, __ATOMIC_ACQUIRE); }

// cdec_fail_go records that Go failed the session (its error is in Go).
static void cdec_fail_go(cdec_session* s) { cdec_fail(s, CDEC_FAIL_GO, 0, 0, 0); }

// cdec_fail_info reads the numbers of the first failure.
static void cdec_fail_info(cdec_session* s, uint64_t* type, uint64_t* a, uint64_t* b) {
	*type = s->fail_type;
	*a = s->fail_a;
	*b = s->fail_b;
}

// cdec_stop tells the producer that nobody consumes any more: it stops
// waiting for room and refuses further batches.
static void cdec_stop(cdec_session* s) {
	pthread_mutex_lock(&s->mu);
	s->stop = 1;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->mu);
}

// --- the ring, producer side (library thread, lock held) ---

// cdec_seal hands the chunk being filled to the consumer and waits for the
// next one to be free; 0 when the consumer stopped.
static int cdec_seal(cdec_session* s) {
	pthread_mutex_lock(&s->mu);
	cdec_chunk* c = &s->ring[s->p.w];
	c->len = s->p.len;
	c->full = 1;
	s->p.w = (s->p.w + 1) % CDEC_CHUNKS;
	pthread_cond_broadcast(&s->cond);
	while (s->ring[s->p.w].full && !s->stop) pthread_cond_wait(&s->cond, &s->mu);
	int ok = !s->stop;
	s->p.buf = s->ring[s->p.w].buf;
	s->p.cap = s->ring[s->p.w].cap;
	s->p.len = 0;
	pthread_mutex_unlock(&s->mu);
	return ok;
}

// cdec_reserve returns n bytes (a multiple of 8) at the end of the chunk
// being filled, sealing it first when they do not fit. NULL when the
// consumer stopped or memory ran out (the session has failed then).
static uint8_t* cdec_reserve(cdec_session* s, uint64_t n) {
	if (s->p.buf != NULL && s->p.cap - s->p.len >= n) {
		uint8_t* p = s->p.buf + s->p.len;
		s->p.len += n;
		return p;
	}
	if (s->p.len > 0 && !cdec_seal(s)) {
		cdec_fail_go(s); // the consumer stopped: its error is in Go
		return NULL;
	}
	if (s->p.buf == NULL || s->p.cap < n) {
		// An empty chunk, not full, is the producer's: no lock needed.
		cdec_chunk* c = &s->ring[s->p.w];
		uint64_t cap = n > CDEC_CHUNK ? n : CDEC_CHUNK;
		free(c->buf);
		c->buf = malloc(cap);
		c->cap = c->buf ? cap : 0;
		if (c->buf != NULL && cap > CDEC_CHUNK) cdec_prefault(c->buf, cap);
		s->p.buf = c->buf;
		s->p.cap = c->cap;
		if (c->buf == NULL) {
			cdec_fail(s, CDEC_FAIL_NOMEM, 0, cap, 0);
			return NULL;
		}
	}
	s->p.len = n;
	return s->p.buf;
}

static uint64_t cdec_round8(uint64_t n) { return (n + 7) & ~(uint64_t)7; }

static size_t cdec_textlen(const char* p, uint64_t max) { return p == NULL ? 0 : strnlen(p, max) + 1; }

// cdec_push copies one trace callback into the ring. The checks are the
// ones Go made when it read the library's memory itself: counts and sizes
// are bounded before anything is read.
static int cdec_push(cdec_session* s, int type, void* data, uint64_t count) {
	const cdec_layout* L = &s->layout;
	cdec_item h;
	memset(&h, 0, sizeof h);
	h.type = type;
	h.count = count;
	if (type == 0) {
		h.raw = (uint64_t)(uintptr_t)data;
		data = NULL;
	}
	uint64_t es = 0, payload = 0;
	int kind = CDEC_FLAT;
	if (data != NULL && count > 0) {
		if (count > L->max_records) {
			cdec_fail(s, CDEC_FAIL_COUNT, (uint64_t)(int64_t)type, count, 0);
			return CDEC_ERROR;
		}
		int known = type > 0 && type < CDEC_TYPES && L->size[type] != 0;
		if (known) {
			es = L->size[type];
			kind = L->flags[type] & CDEC_KIND;
			if (L->flags[type] & CDEC_SELF_SIZED) {
				uint64_t sz;
				memcpy(&sz, data, 8);
				if (sz > es && sz <= L->max_elem && sz % 8 == 0) es = sz;
			}
			if (es * count > L->max_bytes) {
				cdec_fail(s, CDEC_FAIL_BYTES, (uint64_t)(int64_t)type, count, es);
				return CDEC_ERROR;
			}
		} else {
			// An unknown type: its leading u64 is its struct size, when
			// plausible; otherwise only the count is carried.
			uint64_t sz;
			memcpy(&sz, data, 8);
			if (sz >= L->min_elem && sz <= L->max_elem && sz % 8 == 0 && sz * count <= L->max_bytes) es = sz;
		}
		payload = cdec_round8(es * count);
		if (kind == CDEC_WAVES) {
			for (uint64_t i = 0; i < count; i++) {
				const cdec_wave* w = (const cdec_wave*)((const uint8_t*)data + i * es);
				uint64_t nt = w->timeline ? w->timeline_size : 0, ni = w->instructions ? w->instructions_size : 0;
				if (nt > L->max_records || ni > L->max_records) {
					cdec_fail(s, CDEC_FAIL_WAVE, (uint64_t)type, nt, ni);
					return CDEC_ERROR;
				}
				payload += nt * sizeof(cdec_wave_state) + ni * sizeof(cdec_inst);
			}
		} else if (kind == CDEC_MARKERS) {
			for (uint64_t i = 0; i < count; i++) {
				const cdec_marker* m = (const cdec_marker*)((const uint8_t*)data + i * es);
				payload += cdec_round8(cdec_textlen(m->name, s->max_text)) + cdec_round8(cdec_textlen(m->source_location, s->max_text));
			}
		}
	}
	uint8_t* p = cdec_reserve(s, sizeof h + payload);
	if (p == NULL) return CDEC_ERROR;
	h.next = sizeof h + payload;
	if (es == 0) {
		memcpy(p, &h, sizeof h);
		return CDEC_OK;
	}
	uint8_t* recs = p + sizeof h;
	h.data = recs;
	h.elem = es;
	memcpy(p, &h, sizeof h);
	memcpy(recs, data, es * count);
	uint8_t* tail = recs + cdec_round8(es * count);
	if (kind == CDEC_WAVES) {
		for (uint64_t i = 0; i < count; i++) {
			cdec_wave* w = (cdec_wave*)(recs + i * es);
			if (w->timeline) {
				size_t n = w->timeline_size * sizeof(cdec_wave_state);
				memcpy(tail, w->timeline, n);
				w->timeline = (cdec_wave_state*)tail;
				tail += n;
			}
			if (w->instructions) {
				size_t n = w->instructions_size * sizeof(cdec_inst);
				memcpy(tail, w->instructions, n);
				w->instructions = (cdec_inst*)tail;
				tail += n;
			}
		}
	} else if (kind == CDEC_MARKERS) {
		for (uint64_t i = 0; i < count; i++) {
			cdec_marker* m = (cdec_marker*)(recs + i * es);
			const char** f[2] = {&m->name, &m->source_location};
			for (int j = 0; j < 2; j++) {
				if (*f[j] == NULL) continue;
				size_t n = cdec_textlen(*f[j], s->max_text);
				memcpy(tail, *f[j], n - 1);
				tail[n - 1] = 0;
				*f[j] = (const char*)tail;
				tail += cdec_round8(n);
			}
		}
	}
	return CDEC_OK;
}

// --- the ring, consumer side (Go) ---

// cdec_next releases the chunk the consumer had (when release is set) and
// waits for the next full one: 1 with its bytes, 0 once the parse has
// returned and every chunk was consumed, or when stopped. *done tells
// whether the parse had returned.
static int cdec_next(cdec_session* s, int release, uint8_t** buf, uint64_t* len, int* done) {
	pthread_mutex_lock(&s->mu);
	if (release) {
		s->ring[s->r].full = 0;
		s->r = (s->r + 1) % CDEC_CHUNKS;
		pthread_cond_broadcast(&s->cond);
	}
	while (!s->ring[s->r].full && !s->done && !s->stop) pthread_cond_wait(&s->cond, &s->mu);
	int ok = s->ring[s->r].full && !s->stop;
	*done = s->done;
	if (ok) {
		*buf = s->ring[s->r].buf;
		*len = s->ring[s->r].len;
	}
	pthread_mutex_unlock(&s->mu);
	return ok;
}

// --- the library's callbacks ---

static int cdec_trace_tramp(int type, void* data, uint64_t count, void* ud) {
	cdec_session* s = ud;
	cdec_lock(&s->p.lock);
	int st = cdec_failed(s) ? CDEC_ERROR : cdec_push(s, type, data, count);
	cdec_unlock(&s->p.lock);
	return st;
}

static size_t cdec_isa_slot(cdec_isa_entry* tab, size_t cap, uint64_t addr, uint64_t coid) {
	uint64_t h = (addr * 0x9E3779B97F4A7C15ull) ^ (coid * 0xC2B2AE3D27D4EB4Full);
	size_t i = (size_t)(h ^ (h >> 29)) & (cap - 1);
	while (tab[i].used && (tab[i].addr != addr || tab[i].coid != coid)) i = (i + 1) & (cap - 1);
	return i;
}

// cdec_isa_grow keeps the table at most half full; 0 when out of memory.
static int cdec_isa_grow(cdec_session* s) {
	if (s->p.tabcap != 0 && 2 * (s->p.tabn + 1) <= s->p.tabcap) return 1;
	size_t cap = s->p.tabcap ? 2 * s->p.tabcap : 256;
	void* m = NULL;
	if (posix_memalign(&m, 64, cap * sizeof(cdec_isa_entry)) != 0) return 0;
	cdec_isa_entry* tab = m;
	memset(tab, 0, cap * sizeof *tab);
	for (size_t i = 0; i < s->p.tabcap; i++) {
		if (s->p.tab[i].used) tab[cdec_isa_slot(tab, cap, s->p.tab[i].addr, s->p.tab[i].coid)] = s->p.tab[i];
	}
	free(s->p.tab);
	s->p.tab = tab;
	s->p.tabcap = cap;
	return 1;
}

// The ISA answer cache: the 0.1.x library asks for the same PC about once
// per wave, and a call into Go costs far more than a hash lookup, so Go is
// asked once per unique (address, code object id) per parse, misses
// included. The cache holds the provider's answer (status, text, memory
// size); the buffer-size protocol towards the library (OUT_OF_RESOURCES,
// then a retry) is played from it on every call, exactly as the Go
// callback would.
static int cdec_isa_tramp(char* text, uint64_t* memory_size, uint64_t* size, cdec_pc pc, void* ud) {
	cdec_session* s = ud;
	if (size == NULL || memory_size == NULL) return CDEC_ERROR;
	cdec_lock(&s->p.lock);
	if (cdec_failed(s)) {
		cdec_unlock(&s->p.lock);
		return CDEC_ERROR;
	}
	size_t i = s->p.tabcap ? cdec_isa_slot(s->p.tab, s->p.tabcap, pc.address, pc.code_object_id) : 0;
	if (s->p.tabcap == 0 || !s->p.tab[i].used) {
		char* t = NULL;
		uint64_t len = 0, mem = 0;
		int st = cdecGoISA(&t, &len, &mem, pc.address, pc.code_object_id, s->handle);
		if (st != CDEC_OK && st != CDEC_INVAL) {
			free(t);
			cdec_unlock(&s->p.lock);
			return st;
		}
		if (!cdec_isa_grow(s)) {
			free(t);
			cdec_fail(s, CDEC_FAIL_NOMEM, 0, 0, 0);
			cdec_unlock(&s->p.lock);
			return CDEC_ERROR;
		}
		i = cdec_isa_slot(s->p.tab, s->p.tabcap, pc.address, pc.code_object_id);
		cdec_isa_entry e = {pc.address, pc.code_object_id, t, len, mem, st, 1, {0, 0}};
		s->p.tab[i] = e;
		s->p.tabn++;
	}
	cdec_isa_entry e = s->p.tab[i]; // e.text lives until the session is freed
	cdec_unlock(&s->p.lock);
	if (e.status != CDEC_OK) return e.status;
	uint64_t capacity = *size;
	*size = e.len;
	*memory_size = e.mem;
	if (e.len > capacity || (text == NULL && e.len > 0)) return CDEC_OOR;
	if (e.len > 0) memcpy(text, e.text, e.len);
	return CDEC_OK;
}

static uint64_t cdec_data_tramp(uint8_t** buffer, uint64_t* size, void* ud) {
	return cdecGoData(buffer, size, ((cdec_session*)ud)->handle);
}

typedef int (*trace_cb_t)(int, void*, uint64_t, void*);
typedef int (*isa_cb_t)(char*, uint64_t*, uint64_t*, cdec_pc, void*);
typedef uint64_t (*data_cb_t)(uint8_t**, uint64_t*, void*);
typedef struct { uint64_t handle; } cdec_handle;

// --- the parse thread ---

static void* cdec_parse_main(void* arg) {
	cdec_session* s = arg;
	int st;
	if (s->mode == CDEC_PARSE_V1) {
		st = ((int (*)(data_cb_t, trace_cb_t, isa_cb_t, void*))s->fn)(cdec_data_tramp, cdec_trace_tramp, cdec_isa_tramp, s);
	} else {
		cdec_handle hh = {s->h};
		st = ((int (*)(cdec_handle, const void*, uint64_t, trace_cb_t, void*))s->fn)(hh, s->data, s->size, cdec_trace_tramp, s);
	}
	cdec_lock(&s->p.lock);
	pthread_mutex_lock(&s->mu);
	s->status = st;
	if (s->p.len > 0) {
		s->ring[s->p.w].len = s->p.len; // the last chunk; nothing is written after it
		s->ring[s->p.w].full = 1;
	}
	s->done = 1;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->mu);
	cdec_unlock(&s->p.lock);
	cdec_free_owned(s); // while Go converts the last batches
	return NULL;
}

// cdec_start starts the parse thread: V1 parse_data (fn) or V2 parse (fn on
// handle h, data/size may be NULL/0). 0 when no thread could be made.
static int cdec_start(cdec_session* s, int mode, void* fn, uint64_t h, const void* data, uint64_t size) {
	s->mode = mode;
	s->fn = fn;
	s->h = h;
	s->data = data;
	s->size = size;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 16u << 20); // the library's own stack needs
	int e = pthread_create(&s->thread, &attr, cdec_parse_main, s);
	pthread_attr_destroy(&attr);
	if (e != 0) {
		cdec_fail(s, CDEC_FAIL_THREAD, 0, (uint64_t)e, 0);
		return 0;
	}
	s->started = 1;
	return 1;
}

// cdec_join waits for the parse thread and returns the parse status.
static int cdec_join(cdec_session* s) {
	if (s->started) {
		pthread_join(s->thread, NULL);
		s->started = 0;
	}
	return s->status;
}

#endif
