// SHA256_Init/Update/Final/Transform are deprecated in OpenSSL 3 but exported and
// unchanged; PBKDF2 uses them to run each iteration as two bare compressions.
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/evp.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
