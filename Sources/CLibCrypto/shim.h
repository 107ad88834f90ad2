// SHA256_Init/Update/Final/Transform are deprecated in OpenSSL 3 but exported and
// unchanged; PBKDF2 uses them to run each iteration as two bare compressions.
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/evp.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <openssl/hmac.h>

/* PBKDF2-HMAC-SHA256 iterations 2…n for one output block: U(j) = HMAC(U(j-1)) as two
 * compressions from the pre-keyed HMAC states, XORed into sum. `block` holds U1 padded to one
 * SHA-256 block (0x80, zeros, bit length 768); `sum` holds U1. In C so that unoptimised and
 * sanitizer builds of the Swift caller do not pay per byte in a loop run 600,000 times. */
static inline void vaultfile_pbkdf2_iterate(const SHA256_CTX *inner, const SHA256_CTX *outer,
                                            unsigned char block[64], unsigned char sum[32],
                                            unsigned long iterations) {
    SHA256_CTX state;
    for (unsigned long round = 1; round < iterations; round++) {
        for (int pass = 0; pass < 2; pass++) {
            state = pass == 0 ? *inner : *outer;
            SHA256_Transform(&state, block);
            for (int word = 0; word < 8; word++) {
                block[4 * word] = (unsigned char)(state.h[word] >> 24);
                block[4 * word + 1] = (unsigned char)(state.h[word] >> 16);
                block[4 * word + 2] = (unsigned char)(state.h[word] >> 8);
                block[4 * word + 3] = (unsigned char)state.h[word];
            }
        }
        for (int index = 0; index < 32; index++) sum[index] ^= block[index];
    }
    OPENSSL_cleanse(&state, sizeof state);
}
