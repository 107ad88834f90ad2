/* ECDSA and RSA for ssh keys kept in the vault (VaultFormat/SSH): NIST P-256/384/521 keys built
 * from OpenSSH's parts and checked (point on the curve and of the group's order, scalar in range,
 * pairwise), ECDSA and RSA PKCS#1 v1.5 signatures, key generation, and numbers read back out.
 * OpenSSL 3.0's EVP_PKEY APIs only; every secret big number is cleared when freed. */
#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/bn.h>
#include <openssl/param_build.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>

/* An EC key of `group` ("P-256", "P-384", "P-521") from its encoded public point and, when `priv`
 * is not NULL, its private scalar (a big-endian magnitude). NULL on any failure, and, when `check`
 * is 1, unless libcrypto's full checks pass: the point is on the curve, not at infinity and of the
 * group's order (EVP_PKEY_public_check), the scalar lies in [1, order − 1]
 * (EVP_PKEY_private_check) and the point is scalar·G (EVP_PKEY_pairwise_check). A key already
 * checked when it was read is rebuilt for one signature with `check` 0. The scalar's parameters
 * sit in the builder's secure block (it came from a secure BIGNUM), which OSSL_PARAM_free clears. */
static inline EVP_PKEY *vaultfile_ec_key(const char *group, const unsigned char *pub, size_t pubLength,
                                         const unsigned char *priv, size_t privLength, int check) {
    EVP_PKEY *key = NULL;
    EVP_PKEY_CTX *ctx = NULL, *checker = NULL;
    OSSL_PARAM *params = NULL;
    OSSL_PARAM_BLD *build = OSSL_PARAM_BLD_new();
    BIGNUM *scalar = NULL;
    int ok = build != NULL
        && OSSL_PARAM_BLD_push_utf8_string(build, OSSL_PKEY_PARAM_GROUP_NAME, group, 0) == 1
        && OSSL_PARAM_BLD_push_octet_string(build, OSSL_PKEY_PARAM_PUB_KEY, pub, pubLength) == 1;
    if (ok && priv != NULL) {
        ok = (scalar = BN_secure_new()) != NULL && BN_bin2bn(priv, (int)privLength, scalar) != NULL
            && OSSL_PARAM_BLD_push_BN(build, OSSL_PKEY_PARAM_PRIV_KEY, scalar) == 1;
    }
    if (ok) ok = (params = OSSL_PARAM_BLD_to_param(build)) != NULL;
    if (ok) ok = (ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL)) != NULL && EVP_PKEY_fromdata_init(ctx) == 1
        && EVP_PKEY_fromdata(ctx, &key, priv != NULL ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY, params) == 1;
    if (ok && check) ok = (checker = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL)) != NULL && EVP_PKEY_public_check(checker) == 1;
    if (ok && check && priv != NULL) ok = EVP_PKEY_private_check(checker) == 1 && EVP_PKEY_pairwise_check(checker) == 1;
    if (!ok) { EVP_PKEY_free(key); key = NULL; }
    EVP_PKEY_CTX_free(checker);
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(build);
    BN_clear_free(scalar);
    return key;
}

/* A new key: RSA of `bits` (e = 65537) when `group` is NULL, else EC on `group`. NULL on failure. */
static inline EVP_PKEY *vaultfile_generate_key(const char *group, unsigned int bits) {
    if (group == NULL) return EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)bits);
    return EVP_PKEY_Q_keygen(NULL, NULL, "EC", group);
}

/* The big number `name` of `key` ("n", "d", "rsa-factor1", "priv", …) as a big-endian magnitude
 * in `out`; its length, or −1 when the key has none or `out` is too small. */
static inline int vaultfile_pkey_number(const EVP_PKEY *key, const char *name, unsigned char *out, size_t outLength) {
    BIGNUM *number = NULL;
    int length = -1;
    if (EVP_PKEY_get_bn_param(key, name, &number) == 1 && (size_t)BN_num_bytes(number) <= outLength) {
        length = BN_bn2bin(number, out);
    }
    BN_clear_free(number);
    return length;
}

/* The encoded public point of an EC `key` (uncompressed: 04 ‖ x ‖ y) in `out`; its length, or −1. */
static inline int vaultfile_ec_public_point(const EVP_PKEY *key, unsigned char *out, size_t outLength) {
    size_t length = 0;
    if (EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, out, outLength, &length) != 1) return -1;
    return (int)length;
}

