/* The common lines of a SimGrid time-independent trace file read into columns
 * (parasol_core/replay/tifile.py, whose _fast and _action read the same lines with
 * Python's int and float: this kernel is held equal to them). Plain C, no Python.h.
 *
 * The text is ASCII without underscores (the caller checks). Lines end with '\n';
 * words are separated by spaces and tabs. A file with any other line break or blank
 * Python would split on (\r \v \f \x1c-\x1f) is left to Python (returns -1), and so is
 * a file with a line this kernel does not read: another action (the v-collectives,
 * comm_*), another number of words, a number out of range or not in
 * plain decimal, an unknown datatype, a rank other than `expect` (>= 0). Python then
 * reads the file and words any error.
 *
 * Output per action: rank, kind (numbers passed in `kinds`, in the order of NAMES
 * below), peer, tag, size, size2, flops, line (1-based). Returns the count. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *NAMES[] = {"init",   "finalize", "compute",   "send",    "isend",
                              "recv",   "irecv",    "wait",      "waitall", "bcast",
                              "reduce", "allreduce", "alltoall", "allgather", "gather",
                              "scatter", "barrier", "sendRecv"};
enum { INIT, FINALIZE, COMPUTE, SEND, ISEND, RECV, IRECV, WAIT, WAITALL, BCAST, REDUCE,
       ALLREDUCE, ALLTOALL, ALLGATHER, GATHER, SCATTER, BARRIER, SENDRECV, NNAMES };

#define MAXW 8
#define TOP 9007199254740992.0 /* 2^53 */
static const int DT[] = {8, 4, 1, 2, 8, 4, 1};

static int word_is(const char *w, size_t n, const char *name) {
    return strlen(name) == n && memcmp(w, name, n) == 0;
}

/* a whole number as Python's int reads a plain ASCII word ([+-]digits); up to 18 digits
 * summed here (no overflow: 10^18 < 2^63), longer ones left to strtoll */
static int read_int_any(const char *w, size_t n, int64_t *out) {
    char buf[32];
    if (n == 0 || n >= sizeof buf)
        return 0;
    size_t i = (w[0] == '+' || w[0] == '-') ? 1 : 0;
    if (i == n)
        return 0;
    int64_t v = 0;
    for (size_t j = i; j < n; j++) {
        if (w[j] < '0' || w[j] > '9')
            return 0;
        v = v * 10 + (w[j] - '0');
    }
    if (n - i <= 18) {
        *out = w[0] == '-' ? -v : v;
        return 1;
    }
    memcpy(buf, w, n);
    buf[n] = 0;
    errno = 0;
    char *end;
    long long x = strtoll(buf, &end, 10);
    if (errno || *end)
        return 0;
    *out = (int64_t)x;
    return 1;
}

/* a whole number of a trace: one past 2^53 either way is not read here, as Python refuses
 * it (tifile._int, "overflows") and words it (a sendRecv's source of 2^53 + 1 was read
 * here and refused later as out of range, another error than Python's) */
static int read_int(const char *w, size_t n, int64_t *out) {
    if (!read_int_any(w, n, out))
        return 0;
    return *out <= (int64_t)TOP && *out >= -(int64_t)TOP;
}

/* a decimal number as Python's float reads it (strtod rounds correctly too); no hex,
 * no inf or nan (they fail the range checks in Python as well). Plain digits, at most
 * 15 of them, are a whole number below 2^53: summed here, exactly (what strtod gives),
 * the rest left to strtod. */
