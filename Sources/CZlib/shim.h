#include <zlib.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#if defined(__x86_64__)
#include <stdatomic.h>
#include <cpuid.h>
#include <immintrin.h>
#endif

/* zlib's memory for inflating holds the last 32 KiB of what it inflated (the window) and the
 * state: decrypted secrets when the stream is a 1pux's export.data or a KeePass attachment. These
 * two functions are the stream's zalloc and zfree: each block carries its size in front of it and
 * is zeroed (explicit_bzero, which the compiler may not drop) before it goes back to malloc. */
static inline voidpf vaultfile_zlib_alloc(voidpf opaque, uInt items, uInt size) {
    (void)opaque;
    size_t bytes = (size_t)items * (size_t)size;
    if (size != 0 && bytes / size != items) return Z_NULL;
    if (bytes > SIZE_MAX - 16) return Z_NULL;
    unsigned char *block = malloc(bytes + 16);
    if (block == NULL) return Z_NULL;
    memcpy(block, &bytes, sizeof bytes);
    return block + 16;
}

static inline void vaultfile_zlib_free(voidpf opaque, voidpf address) {
    (void)opaque;
    if (address == Z_NULL) return;
    unsigned char *block = (unsigned char *)address - 16;
    size_t bytes;
    memcpy(&bytes, block, sizeof bytes);
    explicit_bzero(block, bytes + 16);
    free(block);
}

/* inflateInit2 is a macro (it passes zlib's version and the stream's size), which Swift cannot
 * call: this sets the wiping allocator above and starts an inflate stream. windowBits -15 reads
 * raw deflate (a ZIP entry), 31 (15 + 16) one gzip member whose CRC-32 and length zlib checks. */
static inline int vaultfile_inflate_init(z_stream *stream, int windowBits) {
    memset(stream, 0, sizeof *stream);
    stream->zalloc = vaultfile_zlib_alloc;
    stream->zfree = vaultfile_zlib_free;
    stream->opaque = Z_NULL;
    return inflateInit2(stream, windowBits);
}

/* deflateInit2 is a macro too: this starts a deflate stream that writes one gzip member
 * (windowBits 15 + 16) at `level`, with the wiping allocator above (the input is a KDBX
 * export's decrypted XML). */
static inline int vaultfile_deflate_init(z_stream *stream, int level) {
    memset(stream, 0, sizeof *stream);
    stream->zalloc = vaultfile_zlib_alloc;
    stream->zfree = vaultfile_zlib_free;
    stream->opaque = Z_NULL;
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}

/* The same with raw deflate (windowBits -15, no gzip header or trailer): the KDBX export
 * compresses its XML as it is written and its inner header afterwards, then joins the two raw
 * streams into one gzip member (zlib's examples/gzjoin.c does the same). */
