// gfx950.cl: kernels for gfx950 (MI350, CDNA4) only. They use instructions
// that gfx942 (MI300) lacks, v_prng_b32 and v_bitop3_b32, so they build with
// clang-22 (clang-19 does not know gfx950) and disassemble with
// llvm-objdump-22.
#include "helper.h"

#define LANE() (__builtin_amdgcn_workitem_id_x())
#define GROUP() (__builtin_amdgcn_workgroup_id_x())
#define GID() (GROUP() * 64u + LANE())

// prng_chain: each round steps the hardware pseudo-random generator
// (v_prng_b32) and folds in the key and the round with one three-input
// XOR (v_bitop3_b32, truth table 0x96); the trip count comes from an
// argument, and the inlined mix from helper.h keeps an inline chain.
__kernel void prng_chain(__global uint *data, uint key, int rounds)
{
	uint id = GID();
	uint x = data[id];
	for (int r = 0; r < rounds; r++) {
		x = __builtin_amdgcn_prng_b32(x);
		x = __builtin_amdgcn_bitop3_b32(x, key, (uint)r, 0x96);
		if (x & 1u)
			x = mix(x, key);
	}
	data[id] = x;
}

// bitop3_tables: one v_bitop3_b32 per truth table on the same three
// inputs (majority, choice, three-way XOR, a NAND of all three).
__kernel void bitop3_tables(__global const uint *a, __global const uint *b,
			    __global uint *out)
{
	uint id = GID();
	uint x = a[id], y = b[id], z = x + y;
	out[4u * id + 0u] = __builtin_amdgcn_bitop3_b32(x, y, z, 0xe8);
	out[4u * id + 1u] = __builtin_amdgcn_bitop3_b32(x, y, z, 0xca);
	out[4u * id + 2u] = __builtin_amdgcn_bitop3_b32(x, y, z, 0x96);
	out[4u * id + 3u] = __builtin_amdgcn_bitop3_b32(x, y, z, 0x7f);
}