static int read_float(const char *w, size_t n, double *out) {
    char buf[64];
    if (n == 0 || n >= sizeof buf)
        return 0;
    if (n <= 15) {
        int64_t v = 0;
        size_t j = 0;
        for (; j < n && w[j] >= '0' && w[j] <= '9'; j++)
            v = v * 10 + (w[j] - '0');
        if (j == n) {
            *out = (double)v;
            return 1;
        }
    }
    int digits = 0;
    for (size_t j = 0; j < n; j++) {
        char c = w[j];
        if (c >= '0' && c <= '9')
            digits = 1;
        else if (!(c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'))
            return 0;
    }
    if (!digits)
        return 0;
    memcpy(buf, w, n);
    buf[n] = 0;
    char *end;
    double v = strtod(buf, &end);
    if (*end)
        return 0;
    *out = v;
    return 1;
}

static int count_of(const char *w, size_t n, double *out) { /* _count */
    double v;
    if (!read_float(w, n, &v) || !(v >= 0 && v <= TOP))
        return 0;
    *out = v;
    return 1;
}

static int dt_of(const char *w[], const size_t *n, int nw, int at, int *size) { /* _dt */
    if (nw <= at) { /* none named: MPI_BYTE, as SMPI's replay (DEFAULT_DATATYPE) */
        *size = 1;
        return 1;
    }
    int64_t k;
    if (!read_int(w[at], n[at], &k) || k < 0 || k > 6)
        return 0;
    *size = DT[k];
    return 1;
}

static int bytes_of(double count, int size, double *out) { /* _bytes */
    double v = count * size;
    if (!(v <= TOP))
        return 0;
    *out = v;
    return 1;
}

int64_t parasol_ti_scan(const char *text, int64_t len, int64_t expect, const int64_t *kinds,
                        int64_t cap, int64_t *rank, int64_t *kind, int64_t *peer, int64_t *tag,
                        double *size, double *size2, double *flops, int64_t *line) {
    for (int64_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '\r' || c == '\v' || c == '\f' || (c >= 0x1c && c <= 0x1f))
            return -1;
    }
    int64_t m = 0, n = 0, pos = 0;
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', (size_t)(len - pos));
        int64_t eol = nl ? nl - text : len;
        n++;
        const char *w[MAXW + 1];
        size_t wl[MAXW + 1];
        int nw = 0;
        int64_t p = pos;
        while (p < eol) {
            while (p < eol && (text[p] == ' ' || text[p] == '\t'))
                p++;
            if (p >= eol)
                break;
            int64_t s = p;
            while (p < eol && text[p] != ' ' && text[p] != '\t')
                p++;
            if (nw == MAXW + 1)
                return -1; /* more words than any line read here */
            w[nw] = text + s;
            wl[nw] = (size_t)(p - s);
            nw++;
        }
        pos = eol + 1;
        if (nw == 0 || w[0][0] == '#')
            continue;
        if (nw < 2 || m == cap)
            return -1;
        int64_t r;
        if (!read_int(w[0], wl[0], &r) || r < 0 || (expect >= 0 && r != expect))
            return -1;
        int name = -1;
        for (int k = 0; k < NNAMES; k++)
            if (NAMES[k][0] == w[1][0] && word_is(w[1], wl[1], NAMES[k])) {
                name = k;
                break;
            }
        int64_t pe = -1, tg = 0;
        double sz = 0, sz2 = 0, fl = 0, c1, c2;
        int d1, d2;
        switch (name) {
        case INIT:
            break;
        case FINALIZE:
        case BARRIER:
            if (nw != 2)
                return -1;
            break;
        case COMPUTE:
            if (nw != 3 || !count_of(w[2], wl[2], &fl))
                return -1;
            break;
        case SEND:
        case ISEND:
        case RECV:
        case IRECV:
            if ((nw != 5 && nw != 6) || !read_int(w[2], wl[2], &pe) || pe < 0 ||
                !read_int(w[3], wl[3], &tg) || tg > TOP || tg < -TOP ||
                !count_of(w[4], wl[4], &c1) || !dt_of(w, wl, nw, 5, &d1) || !bytes_of(c1, d1, &sz))
                return -1;
            break;
        case WAIT: {
            int64_t dst;
            if (nw != 5 || !read_int(w[2], wl[2], &pe) || !read_int(w[3], wl[3], &dst) ||
                !read_int(w[4], wl[4], &tg) || tg > TOP || tg < -TOP || dst > TOP || dst < -TOP ||
                pe > TOP)
                return -1;
            if (pe == -333)
                pe = -555;
            if (pe < -1 && pe != -555)
                return -1;
            sz2 = (double)dst;
            break;
        }
        case WAITALL: {
            int64_t k;
            if (nw > 3 || (nw == 3 && (!read_int(w[2], wl[2], &k) || k > TOP || k < -TOP)))
                return -1;
            break;
        }
        case BCAST: /* N ROOT [DT] */
            if ((nw != 4 && nw != 5) || !count_of(w[2], wl[2], &c1) || !dt_of(w, wl, nw, 4, &d1) ||
                !bytes_of(c1, d1, &sz) || !read_int(w[3], wl[3], &pe) || pe < 0 || pe > TOP)
                return -1;
            break;
        case REDUCE: /* N F ROOT [DT] */
            if ((nw != 5 && nw != 6) || !count_of(w[2], wl[2], &c1) || !dt_of(w, wl, nw, 5, &d1) ||
                !bytes_of(c1, d1, &sz) || !count_of(w[3], wl[3], &fl) ||
                !read_int(w[4], wl[4], &pe) || pe < 0 || pe > TOP)
                return -1;
            break;
        case ALLREDUCE: /* N F [DT] */
            if ((nw != 4 && nw != 5) || !count_of(w[2], wl[2], &c1) || !dt_of(w, wl, nw, 4, &d1) ||
                !bytes_of(c1, d1, &sz) || !count_of(w[3], wl[3], &fl))
                return -1;
            break;
        case ALLTOALL:
        case ALLGATHER: /* N M [DT DT] */
            if (nw < 4 || nw > 6 || !dt_of(w, wl, nw, 4, &d1) || !dt_of(w, wl, nw, 5, &d2) ||
                !count_of(w[2], wl[2], &c1) || !bytes_of(c1, d1, &sz) ||
                !count_of(w[3], wl[3], &c2) || !bytes_of(c2, d2, &sz2))
                return -1;
            break;
        case GATHER:
        case SCATTER: /* N M ROOT [DT DT] */
            if (nw < 5 || nw > 7 || !dt_of(w, wl, nw, 5, &d1) || !dt_of(w, wl, nw, 6, &d2) ||
                !count_of(w[2], wl[2], &c1) || !bytes_of(c1, d1, &sz) ||
                !count_of(w[3], wl[3], &c2) || !bytes_of(c2, d2, &sz2) ||
                !read_int(w[4], wl[4], &pe) || pe < 0 || pe > TOP)
                return -1;
            break;
        case SENDRECV: /* N DST M SRC [DT DT]; the source kept in the tag column */
            if (nw < 6 || nw > 8 || !dt_of(w, wl, nw, 6, &d1) || !dt_of(w, wl, nw, 7, &d2) ||
                !count_of(w[2], wl[2], &c1) || !bytes_of(c1, d1, &sz) ||
                !read_int(w[3], wl[3], &pe) || pe < 0 || pe > TOP ||
                !count_of(w[4], wl[4], &c2) || !bytes_of(c2, d2, &sz2) ||
                !read_int(w[5], wl[5], &tg) || tg < 0 || tg > TOP)
                return -1;
            break;
        default:
            return -1;
        }
        rank[m] = r;
        kind[m] = kinds[name];
        peer[m] = pe;
        tag[m] = tg;
        size[m] = sz;
        size2[m] = sz2;
        flops[m] = fl;
        line[m] = n;
        m++;
    }
    return m;
}
