/* The fast path's link-list scan in C (see parasol_core/syntax/fastscan.py).
 *
 * parasol_scan_links reads the body of a `begin linklist` section, text[start:end] of an
 * ASCII text (so byte offsets are character offsets), as the regular expression
 * fastscan.LINK_RE does, applied back to back from start to end:
 *
 *     [ \t]*begin[ \t]+link[ \t]*\n
 *     [ \t]*id[ \t]*=[ \t]*(\d+)[ \t]*\n
 *     [ \t]*latency[ \t]*=[ \t]*(LOOSE)[ \t]*\n
 *     [ \t]*speed[ \t]*=[ \t]*(LOOSE)[ \t]*\n
 *     [ \t]*connect[ \t]*=[ \t]*(\d+(?:[ \t]+\d+)+)[ \t]*\n
 *     [ \t]*end[ \t]+link[ \t]*\n
 *
 * with LOOSE = [^\s#;]+(?:[ \t]+[^\s#;]+)?. It is stricter, never looser: it takes a
 * LOOSE word of printable characters only, numbers of at most 18 digits, and a connect
 * line whose first number counts the others; on anything else it returns -1 and the
 * caller reads the body with the regular expression, which decides. So whenever it
 * succeeds, the regular expression reads the same links from the same text.
 *
 * For link i it writes 8 numbers to rec[8i..8i+7]: the offset of its `begin` line, its
 * id, the start and end of the latency text and of the speed text, and the index in
 * `numbers` of its first connect number and how many there are (the count is not
 * stored). A latency or speed text equal to an earlier one (of the first DISTINCT
 * different texts) is given the span of the earlier one. It returns the number of links, -1 as above, or -2 when rec or numbers is
 * too small (the caller retries with more room).
 */

#include <stdint.h>
#include <string.h>

#define MAX_DIGITS 18

typedef struct {
    const char *t;
    int64_t p;
    int64_t end;
} cursor;

static void blanks(cursor *c) {
    while (c->p < c->end && (c->t[c->p] == ' ' || c->t[c->p] == '\t')) c->p++;
}

/* [ \t]*WORD: returns 1 and moves past WORD, or 0 */
static int word(cursor *c, const char *w) {
    int64_t n = (int64_t)strlen(w);
    blanks(c);
    if (c->end - c->p < n || memcmp(c->t + c->p, w, (size_t)n) != 0) return 0;
    c->p += n;
    return 1;
}

/* [ \t]*\n */
static int eol(cursor *c) {
    blanks(c);
    if (c->p >= c->end || c->t[c->p] != '\n') return 0;
    c->p++;
    return 1;
}

/* \d{1,18}: returns 1 and the value, or 0 (no digit, or more than 18) */
static int number(cursor *c, int64_t *value) {
    int64_t v = 0;
    int n = 0;
    while (c->p < c->end && c->t[c->p] >= '0' && c->t[c->p] <= '9') {
        if (++n > MAX_DIGITS) return 0;
        v = v * 10 + (c->t[c->p] - '0');
        c->p++;
    }
    *value = v;
    return n > 0;
}

static int loose_char(char ch) {
    return ch > ' ' && ch < 127 && ch != '#' && ch != ';';
}

/* one LOOSE word: returns 1 and moves past it, or 0 */
static int loose_word(cursor *c) {
    int64_t s = c->p;
    while (c->p < c->end && loose_char(c->t[c->p])) c->p++;
    return c->p > s;
}

/* [ \t]*KEY[ \t]*=[ \t]* */
static int key_eq(cursor *c);
static int key(cursor *c, const char *k) {
    return word(c, k) && key_eq(c);
}

/* [ \t]*=[ \t]* */
static int key_eq(cursor *c) {
    blanks(c);
    if (c->p >= c->end || c->t[c->p] != '=') return 0;
    c->p++;
    blanks(c);
    return 1;
}

/* LOOSE[ \t]*\n: the span of LOOSE */
static int timing_line(cursor *c, int64_t *s, int64_t *e) {
    *s = c->p;
    if (!loose_word(c)) return 0;
    *e = c->p;
    blanks(c);
    if (c->p < c->end && c->t[c->p] != '\n' && c->p > *e) {
        if (!loose_word(c)) return 0;
        *e = c->p;
    }
    return eol(c);
}

/* [ \t]+ between the keywords of `begin link` / `end link` */
static int gap(cursor *c) {
    int64_t s = c->p;
    blanks(c);
    return c->p > s;
}

/* The timing texts seen so far (most links of a model share a few): a text equal to one
 * of them is given that one's span, so the caller makes one Timing for all of them. */
#define DISTINCT 16

typedef struct {
    int64_t s[DISTINCT], e[DISTINCT];
    int n;
} distinct;

static void canonical(const char *t, distinct *d, int64_t *s, int64_t *e) {
    int64_t len = *e - *s;
    for (int j = 0; j < d->n; j++) {
        if (d->e[j] - d->s[j] == len && memcmp(t + d->s[j], t + *s, (size_t)len) == 0) {
            *s = d->s[j];
            *e = d->e[j];
            return;
        }
    }
    if (d->n < DISTINCT) {
        d->s[d->n] = *s;
        d->e[d->n] = *e;
        d->n++;
    }
}

