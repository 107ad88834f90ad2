/* Writes a Pwned Passwords file of N lines sorted by SHA-1 hash ("HASH:COUNT\r\n", as the
 * official downloader's single file), for bench/audit.sh:
 *   hibp-gen N PLANTED OUT
 * PLANTED holds "HASH:COUNT" lines (upper case, sorted) merged in where they belong; the other
 * hashes are spread evenly over the 160-bit space with random low bits, their counts small as in
 * the real file (most passwords were seen a few times). Deterministic for one N and PLANTED. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t state = 0x9E3779B97F4A7C15ull;
static uint64_t next(void) { /* splitmix64 */
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: hibp-gen N PLANTED OUT\n"); return 64; }
    uint64_t n = strtoull(argv[1], NULL, 10);
    FILE *planted = fopen(argv[2], "r"), *out = fopen(argv[3], "w");
    if (!planted || !out) { perror("hibp-gen"); return 1; }
    static char buffer[1 << 22];
    setvbuf(out, buffer, _IOFBF, sizeof buffer);
    char plant[128] = "";
    int havePlant = fgets(plant, sizeof plant, planted) != NULL;
    uint64_t step = UINT64_MAX / n;
    char line[128];
    for (uint64_t i = 0; i < n; i++) {
        uint64_t high = i * step + next() % step, mid = next(), low = next();
        uint64_t count = next() % 100 < 90 ? 1 + next() % 9 : 1 + next() % 100000;
        int length = snprintf(line, sizeof line, "%016llX%016llX%08llX:%llu\r\n", (unsigned long long)high,
                              (unsigned long long)mid, (unsigned long long)(low >> 32), (unsigned long long)count);
        while (havePlant && strncmp(plant, line, 40) < 0) {
            plant[strcspn(plant, "\r\n")] = 0;
            fprintf(out, "%s\r\n", plant);
            havePlant = fgets(plant, sizeof plant, planted) != NULL;
        }
        fwrite(line, 1, (size_t)length, out);
    }
    while (havePlant) {
        plant[strcspn(plant, "\r\n")] = 0;
        fprintf(out, "%s\r\n", plant);
        havePlant = fgets(plant, sizeof plant, planted) != NULL;
    }
    if (fclose(out) != 0) { perror("hibp-gen"); return 1; }
    return 0;
}
