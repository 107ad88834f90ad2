/*
 * The C floor of bench/run.sh: only the work a password vault cannot avoid.
 *
 * One file = magic, salt, Argon2id settings, secretstream header, then
 * crypto_secretstream_xchacha20poly1305 chunks of 64 KiB (the last tagged
 * FINAL) over `u64 length || records`, a record being `name \t value \n`, or
 * `name \t value \t field=value ... \n` when the entry has fields (bench/run.py gives
 * the floor the same entries as vaultfile and the peers: name, value, username).
 * Argon2id runs through libsodium when p = 1 and libargon2 otherwise, as in
 * vaultfile. `set` locks, re-encrypts everything under a fresh stream header,
 * writes a 0600 temporary file, fsyncs it, renames it over the vault and fsyncs
 * the folder. No format checks beyond what decryption needs, no padding, no
 * header MAC, no name rules: a lower bound to compare against, not a product.
 *
 *   floor create FILE PWFILE MEMORY_KIB PASSES LANES < records
 *   floor get    FILE PWFILE NAME
 *   floor list   FILE PWFILE
 *   floor set    FILE PWFILE NAME < value
 */
#include <argon2.h>
#include <sodium.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK 65536
#define MAGIC "VFFLOOR1"
#define HEADER_LEN (8 + 16 + 12 + crypto_secretstream_xchacha20poly1305_HEADERBYTES)

static void die(const char *what) {
    fprintf(stderr, "floor: %s%s%s\n", what, errno ? ": " : "", errno ? strerror(errno) : "");
    exit(1);
}

static unsigned char *read_all(int fd, size_t *length) {
    size_t capacity = 1 << 16, used = 0;
    unsigned char *buffer = malloc(capacity);
    if (!buffer) die("out of memory");
    for (;;) {
        if (used == capacity && !(buffer = realloc(buffer, capacity *= 2))) die("out of memory");
        ssize_t n = read(fd, buffer + used, capacity - used);
        if (n < 0) die("read");
        if (n == 0) break;
        used += (size_t)n;
    }
    *length = used;
    return buffer;
}

static unsigned char *read_file(const char *path, size_t *length) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) die(path);
    unsigned char *bytes = read_all(fd, length);
    close(fd);
    return bytes;
}

static void derive(unsigned char key[32], const char *password_file, const unsigned char *salt,
                   uint32_t memory_kib, uint32_t passes, uint32_t lanes) {
    size_t password_length;
    unsigned char *password = read_file(password_file, &password_length);
    int status = lanes == 1
        ? crypto_pwhash(key, 32, (const char *)password, password_length, salt, passes,
                        (size_t)memory_kib * 1024, crypto_pwhash_ALG_ARGON2ID13)
        : argon2id_hash_raw(passes, memory_kib, lanes, password, password_length, salt, 16, key, 32);
    sodium_memzero(password, password_length);
    free(password);
    if (status != 0) die("argon2id failed");
}

/* Encrypts `content` under `key` and writes the whole file to `fd`. */
static void seal(int fd, const unsigned char *salt, const uint32_t settings[3], const unsigned char key[32],
                 const unsigned char *content, size_t content_length) {
    size_t total = 8 + content_length;
    size_t chunks = (total + CHUNK - 1) / CHUNK;
    size_t out_length = HEADER_LEN + total + chunks * crypto_secretstream_xchacha20poly1305_ABYTES;
    unsigned char *out = malloc(out_length), *plain = malloc(total);
    if (!out || !plain) die("out of memory");
    for (int i = 0; i < 8; i++) plain[i] = (unsigned char)((uint64_t)content_length >> (8 * i));
    memcpy(plain + 8, content, content_length);
    memcpy(out, MAGIC, 8);
    memcpy(out + 8, salt, 16);
    memcpy(out + 24, settings, 12);
    crypto_secretstream_xchacha20poly1305_state state;
    crypto_secretstream_xchacha20poly1305_init_push(&state, out + 36, key);
    unsigned char *cursor = out + HEADER_LEN;
    for (size_t i = 0; i < chunks; i++) {
        size_t length = i + 1 == chunks ? total - i * CHUNK : CHUNK;
        unsigned char tag = i + 1 == chunks ? crypto_secretstream_xchacha20poly1305_TAG_FINAL : 0;
        unsigned long long written;
        crypto_secretstream_xchacha20poly1305_push(&state, cursor, &written, plain + i * CHUNK, length, NULL, 0, tag);
        cursor += written;
    }
    sodium_memzero(plain, total);
    free(plain);
    for (size_t done = 0; done < out_length;) {
        ssize_t n = write(fd, out + done, out_length - done);
        if (n < 0) die("write");
        done += (size_t)n;
    }
    free(out);
}