int64_t parasol_scan_links(const char *text, int64_t start, int64_t end, int64_t cap,
                           int64_t *rec, int64_t ncap, int64_t *numbers) {
    cursor c = {text, start, end};
    distinct seen = {{0}, {0}, 0};
    int64_t n = 0, used = 0;
    while (c.p < end) {
        int64_t *r = rec + 8 * n;
        int64_t count, v;
        if (n >= cap) return -2;
        r[0] = c.p; /* the start of its line: the previous link ended with a \n */
        if (!word(&c, "begin") || !gap(&c) || !word(&c, "link") || !eol(&c)) return -1;
        if (!key(&c, "id") || !number(&c, &r[1]) || !eol(&c)) return -1;
        if (!key(&c, "latency") || !timing_line(&c, &r[2], &r[3])) return -1;
        if (!key(&c, "speed") || !timing_line(&c, &r[4], &r[5])) return -1;
        canonical(text, &seen, &r[2], &r[3]);
        canonical(text, &seen, &r[4], &r[5]);
        if (!key(&c, "connect") || !number(&c, &count)) return -1;
        r[6] = used;
        for (;;) {
            int64_t s = c.p;
            blanks(&c);
            if (c.p == s || c.p >= end || c.t[c.p] < '0' || c.t[c.p] > '9') break;
            if (!number(&c, &v)) return -1;
            if (used >= ncap) return -2;
            numbers[used++] = v;
        }
        r[7] = used - r[6];
        if (r[7] < 1 || count != r[7] || !eol(&c)) return -1;
        if (!word(&c, "end") || !gap(&c) || !word(&c, "link") || !eol(&c)) return -1;
        n++;
    }
    return n;
}

/* parasol_scan_table reads the body of a `begin procid` or `begin mapping` section,
 * text[start:end] of an ASCII text, as the regular expression fastscan._TABLE_RES[kind]
 * does, line after line:
 *
 *     ([ \t]*)KEY[ \t]*\[[ \t]*(\d{1,18})[ \t]*\][ \t]*=[ \t]*(\d{1,18})[ \t]*\n
 *
 * with KEY `p` or `map` (``key``). It is stricter, never looser: a line with a comment
 * (which the regular expression may take) makes it return -1, and the caller reads the
 * body with the regular expression, which decides.
 *
 * For line i it writes 6 numbers to rec[6i..6i+5]: the start of the line, the length of
 * its indentation, the number in brackets, the start and end of the value and the value
 * (the line ends where the next starts). It returns the number of lines, -1 as above,
 * or -2 when rec is too small.
 */
int64_t parasol_scan_table(const char *text, int64_t start, int64_t end, const char *key,
                           int64_t cap, int64_t *rec) {
    cursor c = {text, start, end};
    int64_t n = 0;
    while (c.p < end) {
        int64_t *r = rec + 6 * n;
        if (n >= cap) return -2;
        r[0] = c.p;
        blanks(&c);
        r[1] = c.p - r[0];
        if (!word(&c, key) || !word(&c, "[") || !(blanks(&c), number(&c, &r[2]))) return -1;
        if (!word(&c, "]") || !key_eq(&c)) return -1;
        r[3] = c.p;
        if (!number(&c, &r[5])) return -1;
        r[4] = c.p;
        if (!eol(&c)) return -1;
        n++;
    }
    return n;
}

/* parasol_link_timing_spans finds, for each of n links whose sections start at
 * starts[i] of an ASCII text of len characters, the spans of its latency and speed
 * texts: out[4i..4i+3] = latency start, end, speed start, end (the LOOSE texts of the
 * fast path's form, as parasol_scan_links reads them), or four -1s where the section's
 * first four lines are not of that form (the caller then reads it with the regular
 * expression linktext.LINK_POS_RE). A save uses them to rewrite the timings of many
 * links edited in bulk (parasol_core/syntax/writer.py). */
void parasol_link_timing_spans(const char *text, int64_t len, const int64_t *starts,
                               int64_t n, int64_t *out) {
    for (int64_t i = 0; i < n; i++) {
        int64_t *o = out + 4 * i;
        int64_t id, a, b, d, e;
        cursor c = {text, starts[i], len};
        o[0] = o[1] = o[2] = o[3] = -1;
        if (starts[i] < 0 || starts[i] >= len) continue;
        if (!word(&c, "begin") || !gap(&c) || !word(&c, "link") || !eol(&c)) continue;
        if (!key(&c, "id") || !number(&c, &id) || !eol(&c)) continue;
        if (!key(&c, "latency") || !timing_line(&c, &a, &b)) continue;
        if (!key(&c, "speed") || !timing_line(&c, &d, &e)) continue;
        o[0] = a;
        o[1] = b;
        o[2] = d;
        o[3] = e;
    }
}
