/* RSA for ssh-rsa keyslots (docs/FORMAT.md §3.10): keys built from their components, RSA-OAEP
 * with SHA-256 and MGF1-SHA-256 under a label, RSA-PSS-SHA-256 with a 32-byte salt. OpenSSL 3.0's
 * EVP_PKEY APIs only; every secret big number is cleared when freed. */
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <openssl/bn.h>
#include <openssl/param_build.h>
#include <openssl/crypto.h>

/* x − 1 in `out` (which must differ from x), or 0 on failure. */
static inline int vaultfile_rsa_minus_one(BIGNUM *out, const BIGNUM *x) {
    return BN_copy(out, x) != NULL && BN_sub_word(out, 1) == 1;
}

/* An RSA key from big-endian magnitudes (OpenSSH's private-section order: n, e, d, iqmp, p, q);
 * a public key when d is NULL. Returns NULL on any failure, and when the private parts disagree:
 * n ≠ p·q, iqmp·q ≢ 1 (mod p), or e·d ≢ 1 modulo p − 1 or q − 1. The CRT exponents are
 * computed here (d mod p − 1, d mod q − 1). */
static inline EVP_PKEY *vaultfile_rsa_key(const unsigned char *n, size_t nLength, const unsigned char *e, size_t eLength,
                                          const unsigned char *d, size_t dLength, const unsigned char *iqmp, size_t iqmpLength,
                                          const unsigned char *p, size_t pLength, const unsigned char *q, size_t qLength) {
    EVP_PKEY *key = NULL;
    EVP_PKEY_CTX *ctx = NULL;
    OSSL_PARAM *params = NULL;
    OSSL_PARAM_BLD *build = OSSL_PARAM_BLD_new();
    BN_CTX *numbers = BN_CTX_secure_new();
    BIGNUM *bn = BN_bin2bn(n, (int)nLength, NULL), *be = BN_bin2bn(e, (int)eLength, NULL);
    BIGNUM *bd = NULL, *bp = NULL, *bq = NULL, *biqmp = NULL, *dmp1 = NULL, *dmq1 = NULL, *t = NULL, *pm1 = NULL, *qm1 = NULL;
    int ok = build != NULL && numbers != NULL && bn != NULL && be != NULL
        && OSSL_PARAM_BLD_push_BN(build, "n", bn) == 1 && OSSL_PARAM_BLD_push_BN(build, "e", be) == 1;
    if (ok && d != NULL) {
        bd = BN_secure_new(); bp = BN_secure_new(); bq = BN_secure_new(); biqmp = BN_secure_new();
        dmp1 = BN_secure_new(); dmq1 = BN_secure_new(); t = BN_secure_new(); pm1 = BN_secure_new(); qm1 = BN_secure_new();
        ok = bd && bp && bq && biqmp && dmp1 && dmq1 && t && pm1 && qm1
            && BN_bin2bn(d, (int)dLength, bd) && BN_bin2bn(p, (int)pLength, bp) && BN_bin2bn(q, (int)qLength, bq)
            && BN_bin2bn(iqmp, (int)iqmpLength, biqmp)
            && !BN_is_zero(bp) && !BN_is_zero(bq) && !BN_is_one(bp) && !BN_is_one(bq)
            && BN_mul(t, bp, bq, numbers) && BN_cmp(t, bn) == 0
            && BN_mod_mul(t, biqmp, bq, bp, numbers) && BN_is_one(t)
            && vaultfile_rsa_minus_one(pm1, bp) && vaultfile_rsa_minus_one(qm1, bq)
            && BN_mod(dmp1, bd, pm1, numbers) && BN_mod(dmq1, bd, qm1, numbers)
            && BN_mod_mul(t, be, dmp1, pm1, numbers) && BN_is_one(t)
            && BN_mod_mul(t, be, dmq1, qm1, numbers) && BN_is_one(t)
            && OSSL_PARAM_BLD_push_BN(build, "d", bd) == 1
            && OSSL_PARAM_BLD_push_BN(build, "rsa-factor1", bp) == 1 && OSSL_PARAM_BLD_push_BN(build, "rsa-factor2", bq) == 1
            && OSSL_PARAM_BLD_push_BN(build, "rsa-exponent1", dmp1) == 1 && OSSL_PARAM_BLD_push_BN(build, "rsa-exponent2", dmq1) == 1
            && OSSL_PARAM_BLD_push_BN(build, "rsa-coefficient1", biqmp) == 1;
    }
    if (ok) ok = (params = OSSL_PARAM_BLD_to_param(build)) != NULL;
    if (ok) ok = (ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL)) != NULL && EVP_PKEY_fromdata_init(ctx) == 1
        && EVP_PKEY_fromdata(ctx, &key, d != NULL ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY, params) == 1;
    if (!ok) { EVP_PKEY_free(key); key = NULL; }
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(build);
    BN_free(bn); BN_free(be);
    BN_clear_free(bd); BN_clear_free(bp); BN_clear_free(bq); BN_clear_free(biqmp);
    BN_clear_free(dmp1); BN_clear_free(dmq1); BN_clear_free(t); BN_clear_free(pm1); BN_clear_free(qm1);
    BN_CTX_free(numbers);
    return key;
}

