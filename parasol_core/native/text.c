/* Writing text in bulk (see parasol_core/syntax/bulk_text.py).
 *
 * parasol_interleave writes n rows of k columns one after another into out: column j
 * of every row is spec[j] < 0, the constant text number -spec[j] - 1 (consts[c_off[c]
 * .. c_off[c + 1]]), or spec[j] >= 0, the decimal text of ints[i * m + spec[j]] (as
 * Python's str of an int writes it: a '-' before a negative number). It returns the
 * characters written, or -1 when they would pass cap (nothing beyond cap is written).
 * It is what bulk_text._interleave does with slices and str.join, for the canonical
 * text of a generated topology's million link sections and `p[i]` lines.
 */

#include <stdint.h>
#include <string.h>

static int64_t decimal(int64_t v, char *to) {
    char digits[20];
    int n = 0, neg = v < 0;
    uint64_t u = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        digits[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    int64_t w = 0;
    if (neg) to[w++] = '-';
    while (n) to[w++] = digits[--n];
    return w;
}

int64_t parasol_interleave(int64_t n, int64_t k, const int64_t *spec, const char *consts,
                           const int64_t *c_off, const int64_t *ints, int64_t m, char *out,
                           int64_t cap) {
    int64_t p = 0;
    for (int64_t i = 0; i < n; i++) {
        for (int64_t j = 0; j < k; j++) {
            int64_t s = spec[j];
            if (s < 0) {
                int64_t c = -s - 1, len = c_off[c + 1] - c_off[c];
                if (p + len > cap) return -1;
                memcpy(out + p, consts + c_off[c], (size_t)len);
                p += len;
            } else {
                if (p + 21 > cap) return -1;
                p += decimal(ints[i * m + s], out + p);
            }
        }
    }
    return p;
}
