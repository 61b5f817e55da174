/*
 * bcryptprimitives.dll for wine 8.0 (Debian 12), which lacks it. Go's
 * Windows runtime (Go >= 1.22) takes its random bytes from ProcessPrng there
 * and dies at start-up without it; this one fills them from RtlGenRandom
 * (advapi32's SystemFunction036), which wine has. Built by the tests with
 * x86_64-w64-mingw32-gcc into the wine prefix's system32 folder.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buf, ULONG len);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T n)
{
	while (n > 0) {
		ULONG k = n > 0x10000000 ? 0x10000000 : (ULONG)n;
		if (!SystemFunction036(data, k))
			return FALSE;
		data += k;
		n -= k;
	}
	return TRUE;
}