/* Decrypts the vault at `path`; returns the records and fills key, salt and settings. */
static unsigned char *open_vault(const char *path, const char *password_file, size_t *content_length,
                                 unsigned char key[32], unsigned char salt[16], uint32_t settings[3]) {
    size_t length;
    unsigned char *file = read_file(path, &length);
    if (length < HEADER_LEN || memcmp(file, MAGIC, 8) != 0) die("not a floor vault");
    memcpy(salt, file + 8, 16);
    memcpy(settings, file + 24, 12);
    derive(key, password_file, salt, settings[0], settings[1], settings[2]);
    crypto_secretstream_xchacha20poly1305_state state;
    if (crypto_secretstream_xchacha20poly1305_init_pull(&state, file + 36, key) != 0) die("bad header");
    size_t cipher_length = length - HEADER_LEN;
    unsigned char *plain = malloc(cipher_length + 1), *cursor = plain;
    if (!plain) die("out of memory");
    const unsigned char *in = file + HEADER_LEN, *end = file + length;
    unsigned char tag = 0;
    while (in < end) {
        size_t chunk = (size_t)(end - in) < CHUNK + crypto_secretstream_xchacha20poly1305_ABYTES
            ? (size_t)(end - in) : CHUNK + crypto_secretstream_xchacha20poly1305_ABYTES;
        unsigned long long written;
        if (crypto_secretstream_xchacha20poly1305_pull(&state, cursor, &written, &tag, in, chunk, NULL, 0) != 0)
            die("wrong password or damaged vault");
        cursor += written;
        in += chunk;
    }
    if (tag != crypto_secretstream_xchacha20poly1305_TAG_FINAL || cursor - plain < 8) die("truncated vault");
    uint64_t declared = 0;
    for (int i = 0; i < 8; i++) declared |= (uint64_t)plain[i] << (8 * i);
    if (declared != (uint64_t)(cursor - plain - 8)) die("bad length");
    free(file);
    *content_length = (size_t)declared;
    return plain;
}

/* The record of `name` in content (8-byte prefix included), or NULL. */
static unsigned char *find(unsigned char *content, size_t length, const char *name, size_t *record_length) {
    size_t name_length = strlen(name);
    unsigned char *cursor = content + 8, *end = content + 8 + length;
    while (cursor < end) {
        unsigned char *newline = memchr(cursor, '\n', (size_t)(end - cursor));
        if (!newline) break;
        if ((size_t)(newline - cursor) > name_length && cursor[name_length] == '\t' && memcmp(cursor, name, name_length) == 0) {
            *record_length = (size_t)(newline - cursor) + 1;
            return cursor;
        }
        cursor = newline + 1;
    }
    return NULL;
}

static void write_out(const void *bytes, size_t length) {
    if (fwrite(bytes, 1, length, stdout) != length) die("write");
}

