#ifndef VAULTFILE_CBLOWFISH_H
#define VAULTFILE_CBLOWFISH_H
// The inner loops of bcrypt_pbkdf's hash (VaultFormat/Crypto/BcryptPBKDF.swift), in C because
// they run about 4.3 million Blowfish encipherments for one ssh-keygen key: unoptimised Swift
// (the tests' debug builds, and the sanitizer runs) took seconds a key there, C at -O0 takes
// milliseconds. The state is the caller's: the P-array (18 words) then S-boxes 1 to 4 (4 × 256),
// 1,042 words, initialised to Blowfish's constants and zeroed by the caller.
#include <stddef.h>
#include <stdint.h>

#define VAULTFILE_BLOWFISH_WORDS 1042

/// Blowfish's round function F over the S-boxes that follow the P-array.
static inline uint32_t vaultfile_blowfish_f(const uint32_t *s, uint32_t x) {
    return ((s[x >> 24] + s[256 + ((x >> 16) & 0xFF)]) ^ s[512 + ((x >> 8) & 0xFF)]) + s[768 + (x & 0xFF)];
}

/// Enciphers the block (*left, *right) in place: 16 Feistel rounds.
static inline void vaultfile_blowfish_encipher(const uint32_t *state, uint32_t *left, uint32_t *right) {
    const uint32_t *s = state + 18;
    uint32_t l = *left ^ state[0], r = *right;
    for (int round = 1; round <= 15; round += 2) {
        r ^= vaultfile_blowfish_f(s, l) ^ state[round];
        l ^= vaultfile_blowfish_f(s, r) ^ state[round + 1];
    }
    *left = r ^ state[17];
    *right = l;
}

/// The next big-endian word of `bytes` from *cursor, wrapping to the start (Blowfish_stream2word).
static inline uint32_t vaultfile_blowfish_word(const uint8_t *bytes, size_t count, size_t *cursor) {
    uint32_t word = 0;
    for (int i = 0; i < 4; i++) {
        if (*cursor >= count) *cursor = 0;
        word = (word << 8) | bytes[*cursor];
        *cursor += 1;
    }
    return word;
}

/// bcrypt's key expansion: Blowfish_expandstate, or Blowfish_expand0state when `data_count` is 0.
static inline void vaultfile_blowfish_expand(uint32_t *state, const uint8_t *key, size_t key_count,
                                             const uint8_t *data, size_t data_count) {
    size_t cursor = 0;
    for (int i = 0; i < 18; i++) state[i] ^= vaultfile_blowfish_word(key, key_count, &cursor);
    cursor = 0;
    uint32_t left = 0, right = 0;
    for (int i = 0; i < VAULTFILE_BLOWFISH_WORDS; i += 2) {
        if (data_count > 0) {
            left ^= vaultfile_blowfish_word(data, data_count, &cursor);
            right ^= vaultfile_blowfish_word(data, data_count, &cursor);
        }
        vaultfile_blowfish_encipher(state, &left, &right);
        state[i] = left;
        state[i + 1] = right;
    }
}

/// bcrypt_pbkdf's hash of two 64-byte SHA-512 digests into `out` (32 bytes): the expensive key
/// schedule, then the 32-byte `magic` enciphered 64 times, its words written little-endian.
/// `state` holds Blowfish's initial state on entry and the derived state on return.
static inline void vaultfile_bcrypt_hash(uint32_t *state, const uint8_t *password_hash, const uint8_t *salt_hash,
                                         const uint8_t *magic, uint8_t *out) {
    vaultfile_blowfish_expand(state, password_hash, 64, salt_hash, 64);
    for (int i = 0; i < 64; i++) {
        vaultfile_blowfish_expand(state, salt_hash, 64, NULL, 0);
        vaultfile_blowfish_expand(state, password_hash, 64, NULL, 0);
    }
    uint32_t words[8];
    size_t cursor = 0;
    for (int i = 0; i < 8; i++) words[i] = vaultfile_blowfish_word(magic, 32, &cursor);
    for (int i = 0; i < 64; i++)
        for (int pair = 0; pair < 8; pair += 2) vaultfile_blowfish_encipher(state, &words[pair], &words[pair + 1]);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(words[i] & 0xFF);
        out[4 * i + 1] = (uint8_t)((words[i] >> 8) & 0xFF);
        out[4 * i + 2] = (uint8_t)((words[i] >> 16) & 0xFF);
        out[4 * i + 3] = (uint8_t)(words[i] >> 24);
    }
    // The words are derived from the passphrase: not left on the stack (a volatile store the
    // compiler cannot drop).
    volatile uint32_t *clear = words;
    for (int i = 0; i < 8; i++) clear[i] = 0;
}

#endif
