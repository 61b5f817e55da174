// helper.h: small helpers that clang inlines into the kernels of kernels.cl,
// so the DWARF line table carries inlined call chains (helper.h -> kernels.cl).
#ifndef ATTKIT_HELPER_H
#define ATTKIT_HELPER_H

static inline uint mix(uint x, uint k)
{
	x ^= x >> 16;
	x *= 0x7feb352du + k;
	x ^= x >> 15;
	return x;
}

static inline float scale(float v, uint lane)
{
	if (lane & 1u)
		return v * 0.5f;
	return v + 1.0f;
}

#endif
