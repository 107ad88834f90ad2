// SHA256_Init/Update/Final/Transform are deprecated in OpenSSL 3 but exported and
// unchanged; PBKDF2 uses them to run each iteration as two bare compressions.
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/evp.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <openssl/hmac.h>
#include <string.h>
#include "rsa_shim.h"
#include "kdbx_shim.h"
#include "ssh_shim.h"
#include "chacha_shim.h"

/* Starts vaultfile's libcrypto without its configuration: no openssl.cnf, no OPENSSL_CONF from
 * the environment (a configuration can load provider modules into the process and change what
 * the ciphers are), and no error strings (vaultfile never prints OpenSSL's; loading them touches
 * code in ~40 of libcrypto's objects), and no cleanup at exit (the process's memory goes with it;
 * vaultfile cleanses its own contexts' keys when it frees them). Must run before any other
 * libcrypto call: the first one otherwise loads the configuration. 1 on success. */
static inline int vaultfile_libcrypto_start(void) {
    return OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS | OPENSSL_INIT_NO_ATEXIT, NULL);
}

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

/* HMAC-SHA256 of head ‖ message from the pre-keyed inner and outer states (the key's block
 * already compressed into each), the tag written to `tag`. A message of up to 119 bytes after
 * the key block (head and message together) is padded here and compressed in one or two
 * blocks, the outer hash in one: `git textconv` hashes two short messages per entry, and
 * SHA256_Update/Final's bookkeeping cost about as much as the compressions. Longer messages go
 * through SHA256_Update/Final. Every copy of the message and the state is cleansed. */
static inline void vaultfile_hmac_sha256_parts(const SHA256_CTX *inner, const SHA256_CTX *outer,
                                               const unsigned char *head, size_t headLength,
                                               const unsigned char *message, size_t messageLength,
                                               unsigned char tag[32]) {
    SHA256_CTX state = *inner;
    unsigned char block[128];
    size_t length = headLength + messageLength;
    if (length + 9 <= sizeof block) {
        size_t blocks = length + 9 <= 64 ? 1 : 2;
        if (headLength) memcpy(block, head, headLength);
        if (messageLength) memcpy(block + headLength, message, messageLength);
        block[length] = 0x80;
        memset(block + length + 1, 0, blocks * 64 - length - 1);
        unsigned long long bits = (unsigned long long)(64 + length) * 8;
        for (int byte = 0; byte < 8; byte++) block[blocks * 64 - 1 - byte] = (unsigned char)(bits >> (8 * byte));
        SHA256_Transform(&state, block);
        if (blocks == 2) SHA256_Transform(&state, block + 64);
        for (int word = 0; word < 8; word++) {
            block[4 * word] = (unsigned char)(state.h[word] >> 24);
            block[4 * word + 1] = (unsigned char)(state.h[word] >> 16);
            block[4 * word + 2] = (unsigned char)(state.h[word] >> 8);
            block[4 * word + 3] = (unsigned char)state.h[word];
        }
    } else {
        SHA256_Update(&state, head, headLength);
        SHA256_Update(&state, message, messageLength);
        SHA256_Final(block, &state);
    }
    /* The outer hash: the inner digest (now in block), 0x80, zeros, the bit length of 64 + 32 bytes. */
    block[32] = 0x80;
    memset(block + 33, 0, 64 - 33);
    block[62] = (unsigned char)((96 * 8) >> 8);
    block[63] = (unsigned char)((96 * 8) & 0xFF);
    state = *outer;
    SHA256_Transform(&state, block);
    for (int word = 0; word < 8; word++) {
        tag[4 * word] = (unsigned char)(state.h[word] >> 24);
        tag[4 * word + 1] = (unsigned char)(state.h[word] >> 16);
        tag[4 * word + 2] = (unsigned char)(state.h[word] >> 8);
        tag[4 * word + 3] = (unsigned char)state.h[word];
    }
    OPENSSL_cleanse(&state, sizeof state);
    OPENSSL_cleanse(block, sizeof block);
}
