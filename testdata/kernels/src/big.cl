// big.cl: one large straight-line kernel (a few thousand instructions) for
// co-index's indexing benchmark. The macros unroll an integer hash chain that
// the compiler cannot fold because it starts from loaded data.

#define STEP(k)                                                \
	x = (x ^ (x >> 13)) * (0x9e3779b1u + (k));             \
	y = (y + x) ^ ((y << 7) | (k));

#define S4(k) STEP(k) STEP((k) + 1) STEP((k) + 2) STEP((k) + 3)
#define S16(k) S4(k) S4((k) + 4) S4((k) + 8) S4((k) + 12)
#define S64(k) S16(k) S16((k) + 16) S16((k) + 32) S16((k) + 48)
#define S256(k) S64(k) S64((k) + 64) S64((k) + 128) S64((k) + 192)

__kernel void big(__global uint *data)
{
	uint id = __builtin_amdgcn_workgroup_id_x() * 64u + __builtin_amdgcn_workitem_id_x();
	uint x = data[id];
	uint y = data[id + 1u];
	S256(0)
	data[id] = x ^ y;
	S256(256)
	data[id + 64u] = x ^ y;
	S256(512)
	data[id + 128u] = x + y;
}