/* RSA-OAEP with SHA-256 and MGF1-SHA-256 under `label`: encrypts (encrypt = 1) or decrypts
 * `input` into `output` (room for *outputLength bytes; set to the length written). 1 on success. */
static inline int vaultfile_rsa_oaep(EVP_PKEY *key, int encrypt, const unsigned char *label, size_t labelLength,
                                     const unsigned char *input, size_t inputLength, unsigned char *output, size_t *outputLength) {
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);
    unsigned char *copy = NULL;
    int ok = ctx != NULL && (encrypt ? EVP_PKEY_encrypt_init(ctx) : EVP_PKEY_decrypt_init(ctx)) == 1
        && EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) == 1
        && EVP_PKEY_CTX_set_rsa_oaep_md(ctx, EVP_sha256()) == 1
        && EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, EVP_sha256()) == 1;
    if (ok && labelLength > 0) {
        /* libcrypto takes the label's ownership only when it accepts it. */
        ok = (copy = OPENSSL_memdup(label, labelLength)) != NULL && EVP_PKEY_CTX_set0_rsa_oaep_label(ctx, copy, (int)labelLength) == 1;
        if (ok) copy = NULL;
    }
    if (ok) ok = (encrypt ? EVP_PKEY_encrypt(ctx, output, outputLength, input, inputLength)
                          : EVP_PKEY_decrypt(ctx, output, outputLength, input, inputLength)) == 1;
    OPENSSL_free(copy);
    EVP_PKEY_CTX_free(ctx);
    return ok;
}

/* RSA-PSS over SHA-256 of `message`, MGF1-SHA-256, salt exactly 32 bytes: signs (sign = 1, into
 * `signature` of *signatureLength bytes, set to the length written) or verifies. 1 on success. */
static inline int vaultfile_rsa_pss(EVP_PKEY *key, int sign, const unsigned char *message, size_t messageLength,
                                    unsigned char *signature, size_t *signatureLength) {
    EVP_MD_CTX *digest = EVP_MD_CTX_new();
    EVP_PKEY_CTX *ctx = NULL;
    int ok = digest != NULL
        && (sign ? EVP_DigestSignInit(digest, &ctx, EVP_sha256(), NULL, key) : EVP_DigestVerifyInit(digest, &ctx, EVP_sha256(), NULL, key)) == 1
        && EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PSS_PADDING) == 1
        && EVP_PKEY_CTX_set_rsa_pss_saltlen(ctx, 32) == 1
        && EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, EVP_sha256()) == 1;
    if (ok) ok = sign ? EVP_DigestSign(digest, signature, signatureLength, message, messageLength) == 1
                      : EVP_DigestVerify(digest, signature, *signatureLength, message, messageLength) == 1;
    EVP_MD_CTX_free(digest);
    return ok;
}
