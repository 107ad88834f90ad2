#ifndef VAULTFILE_CHACHA_SHIM_H
#define VAULTFILE_CHACHA_SHIM_H
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <string.h>

/* ChaCha20 and ChaCha20-Poly1305 (RFC 8439) through OpenSSL's EVP, whose AVX2 and AVX-512 code
 * runs about three times as fast as libsodium 1.0.18's on this machine's processors (7.5 GB/s
 * against 2.4 GB/s for ChaCha20 on 64 KiB; docs/PERFORMANCE.md, issue 41). For bulk data only:
 * age's payload chunks and the keystream of a secretstream chunk's message. Each caller keeps
 * one context a thread, set up once (`vaultfile_chacha20_setup`, `vaultfile_aead_setup`) and
 * keyed again per chunk; EVP_CIPHER_CTX_free cleanses the key it holds. Every function returns
 * 1 on success and 0 when OpenSSL refuses (or, for `open`, when the tag does not verify). */

/* OpenSSL's ChaCha20 core: the assembly (AVX2, AVX-512, SSSE3, or plain x86-64, chosen at run
 * time from the processor's features) that EVP_chacha20 itself runs, called directly. libcrypto.a
 * exports it (the static release build forces it in: scripts/build-release.sh); the shared
 * libcrypto does not, hence weak: where it is absent (SHARED_LIBS=1, the debug build) the keystream
 * goes through EVP as before. Why: EVP's first use builds OpenSSL's provider and name tables
 * (about 1.4 MB of heap and code at run time), which nothing else of a `set` or an `import` needs. */
extern void ChaCha20_ctr32(unsigned char *out, const unsigned char *in, size_t length,
                           const unsigned int key[8], const unsigned int counter[4]) __attribute__((weak));

/* 1 when `vaultfile_chacha20_xor_core` can run (OpenSSL's core is linked in). */
static inline int vaultfile_chacha20_core_available(void) {
    return ChaCha20_ctr32 != NULL;
}

/* `length` bytes of `in` XORed with the ChaCha20 keystream of `key` and the 12-byte `nonce` from
 * block `counter` on, into `out` (`in` and `out` may be the same), as `vaultfile_chacha20_xor`, by
 * OpenSSL's core without EVP. 0 when the core is absent, or when the keystream would run past
 * block 2^32 − 1 (the core's counter is 32 bits and does not carry into the nonce, and RFC 8439
 * gives no block after it). */
static inline int vaultfile_chacha20_xor_core(unsigned char *out, const unsigned char *in, size_t length,
                                              const unsigned char key[32], const unsigned char nonce[12], uint32_t counter) {
    unsigned int words[8], block[4];
    if (ChaCha20_ctr32 == NULL) return 0;
    if ((uint64_t)counter + ((uint64_t)length + 63) / 64 > UINT64_C(0x100000000)) return 0;
    if (length == 0) return 1;
    for (int word = 0; word < 8; word++) {
        const unsigned char *at = key + 4 * word;
        words[word] = (unsigned int)at[0] | (unsigned int)at[1] << 8 | (unsigned int)at[2] << 16 | (unsigned int)at[3] << 24;
    }
    block[0] = counter;
    for (int word = 0; word < 3; word++) {
        const unsigned char *at = nonce + 4 * word;
        block[word + 1] = (unsigned int)at[0] | (unsigned int)at[1] << 8 | (unsigned int)at[2] << 16 | (unsigned int)at[3] << 24;
    }
    ChaCha20_ctr32(out, in, length, words, block);
    OPENSSL_cleanse(words, sizeof words);
    return 1;
}

/* A context for `vaultfile_chacha20_xor`. */
static inline int vaultfile_chacha20_setup(EVP_CIPHER_CTX *context) {
    return EVP_EncryptInit_ex(context, EVP_chacha20(), NULL, NULL, NULL) == 1;
}

/* `length` bytes of `in` XORed with the ChaCha20 keystream of `key` and the 12-byte `nonce` from
 * block `counter` on (libsodium's crypto_stream_chacha20_ietf_xor_ic), into `out`. */
static inline int vaultfile_chacha20_xor(EVP_CIPHER_CTX *context, unsigned char *out, const unsigned char *in, size_t length,
                                         const unsigned char key[32], const unsigned char nonce[12], uint32_t counter) {
    unsigned char iv[16];
    int written = 0;
    if (length > INT32_MAX) return 0;
    /* OpenSSL's ChaCha20 IV: the 32-bit block counter, little-endian, then the nonce. */
    for (int byte = 0; byte < 4; byte++) iv[byte] = (unsigned char)(counter >> (8 * byte));
    memcpy(iv + 4, nonce, 12);
    if (EVP_EncryptInit_ex(context, NULL, NULL, key, iv) != 1) return 0;
    if (length == 0) return 1;
    return EVP_EncryptUpdate(context, out, &written, in, (int)length) == 1 && (size_t)written == length;
}

/* A context for `vaultfile_aead_seal` (`encrypting` 1) or `vaultfile_aead_open` (0). */
static inline int vaultfile_aead_setup(EVP_CIPHER_CTX *context, int encrypting) {
    return EVP_CipherInit_ex(context, EVP_chacha20_poly1305(), NULL, NULL, NULL, encrypting) == 1;
}

/* ChaCha20-Poly1305 of `length` bytes of `in` (no associated data) into `out`: the ciphertext,
 * then the 16-byte tag (libsodium's crypto_aead_chacha20poly1305_ietf_encrypt). */
static inline int vaultfile_aead_seal(EVP_CIPHER_CTX *context, unsigned char *out, const unsigned char *in, size_t length,
                                      const unsigned char key[32], const unsigned char nonce[12]) {
    unsigned char none[16]; /* the final step writes nothing for this cipher */
    int written = 0, last = 0;
    if (length > INT32_MAX) return 0;
    if (EVP_EncryptInit_ex(context, NULL, NULL, key, nonce) != 1) return 0;
    if (length > 0 && (EVP_EncryptUpdate(context, out, &written, in, (int)length) != 1 || (size_t)written != length)) return 0;
    if (EVP_EncryptFinal_ex(context, none, &last) != 1 || last != 0) return 0;
    return EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, 16, out + length) == 1;
}

/* The plaintext of `inLength` (at least 16) bytes of ciphertext and tag into `out` (inLength − 16
 * bytes), or 0 when the tag does not verify. OpenSSL writes the plaintext before the tag is
 * checked: on 0, the caller wipes `out` and uses nothing of it. */
static inline int vaultfile_aead_open(EVP_CIPHER_CTX *context, unsigned char *out, const unsigned char *in, size_t inLength,
                                      const unsigned char key[32], const unsigned char nonce[12]) {
    unsigned char none[16]; /* the final step writes nothing for this cipher */
    int written = 0, last = 0;
    size_t length;
    if (inLength < 16 || inLength - 16 > INT32_MAX) return 0;
    length = inLength - 16;
    if (EVP_DecryptInit_ex(context, NULL, NULL, key, nonce) != 1) return 0;
    if (EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, 16, (void *)(in + length)) != 1) return 0;
    if (length > 0 && (EVP_DecryptUpdate(context, out, &written, in, (int)length) != 1 || (size_t)written != length)) return 0;
    return EVP_DecryptFinal_ex(context, none, &last) == 1 && last == 0;
}
#endif