/* The ECDSA signature by `key` of `message` hashed with `digest` ("SHA256", "SHA384", "SHA512"),
 * as r and s, each written big-endian and left-padded to `numberLength` bytes. libcrypto draws
 * the nonce k from the private key, the digest and fresh random bytes (BN_generate_dsa_nonce):
 * hedged, so a weak random source alone does not reveal the key. 1 on success. */
static inline int vaultfile_ecdsa_sign(EVP_PKEY *key, const char *digest, const unsigned char *message, size_t messageLength,
                                       unsigned char *r, unsigned char *s, size_t numberLength) {
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    unsigned char der[160];
    size_t derLength = sizeof der;
    const unsigned char *cursor = der;
    ECDSA_SIG *signature = NULL;
    const BIGNUM *br = NULL, *bs = NULL;
    int ok = context != NULL && EVP_DigestSignInit_ex(context, NULL, digest, NULL, NULL, key, NULL) == 1
        && EVP_DigestSign(context, NULL, &derLength, message, messageLength) == 1 && derLength <= sizeof der
        && EVP_DigestSign(context, der, &derLength, message, messageLength) == 1
        && (signature = d2i_ECDSA_SIG(NULL, &cursor, (long)derLength)) != NULL;
    if (ok) {
        ECDSA_SIG_get0(signature, &br, &bs);
        ok = BN_bn2binpad(br, r, (int)numberLength) == (int)numberLength && BN_bn2binpad(bs, s, (int)numberLength) == (int)numberLength;
    }
    ECDSA_SIG_free(signature);
    EVP_MD_CTX_free(context);
    return ok;
}

/* Whether (r, s) (big-endian magnitudes) is `key`'s ECDSA signature of `message` under `digest`. */
static inline int vaultfile_ecdsa_verify(EVP_PKEY *key, const char *digest, const unsigned char *message, size_t messageLength,
                                         const unsigned char *r, size_t rLength, const unsigned char *s, size_t sLength) {
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    ECDSA_SIG *signature = ECDSA_SIG_new();
    BIGNUM *br = BN_bin2bn(r, (int)rLength, NULL), *bs = BN_bin2bn(s, (int)sLength, NULL);
    unsigned char *der = NULL;
    int derLength = 0;
    int ok = context != NULL && signature != NULL && br != NULL && bs != NULL && ECDSA_SIG_set0(signature, br, bs) == 1;
    if (ok) { br = NULL; bs = NULL; }
    ok = ok && (derLength = i2d_ECDSA_SIG(signature, &der)) > 0
        && EVP_DigestVerifyInit_ex(context, NULL, digest, NULL, NULL, key, NULL) == 1
        && EVP_DigestVerify(context, der, (size_t)derLength, message, messageLength) == 1;
    OPENSSL_free(der);
    BN_free(br); BN_free(bs);
    ECDSA_SIG_free(signature);
    EVP_MD_CTX_free(context);
    return ok;
}

/* RSA PKCS#1 v1.5 over `digest` ("SHA1", "SHA256", "SHA512") of `message`: signs (sign = 1, into
 * `signature` of *signatureLength bytes, set to the length written) or verifies. libcrypto's RSA
 * private operations are always blinded in OpenSSL 3. 1 on success. */
static inline int vaultfile_rsa_pkcs1(EVP_PKEY *key, int sign, const char *digest, const unsigned char *message, size_t messageLength,
                                      unsigned char *signature, size_t *signatureLength) {
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    EVP_PKEY_CTX *ctx = NULL;
    int ok = context != NULL
        && (sign ? EVP_DigestSignInit_ex(context, &ctx, digest, NULL, NULL, key, NULL)
                 : EVP_DigestVerifyInit_ex(context, &ctx, digest, NULL, NULL, key, NULL)) == 1
        && EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) == 1;
    if (ok) ok = sign ? EVP_DigestSign(context, signature, signatureLength, message, messageLength) == 1
                      : EVP_DigestVerify(context, signature, *signatureLength, message, messageLength) == 1;
    EVP_MD_CTX_free(context);
    return ok;
}
