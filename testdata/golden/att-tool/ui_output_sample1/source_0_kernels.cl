// kernels.cl: small kernels for attkit's code-object tests and thread traces.
// Work-item ids come from the __builtin_amdgcn_* builtins so no device library
// is needed (-nogpulib).
#include "helper.h"

#define LANE() (__builtin_amdgcn_workitem_id_x())
#define GROUP() (__builtin_amdgcn_workgroup_id_x())
#define GID() (GROUP() * 64u + LANE())
// barrier() lives in the device library; build it from builtins instead.
#define BARRIER()                                                  \
	do {                                                       \
		__builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"); \
		__builtin_amdgcn_s_barrier();                      \
		__builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup"); \
	} while (0)

// loop_sum: a loop whose trip count comes from a kernel argument, so a trace
// can run any number of iterations (thousands with iters=4096).
__kernel void loop_sum(__global const uint *in, __global uint *out, int iters)
{
	uint id = GID();
	uint acc = in[id];
	for (int i = 0; i < iters; i++) {
		acc = mix(acc, (uint)i);
		if (acc & 0x100u)
			acc += in[(id + (uint)i) & 63u];
	}
	out[id] = acc;
}

// branches: a uniform branch on the workgroup id (taken by odd groups, not
// taken by even ones: a scalar s_cbranch) and a divergent branch on the lane
// id (an exec-mask branch). The load on one side and the stores on the
// other keep both as real branches.
__kernel void branches(__global float *data, __global uint *flags, int threshold)
{
	uint lane = LANE();
	uint id = GID();
	float v = data[id];
	if ((int)GROUP() & 1) {
		v = v * data[id + 8192u];
	} else {
		v = v - 2.0f;
		flags[GROUP() + 1024u] = 2u;
	}
	if ((int)lane < threshold) {
		v = scale(v, lane);
		data[id + 4096u] = v;
	} else {
		v = -v;
	}
	data[id] = v;
}

// lds_reduce: tree reduction through local (LDS) memory with barriers.
__kernel void lds_reduce(__global const float *in, __global float *out)
{
	__local float tile[64];
	uint lane = LANE();
	tile[lane] = in[GID()];
	BARRIER();
	for (uint s = 32; s > 0; s >>= 1) {
		if (lane < s)
			tile[lane] += tile[lane + s];
		BARRIER();
	}
	if (lane == 0)
		out[GROUP()] = tile[0];
}

// nested: nested loops with an argument-driven outer count and a
// data-dependent early exit in the inner loop.
__kernel void nested(__global uint *data, int outer, int inner)
{
	uint id = GID();
	uint x = data[id];
	for (int o = 0; o < outer; o++) {
		for (int i = 0; i < inner; i++) {
			x = mix(x, (uint)(o * inner + i));
			if (x == 0u)
				break;
		}
		data[(id + (uint)o) & 255u] = x;
	}
}
