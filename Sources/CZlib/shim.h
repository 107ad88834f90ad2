#include <zlib.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

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
