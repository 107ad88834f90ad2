#ifndef VAULTFILE_KDBX_SHIM_H
#define VAULTFILE_KDBX_SHIM_H
#include <openssl/evp.h>
#include <openssl/crypto.h>

/* KeePass's AES-KDF: the 32-byte key encrypted `rounds` times in place with AES-256-ECB under
 * `seed` (its two 16-byte halves each as one block). In C so that the rounds (millions in a
 * database KeePassXC calibrated) cost no Swift call each in unoptimised and sanitizer builds.
 * Returns 1 on success, 0 when OpenSSL refuses. */
static inline int vaultfile_aes_kdf(const unsigned char seed[32], unsigned char key[32], unsigned long long rounds) {
    EVP_CIPHER_CTX *context = EVP_CIPHER_CTX_new();
    if (context == NULL) return 0;
    int ok = EVP_EncryptInit_ex(context, EVP_aes_256_ecb(), NULL, seed, NULL) == 1
        && EVP_CIPHER_CTX_set_padding(context, 0) == 1;
    unsigned char out[32];
    int written = 0;
    for (unsigned long long round = 0; ok && round < rounds; round++) {
        ok = EVP_EncryptUpdate(context, out, &written, key, 32) == 1 && written == 32;
        if (ok) memcpy(key, out, 32);
    }
    OPENSSL_cleanse(out, sizeof out);
    EVP_CIPHER_CTX_free(context);
    return ok;
}
#endif
