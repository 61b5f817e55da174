// bench-cdec: the bare C loop over librocprof-trace-decoder that attkit's
// binding (internal/cdec) is measured against. It loads the library with
// dlopen, reads one trace file and an ISA table, decodes the trace N times
// and counts what the callbacks deliver, touching nothing else.
//
//   bench-cdec LIB TRACE ISA_TABLE [REPEAT]
//
// ISA_TABLE has one instruction a line: "CODE_OBJECT_ID ADDRESS SIZE TEXT"
// (decimal or 0x hex numbers). Output, one line:
//   api A records R instructions I seconds S records/s X insts/s Y MB/s Z cpu C cpu-records/s W
// seconds is the best wall time of one parse, cpu the best CPU time of one
// parse (getrusage RUSAGE_SELF, user+sys, all threads of the process).
// where records is the sum of the record counts of all callbacks except
// GFXIP (a wave callback counts 1), as BenchmarkRealLibrary counts them.
// Written from sqtt-format.md §5 (no upstream code).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

typedef struct { uint64_t address, code_object_id; } pc_t;
typedef struct { uint64_t handle; } handle_t;
typedef int (*trace_cb_t)(int, void*, uint64_t, void*);
typedef int (*isa_cb_t)(char*, uint64_t*, uint64_t*, pc_t, void*);
typedef uint64_t (*se_cb_t)(uint8_t**, uint64_t*, void*);

typedef struct { uint64_t coid, addr, size; char* text; size_t len; int used; } entry;
static entry* table;
static size_t table_cap;

static size_t slot(uint64_t coid, uint64_t addr) {
	uint64_t h = (addr * 0x9E3779B97F4A7C15ull) ^ (coid * 0xC2B2AE3D27D4EB4Full);
	size_t i = (size_t)(h >> 17) & (table_cap - 1);
	while (table[i].used && (table[i].coid != coid || table[i].addr != addr)) i = (i + 1) & (table_cap - 1);
	return i;
}

static int isa_cb(char* text, uint64_t* mem, uint64_t* size, pc_t pc, void* ud) {
	(void)ud;
	entry* e = &table[slot(pc.code_object_id, pc.address)];
	if (!e->used) return 3;
	*mem = e->size < 4 ? 4 : e->size;
	if (e->len > *size) { *size = e->len; return 2; }
	memcpy(text, e->text, e->len);
	*size = e->len;
	return 0;
}

static uint64_t n_records, n_insts;
static int trace_cb(int type, void* data, uint64_t count, void* ud) {
	(void)ud;
	if (type == 0) return 0;
	if (type == 3 && data) {
		for (uint64_t i = 0; i < count; i++) {
			const uint8_t* w = (const uint8_t*)data + 64 * i;
			uint64_t ni;
			memcpy(&ni, w + 40, 8);
			n_insts += ni;
		}
	}
	n_records += count;
	return 0;
}

static uint8_t* trace_buf;
static uint64_t trace_size;
static int served;
static uint64_t se_cb(uint8_t** buf, uint64_t* size, void* ud) {
	(void)ud;
	if (served) return 0;
	served = 1;
	*buf = trace_buf;
	*size = trace_size;
	return 1;
}

static void load_table(const char* path) {
	FILE* f = fopen(path, "r");
	if (!f) { perror(path); exit(1); }
	size_t n = 0, lines = 0;
	char* line = NULL;
	while (getline(&line, &n, f) > 0) lines++;
	table_cap = 16;
	while (table_cap < 2 * lines + 16) table_cap *= 2;
	table = calloc(table_cap, sizeof *table);
	rewind(f);
	while (getline(&line, &n, f) > 0) {
		char* p = line;
		uint64_t coid = strtoull(p, &p, 0), addr = strtoull(p, &p, 0), size = strtoull(p, &p, 0);
		while (*p == ' ' || *p == '\t') p++;
		size_t len = strcspn(p, "\n");
		entry* e = &table[slot(coid, addr)];
		e->coid = coid; e->addr = addr; e->size = size; e->used = 1;
		e->text = strndup(p, len);
		e->len = len;
	}
	free(line);
	fclose(f);
}

static double cpu_seconds(void) {
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void* sym(void* h, const char* name) { return dlsym(h, name); }

int main(int argc, char** argv) {
	if (argc < 4) {
		fprintf(stderr, "usage: bench-cdec LIB TRACE ISA_TABLE [REPEAT]\n");
		return 2;
	}
	int repeat = argc > 4 ? atoi(argv[4]) : 3;
	void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) { fprintf(stderr, "bench-cdec: %s\n", dlerror()); return 4; }
	FILE* f = fopen(argv[2], "rb");
	if (!f) { perror(argv[2]); return 1; }
	fseek(f, 0, SEEK_END);
	trace_size = (uint64_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	trace_buf = malloc(trace_size ? trace_size : 1);
	if (fread(trace_buf, 1, trace_size, f) != trace_size) { perror(argv[2]); return 1; }
	fclose(f);
	load_table(argv[3]);

	int (*create)(handle_t*) = (int (*)(handle_t*))sym(h, "rocprof_trace_decoder_create_handle");
	int (*set_isa)(handle_t, isa_cb_t, void*) = (int (*)(handle_t, isa_cb_t, void*))sym(h, "rocprof_trace_decoder_set_isa_callback");
	int (*parse)(handle_t, const void*, uint64_t, trace_cb_t, void*) =
		(int (*)(handle_t, const void*, uint64_t, trace_cb_t, void*))sym(h, "rocprof_trace_decoder_parse");
	int (*parse_data)(se_cb_t, trace_cb_t, isa_cb_t, void*) =
		(int (*)(se_cb_t, trace_cb_t, isa_cb_t, void*))sym(h, "rocprof_trace_decoder_parse_data");
	handle_t hd = {0};
	int v2 = create && set_isa && parse;
	if (v2) {
		if (create(&hd) != 0 || set_isa(hd, isa_cb, NULL) != 0) { fprintf(stderr, "bench-cdec: handle setup failed\n"); return 4; }
	} else if (!parse_data) {
		fprintf(stderr, "bench-cdec: %s exports neither the V2 handle API nor parse_data\n", argv[1]);
		return 4;
	}
	double best = 1e30, best_cpu = 1e30;
	uint64_t recs = 0, insts = 0;
	for (int r = 0; r < repeat; r++) {
		n_records = n_insts = 0;
		served = 0;
		struct timespec t0, t1;
		double c0 = cpu_seconds();
		clock_gettime(CLOCK_MONOTONIC, &t0);
		int s = v2 ? parse(hd, trace_buf, trace_size, trace_cb, NULL) : parse_data(se_cb, trace_cb, isa_cb, NULL);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double c = cpu_seconds() - c0;
		if (s != 0) { fprintf(stderr, "bench-cdec: parse returned status %d\n", s); return 1; }
		double sec = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (sec < best) best = sec;
		if (c < best_cpu) best_cpu = c;
		recs = n_records;
		insts = n_insts;
	}
	printf("api %s records %" PRIu64 " instructions %" PRIu64 " seconds %.6f records/s %.0f insts/s %.0f MB/s %.1f cpu %.6f cpu-records/s %.0f\n",
		v2 ? "v2" : "v1", recs, insts, best, recs / best, insts / best, trace_size / best / 1e6, best_cpu, recs / best_cpu);
	return 0;
}