static inline int vaultfile_deflate_init_raw(z_stream *stream, int level) {
    memset(stream, 0, sizeof *stream);
    stream->zalloc = vaultfile_zlib_alloc;
    stream->zfree = vaultfile_zlib_free;
    stream->opaque = Z_NULL;
    return deflateInit2(stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
}

/* CRC-32 (zlib's, the ZIP's) by carry-less multiplication: the 1pux reader checks the CRC-32 of
 * every byte it inflates (32 MB for 100,000 items), which zlib's table code did at about 1.5 bytes
 * a cycle; folding 64 bytes at a time with PCLMULQDQ (Intel's "Fast CRC Computation for Generic
 * Polynomials Using PCLMULQDQ Instruction", its constants for the bit-reflected polynomial
 * 0xEDB88320, as Chromium's zlib and the Linux kernel use them) does about 8 bytes a cycle. The
 * rest (under 64 bytes, and the tail past the last 16) goes to zlib's crc32_z; a processor
 * without PCLMULQDQ and SSE4.1 (cpuid) takes zlib's for all of it. */

#if defined(__x86_64__)
__attribute__((target("pclmul,sse4.1")))
static inline uint32_t vaultfile_crc32_fold(const unsigned char *buf, size_t len, uint32_t crc) {
    /* len >= 64, a multiple of 16; crc is the register (already inverted). */
    const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596LL, 0x0154442bd4LL);
    const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009eLL, 0x01751997d0LL);
    const __m128i k5k0 = _mm_set_epi64x(0, 0x0163cd6124LL);
    const __m128i poly = _mm_set_epi64x(0x01f7011641LL, 0x01db710641LL);
    __m128i x0, x1, x2, x3, x4, x5, x6, x7, x8, y5, y6, y7, y8;
    x1 = _mm_loadu_si128((const __m128i *)(buf + 0x00));
    x2 = _mm_loadu_si128((const __m128i *)(buf + 0x10));
    x3 = _mm_loadu_si128((const __m128i *)(buf + 0x20));
    x4 = _mm_loadu_si128((const __m128i *)(buf + 0x30));
    x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)crc));
    x0 = k1k2;
    buf += 64;
    len -= 64;
    while (len >= 64) {
        x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
        x6 = _mm_clmulepi64_si128(x2, x0, 0x00);
        x7 = _mm_clmulepi64_si128(x3, x0, 0x00);
        x8 = _mm_clmulepi64_si128(x4, x0, 0x00);
        x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
        x2 = _mm_clmulepi64_si128(x2, x0, 0x11);
        x3 = _mm_clmulepi64_si128(x3, x0, 0x11);
        x4 = _mm_clmulepi64_si128(x4, x0, 0x11);
        y5 = _mm_loadu_si128((const __m128i *)(buf + 0x00));
        y6 = _mm_loadu_si128((const __m128i *)(buf + 0x10));
        y7 = _mm_loadu_si128((const __m128i *)(buf + 0x20));
        y8 = _mm_loadu_si128((const __m128i *)(buf + 0x30));
        x1 = _mm_xor_si128(_mm_xor_si128(x1, x5), y5);
        x2 = _mm_xor_si128(_mm_xor_si128(x2, x6), y6);
        x3 = _mm_xor_si128(_mm_xor_si128(x3, x7), y7);
        x4 = _mm_xor_si128(_mm_xor_si128(x4, x8), y8);
        buf += 64;
        len -= 64;
    }
    /* Four lanes folded into one. */
    x0 = k3k4;
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x2), x5);
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x3), x5);
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x4), x5);
    while (len >= 16) {
        x2 = _mm_loadu_si128((const __m128i *)buf);
        x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
        x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
        x1 = _mm_xor_si128(_mm_xor_si128(x1, x2), x5);
        buf += 16;
        len -= 16;
    }
    /* 128 bits to 64, then Barrett's reduction to 32. */
    x2 = _mm_clmulepi64_si128(x1, x0, 0x10);
    x3 = _mm_setr_epi32(~0, 0, ~0, 0);
    x1 = _mm_srli_si128(x1, 8);
    x1 = _mm_xor_si128(x1, x2);
    x0 = k5k0;
    x2 = _mm_srli_si128(x1, 4);
    x1 = _mm_and_si128(x1, x3);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_xor_si128(x1, x2);
    x0 = poly;
    x2 = _mm_and_si128(x1, x3);
    x2 = _mm_clmulepi64_si128(x2, x0, 0x10);
    x2 = _mm_and_si128(x2, x3);
    x2 = _mm_clmulepi64_si128(x2, x0, 0x00);
    x1 = _mm_xor_si128(x1, x2);
    return (uint32_t)_mm_extract_epi32(x1, 1);
}

/* Whether this processor has PCLMULQDQ and SSE4.1 (asked once: cpuid is slow in a virtual
 * machine; an atomic, as two threads may ask at once). */
static inline int vaultfile_crc32_has_fold(void) {
    static _Atomic int known = -1;
    int has = atomic_load_explicit(&known, memory_order_relaxed);
    if (has < 0) {
        unsigned int eax, ebx, ecx, edx;
        has = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_PCLMUL) && (ecx & bit_SSE4_1);
        atomic_store_explicit(&known, has, memory_order_relaxed);
    }
    return has;
}

#endif

/* crc32_z(crc, buf, len), the same value (zlib's alone but on x86-64). */
static inline unsigned long vaultfile_crc32(unsigned long crc, const unsigned char *buf, size_t len) {
#if defined(__x86_64__)
    if (buf != NULL && len >= 64 && vaultfile_crc32_has_fold()) {
        size_t folded = len & ~(size_t)15;
        crc = ~vaultfile_crc32_fold(buf, folded, ~(uint32_t)crc) & 0xffffffffUL;
        buf += folded;
        len -= folded;
    }
#endif
    return crc32_z(crc, buf, len);
}