int main(int argc, char **argv) {
    if (sodium_init() < 0) die("sodium_init");
    if (argc >= 7 && strcmp(argv[1], "create") == 0) {
        uint32_t settings[3] = {(uint32_t)atoi(argv[4]), (uint32_t)atoi(argv[5]), (uint32_t)atoi(argv[6])};
        unsigned char salt[16], key[32];
        randombytes_buf(salt, sizeof salt);
        derive(key, argv[3], salt, settings[0], settings[1], settings[2]);
        size_t length;
        unsigned char *records = read_all(0, &length);
        int fd = open(argv[2], O_WRONLY | O_CREAT | O_EXCL, 0600);
        if (fd < 0) die(argv[2]);
        seal(fd, salt, settings, key, records, length);
        if (fsync(fd) != 0 || close(fd) != 0) die("fsync");
        return 0;
    }
    if (argc < 4) {
        fputs("usage: floor create|get|list|set FILE PWFILE ...\n", stderr);
        return 64;
    }
    const char *path = argv[2];
    unsigned char key[32], salt[16];
    uint32_t settings[3];
    size_t length, record_length;
    if (strcmp(argv[1], "get") == 0 && argc == 5) {
        unsigned char *content = open_vault(path, argv[3], &length, key, salt, settings);
        unsigned char *record = find(content, length, argv[4], &record_length);
        if (!record) { fprintf(stderr, "floor: no entry %s\n", argv[4]); return 1; }
        /* The value: from after the name's tab to the next tab (fields follow) or the newline. */
        unsigned char *value = record + strlen(argv[4]) + 1, *newline = record + record_length - 1;
        unsigned char *tab = memchr(value, '\t', (size_t)(newline - value));
        write_out(value, (size_t)((tab ? tab : newline) - value));
        write_out("\n", 1);
        return 0;
    }
    if (strcmp(argv[1], "list") == 0) {
        unsigned char *content = open_vault(path, argv[3], &length, key, salt, settings);
        unsigned char *cursor = content + 8, *end = content + 8 + length;
        while (cursor < end) {
            unsigned char *tab = memchr(cursor, '\t', (size_t)(end - cursor));
            unsigned char *newline = tab ? memchr(tab, '\n', (size_t)(end - tab)) : NULL;
            if (!newline) break;
            write_out(cursor, (size_t)(tab - cursor));
            write_out("\n", 1);
            cursor = newline + 1;
        }
        return 0;
    }
    if (strcmp(argv[1], "set") == 0 && argc == 5) {
        char lock_path[4096];
        snprintf(lock_path, sizeof lock_path, "%s.lock", path);
        int lock = open(lock_path, O_RDWR | O_CREAT, 0600);
        if (lock < 0 || flock(lock, LOCK_EX) != 0) die("lock");
        size_t value_length;
        unsigned char *value = read_all(0, &value_length);
        unsigned char *content = open_vault(path, argv[3], &length, key, salt, settings);
        size_t name_length = strlen(argv[4]);
        unsigned char *record = find(content, length, argv[4], &record_length);
        size_t kept = record ? length - record_length : length;
        unsigned char *updated = malloc(kept + name_length + value_length + 2);
        if (!updated) die("out of memory");
        if (record) {
            size_t before = (size_t)(record - (content + 8));
            memcpy(updated, content + 8, before);
            memcpy(updated + before, record + record_length, length - before - record_length);
        } else {
            memcpy(updated, content + 8, length);
        }
        unsigned char *cursor = updated + kept;
        memcpy(cursor, argv[4], name_length);
        cursor[name_length] = '\t';
        memcpy(cursor + name_length + 1, value, value_length);
        cursor[name_length + 1 + value_length] = '\n';
        char temp_path[4096];
        snprintf(temp_path, sizeof temp_path, "%s.tmp-floor", path);
        int fd = open(temp_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0) die(temp_path);
        seal(fd, salt, settings, key, updated, kept + name_length + value_length + 2);
        if (fsync(fd) != 0 || close(fd) != 0) die("fsync");
        if (rename(temp_path, path) != 0) die("rename");
        char folder_path[4096];
        snprintf(folder_path, sizeof folder_path, "%s", path);
        int folder = open(dirname(folder_path), O_RDONLY | O_DIRECTORY);
        if (folder < 0 || fsync(folder) != 0) die("fsync folder");
        return 0;
    }
    fputs("usage: floor create|get|list|set FILE PWFILE ...\n", stderr);
    return 64;
}
