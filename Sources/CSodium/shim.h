#include <sodium.h>
#include <string.h>
#include <stdint.h>

/// Authenticates the next chunk of a crypto_secretstream_xchacha20poly1305 stream exactly as
/// crypto_secretstream_xchacha20poly1305_pull does (no associated data) and advances the state
/// the same way, but does not decrypt the message: the Poly1305 key from keystream block 0, the
/// tag from block 1, the MAC over the tag block and the ciphertext. For chunks whose plaintext is
/// dropped anyway (vaultfile's get skips a vault's history section): Poly1305 costs a fraction
/// of ChaCha20. Returns 0 and the chunk's tag, or -1 with the state unchanged.
/// Tied to libsodium's pull by CryptoBuildingBlockTests.test_secretStreamVerify_*.
static inline int vaultfile_secretstream_verify(crypto_secretstream_xchacha20poly1305_state *state,
                                                unsigned char *tag_p,
                                                const unsigned char *in, unsigned long long inlen)
{
    static const unsigned char zeros[16] = { 0 };
    crypto_onetimeauth_poly1305_state poly;
    unsigned char block[64];
    unsigned char lengths[16];
    unsigned char mac[crypto_onetimeauth_poly1305_BYTES];
    unsigned long long mlen, total;
    unsigned char tag;
    int i;

    if (inlen < crypto_secretstream_xchacha20poly1305_ABYTES) {
        return -1;
    }
    mlen = inlen - crypto_secretstream_xchacha20poly1305_ABYTES;
    crypto_stream_chacha20_ietf(block, sizeof block, state->nonce, state->k);
    crypto_onetimeauth_poly1305_init(&poly, block);
    /* No associated data: its update and its padding are empty. */
    memset(block, 0, sizeof block);
    block[0] = in[0];
    crypto_stream_chacha20_ietf_xor_ic(block, block, sizeof block, state->nonce, 1U, state->k);
    tag = block[0];
    block[0] = in[0];
    crypto_onetimeauth_poly1305_update(&poly, block, sizeof block);
    sodium_memzero(block, sizeof block);
    crypto_onetimeauth_poly1305_update(&poly, in + 1, mlen);
    total = (unsigned long long) sizeof block + mlen;
    /* The pad pull writes: (0x10 - 64 + mlen) mod 16 zero bytes, which is mlen mod 16 (not the
       pad that would round total up to a multiple of 16): the same bytes must be authenticated. */
    crypto_onetimeauth_poly1305_update(&poly, zeros, (0x10U - sizeof block + mlen) & 0xfU);
    memset(lengths, 0, sizeof lengths); /* the associated data's length, 0, then the ciphertext's */
    for (i = 0; i < 8; i++) {
        lengths[8 + i] = (unsigned char) (total >> (8 * i));
    }
    crypto_onetimeauth_poly1305_update(&poly, lengths, sizeof lengths);
    crypto_onetimeauth_poly1305_final(&poly, mac);
    sodium_memzero(&poly, sizeof poly);
    if (sodium_memcmp(mac, in + 1 + mlen, sizeof mac) != 0) {
        sodium_memzero(mac, sizeof mac);
        return -1;
    }
    /* As pull: the inner nonce takes the MAC, the 4-byte counter counts, and a REKEY tag or a
       counter wrapping to zero rekeys. */
    for (i = 0; i < 8; i++) {
        state->nonce[4 + i] ^= mac[i];
    }
    sodium_memzero(mac, sizeof mac);
    sodium_increment(state->nonce, 4U);
    if ((tag & crypto_secretstream_xchacha20poly1305_TAG_REKEY) != 0 || sodium_is_zero(state->nonce, 4U)) {
        crypto_secretstream_xchacha20poly1305_rekey(state);
    }
    *tag_p = tag;
    return 0;
}

/// The rest of crypto_secretstream_xchacha20poly1305_push (no associated data) once the message's
/// ciphertext is in place at out + 1 (mlen bytes, encrypted with the keystream of the state's key
/// and nonce from block 2 on, as push does: vaultfile does that step with OpenSSL's faster
/// ChaCha20): the encrypted tag byte at out[0], the MAC over the tag block and the ciphertext at
/// out + 1 + mlen, and the state moved on (the inner nonce takes the MAC, the counter counts, a
/// REKEY tag or a wrapped counter rekeys). The same bytes and state as push, line for line
/// (CryptoBuildingBlockTests.test_secretStreamPush_*).
static inline void vaultfile_secretstream_push_mac(crypto_secretstream_xchacha20poly1305_state *state,
                                                   unsigned char *out, unsigned long long mlen, unsigned char tag)
{
    static const unsigned char zeros[16] = { 0 };
    crypto_onetimeauth_poly1305_state poly;
    unsigned char block[64];
    unsigned char lengths[16];
    unsigned char *mac = out + 1 + mlen;
    unsigned long long total;
    int i;

    crypto_stream_chacha20_ietf(block, sizeof block, state->nonce, state->k);
    crypto_onetimeauth_poly1305_init(&poly, block);
    /* No associated data: its update and its padding are empty. */
    memset(block, 0, sizeof block);
    block[0] = tag;
    crypto_stream_chacha20_ietf_xor_ic(block, block, sizeof block, state->nonce, 1U, state->k);
    crypto_onetimeauth_poly1305_update(&poly, block, sizeof block);
    out[0] = block[0];
    sodium_memzero(block, sizeof block);
    crypto_onetimeauth_poly1305_update(&poly, out + 1, mlen);
    crypto_onetimeauth_poly1305_update(&poly, zeros, (0x10U - sizeof block + mlen) & 0xfU);
    memset(lengths, 0, sizeof lengths); /* the associated data's length, 0, then the ciphertext's */
    total = (unsigned long long) sizeof block + mlen;
    for (i = 0; i < 8; i++) {
        lengths[8 + i] = (unsigned char) (total >> (8 * i));
    }
    crypto_onetimeauth_poly1305_update(&poly, lengths, sizeof lengths);
    crypto_onetimeauth_poly1305_final(&poly, mac);
    sodium_memzero(&poly, sizeof poly);
    for (i = 0; i < 8; i++) {
        state->nonce[4 + i] ^= mac[i];
    }
    sodium_increment(state->nonce, 4U);
    if ((tag & crypto_secretstream_xchacha20poly1305_TAG_REKEY) != 0 || sodium_is_zero(state->nonce, 4U)) {
        crypto_secretstream_xchacha20poly1305_rekey(state);
    }
}

/// Moves a pull state past `chunks` chunks the way that many successful pulls would, given the XOR
/// of the first 8 bytes of their MACs: the inner nonce takes that XOR and the 4-byte little-endian
/// counter counts. For chunks without a REKEY tag and a counter that does not wrap (vaultfile's
/// payloads hold at most 16,896 chunks); returns -1 without a change when it would wrap.
static inline int vaultfile_secretstream_skip(crypto_secretstream_xchacha20poly1305_state *state,
                                              const unsigned char inonce_xor[8], uint32_t chunks)
{
    uint32_t counter = (uint32_t) state->nonce[0] | ((uint32_t) state->nonce[1] << 8) |
                       ((uint32_t) state->nonce[2] << 16) | ((uint32_t) state->nonce[3] << 24);
    int i;

    if (chunks > UINT32_MAX - counter) {
        return -1;
    }
    counter += chunks;
    for (i = 0; i < 4; i++) {
        state->nonce[i] = (unsigned char) (counter >> (8 * i));
    }
    for (i = 0; i < 8; i++) {
        state->nonce[4 + i] ^= inonce_xor[i];
    }
    return 0;
}
