/* The event trace of a communication phase (parasol_core/simulate/trace.py), in one
 * call: plain C, no Python.h, loaded with ctypes by parasol_core.native.
 *
 * It does what _Trace.run() does, step for step, so that both give the same numbers:
 * the same events (ends within END_RTOL of the earliest taken together, the starts at
 * or before an event's time taken with it), the same choice between bringing the state
 * up to date one message at a time (``one``) and as a batch (``change``), and the same
 * floating-point formulas in the same order:
 *
 *   a new message:            end = (t + latency) + bytes * rate
 *   a rate that changed:      end = go + (end - go) * (rate / c),  go = max(t, tx)
 *   ... after one message ended, one at a time: the smaller of that and the old end
 *   a link's busy time:       the sum, in time order, of the gaps between its load
 *                             changes during which its load was positive
 *
 * rate = max(speed(l) * n(l) for l in route): c, a message's seconds per byte, is always
 * exactly that maximum, so only a message on a changed link can see it move: on a link
 * that got busier, one whose c is below its new weight; on one that got quieter, one
 * whose c equalled its old weight.
 *
 * Data: message i crosses the distinct link slots u_flat[u_start[i] .. + u_hops[i]]
 * ("crossings" k); slot nlinks is a sentinel with speed 0. Messages waiting for nobody
 * start in the order of `queue` (sorted by start time); the others (wait_count[i] > 0)
 * are released when the last of those they wait for ends (dependents of i:
 * dependents[dep_ptr[i] .. dep_ptr[i+1]]) and go on a heap keyed (ready time, index).
 */

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "phase_io.h"

#define END_RTOL 1e-12
#define SMALL_EVENT 8
#define FEW 64

typedef struct {
    double when;
    int64_t j;
} Ready;

typedef struct {
    PHASE_IO_FIELDS /* the arguments: input, and output (phase_io.h) */
    /* per crossing */
    int64_t *which; /* its message */
    int64_t *lpos;  /* where it is in lst */
    /* per link slot */
    int64_t *first; /* its list: lst[first[l] .. first[l] + load[l]] (messages) */
    int32_t *lst;
    int64_t *lk;    /* beside each list entry, its crossing */
    int32_t *route; /* u_flat, 32-bit */
    int64_t *load;
    double *w;     /* speed * load */
    double *wold;  /* scratch: the weight before this event */
    double *since; /* when its load last changed */
    int64_t *acc;  /* scratch: this event's change of load */
    int64_t *lmark;
    int64_t *touched;
    /* per message */
    double *c, *cpred, *tx, *ready, *cold;
    uint8_t *inflight;
    int64_t *left;  /* how many it still waits for */
    int64_t *mmark; /* scratch: looked at in this event (an epoch) */
    int64_t *look;
    int64_t *ending, *starting, *batch;
    /* the predicted ends (infinite for a message not in flight) in blocks of BLOCK, with
     * a lower bound per block (bmin) and per group of BLOCK blocks (gmin): an end moving
     * earlier lowers both at once; one moving later, or a message ending, leaves them
     * low, and they are made exact when they would be used */
    double *bmin, *gmin;
    int64_t nblocks, ngroups;
    /* the released messages waiting for their start */
    Ready *rheap;
    int64_t rn;
    int64_t count, epoch, lepoch;
} Trace;

/* ------------------------------------------------------------------ predicted ends */

#define BLOCK 64

/* cpred[i] was set to v */
static inline void set_end(Trace *s, int64_t i, double v) {
    s->cpred[i] = v;
    int64_t b = i / BLOCK;
    if (v < s->bmin[b]) {
        s->bmin[b] = v;
        if (v < s->gmin[b / BLOCK])
            s->gmin[b / BLOCK] = v;
    }
}

static inline int64_t argmin(const double *x, int64_t n) {
    int64_t k = 0;
    for (int64_t q = 1; q < n; q++)
        if (x[q] < x[k])
            k = q;
    return k;
}

static inline int64_t group_blocks(const Trace *s, int64_t g) {
    int64_t n = s->nblocks - g * BLOCK;
    return n < BLOCK ? n : BLOCK;
}

/* the smallest predicted end (infinite when none is in flight): the bounds on the way
 * to it made exact */
static double next_end(Trace *s) {
    for (;;) {
        int64_t g = argmin(s->gmin, s->ngroups);
        double bound = s->gmin[g];
        if (bound == INFINITY)
            return INFINITY;
        double *bm = s->bmin + g * BLOCK;
        int64_t b = argmin(bm, group_blocks(s, g));
        if (bm[b] != bound) { /* the group's bound was low */
            s->gmin[g] = bm[b];
            continue;
        }
        const double *row = s->cpred + (g * BLOCK + b) * BLOCK;
        double exact = row[argmin(row, BLOCK)];
        if (exact != bound) { /* the block's bound was low */
            bm[b] = exact;
            s->gmin[g] = bm[argmin(bm, group_blocks(s, g))];
            continue;
        }
        if (exact != exact)
            return NAN;
        return exact;
    }
}

/* the messages in flight predicted to end by `limit`, in order, taken out (their ends
 * kept in s->end); the bounds of the blocks looked at made exact */
static int64_t take_ends(Trace *s, double limit) {
    int64_t n = 0;
    for (int64_t g = 0; g < s->ngroups; g++) {
        if (!(s->gmin[g] <= limit))
            continue;
        double *bm = s->bmin + g * BLOCK, glow = INFINITY;
        for (int64_t b = 0, nb = group_blocks(s, g); b < nb; b++) {
            if (bm[b] <= limit) {
                double *row = s->cpred + (g * BLOCK + b) * BLOCK, low = INFINITY;
                for (int64_t q = 0; q < BLOCK; q++) {
                    if (row[q] <= limit) {
                        int64_t i = (g * BLOCK + b) * BLOCK + q;
                        s->ending[n++] = i;
                        s->end[i] = row[q];
                        row[q] = INFINITY;
                    } else if (row[q] < low) {
                        low = row[q];
                    }
                }
                bm[b] = low;
            }
            if (bm[b] < glow)
                glow = bm[b];
        }
        s->gmin[g] = glow;
    }
    return n;
}

/* ------------------------------------------------------------------ released messages */

static inline int ready_less(Ready a, Ready b) {
    return a.when < b.when || (a.when == b.when && a.j < b.j);
}

static void rheap_push(Trace *s, double when, int64_t j) {
    Ready x = {when, j};
    int64_t p = s->rn++;
    while (p > 0) {
        int64_t q = (p - 1) / 2;
        if (!ready_less(x, s->rheap[q]))
            break;
        s->rheap[p] = s->rheap[q];
        p = q;
    }
    s->rheap[p] = x;
}

static int64_t rheap_pop(Trace *s) {
    Ready top = s->rheap[0], x = s->rheap[--s->rn];
    int64_t p = 0, n = s->rn;
    for (;;) {
        int64_t q = 2 * p + 1;
        if (q >= n)
            break;
        if (q + 1 < n && ready_less(s->rheap[q + 1], s->rheap[q]))
            q++;
        if (!ready_less(s->rheap[q], x))
            break;
        s->rheap[p] = s->rheap[q];
        p = q;
    }
    if (n > 0)
        s->rheap[p] = x;
    return top.j;
}

static inline int released_by(const Trace *s, double t) {
    return s->rn > 0 && s->rheap[0].when <= t;
}

/* ------------------------------------------------------------------ helpers */

/* message i ends at `at`: release those waiting for it */
static void release(Trace *s, int64_t i, double at) {
    if (!s->dep_ptr)
        return;
    for (int64_t k = s->dep_ptr[i]; k < s->dep_ptr[i + 1]; k++) {
        int64_t j = s->dependents[k];
        if (at > s->ready[j])
            s->ready[j] = at;
        if (--s->left[j] == 0)
            rheap_push(s, s->ready[j], j);
    }
}

/* a link's load changes at t (its busy time and largest load) */
static inline void link_change(Trace *s, int64_t l, double t, int64_t old, int64_t now) {
    if (old > 0)
        s->busy[l] += t - s->since[l];
    s->since[l] = t;
    if (now > s->max_n[l])
        s->max_n[l] = now;
}

static inline void list_add(Trace *s, int64_t l, int64_t k) {
    int64_t p = s->first[l] + s->load[l];
    s->lst[p] = (int32_t)s->which[k];
    s->lk[p] = k;
    s->lpos[k] = p;
}

/* take crossing k out of its link's list, whose length is now `now` */
static inline void list_remove(Trace *s, int64_t l, int64_t k, int64_t now) {
    int64_t p = s->lpos[k], q = s->first[l] + now, last = s->lk[q];
    s->lst[p] = s->lst[q];
    s->lk[p] = last;
    s->lpos[last] = p;
}

static inline double route_rate(const Trace *s, int64_t i) {
    const int32_t *links = s->route + s->u_start[i];
    double r = s->w[s->nlinks]; /* the sentinel: 0 */
    for (int64_t h = 0; h < s->u_hops[i]; h++) {
        double x = s->w[links[h]];
        if (x > r)
            r = x;
    }
    return r;
}

static inline int first_look(Trace *s, int64_t i) {
    if (s->mmark[i] == s->epoch)
        return 0;
    s->mmark[i] = s->epoch;
    return 1;
}

/* ------------------------------------------------------------------ one message */

/* message i starts at t (it waits for nobody left and takes time) */
static void one_start(Trace *s, double t, int64_t i) {
    int64_t a = s->u_start[i], b = a + s->u_hops[i], nl = 0;
    for (int64_t k = a; k < b; k++) {
        int64_t l = s->u_flat[k], old = s->load[l];
        list_add(s, l, k);
        s->load[l] = old + 1;
        s->w[l] = s->speed[l] * (double)(old + 1);
        link_change(s, l, t, old, old + 1);
    }
    /* on a link that got busier, those it now outweighs: their rate becomes the
     * largest such weight (the others of their route did not change) */
    s->epoch++;
    for (int64_t k = a; k < b; k++) {
        int64_t l = s->u_flat[k];
        double wl = s->w[l];
        const int32_t *L = s->lst + s->first[l];
        for (int64_t p = 0, n = s->load[l]; p < n; p++) {
            int64_t j = L[p];
            if (s->c[j] < wl) {
                if (first_look(s, j)) {
                    s->look[nl++] = j;
                    s->cold[j] = s->c[j];
                }
                s->c[j] = wl;
            }
        }
    }
    for (int64_t q = 0; q < nl; q++) {
        int64_t j = s->look[q];
        double go = s->tx[j] > t ? s->tx[j] : t;
        set_end(s, j, go + (s->cpred[j] - go) * (s->c[j] / s->cold[j]));
    }
    double tx = t + s->latency[i], rate = route_rate(s, i);
    s->t0[i] = t;
    s->tx[i] = tx;
    s->inflight[i] = 1;
    s->c[i] = rate;
    set_end(s, i, tx + s->nbytes[i] * rate);
    s->count++;
}

/* message i, ended already (out of the messages in flight), leaves its links at t */
static void one_end(Trace *s, double t, int64_t i) {
    int64_t a = s->u_start[i], b = a + s->u_hops[i], nl = 0;
    for (int64_t k = a; k < b; k++) {
        int64_t l = s->u_flat[k], old = s->load[l];
        list_remove(s, l, k, old - 1);
        s->load[l] = old - 1;
        s->wold[l] = s->w[l];
        s->w[l] = s->speed[l] * (double)(old - 1);
        link_change(s, l, t, old, old - 1);
    }
    /* on a link that got quieter, those whose rate it set */
    s->epoch++;
    for (int64_t k = a; k < b; k++) {
        int64_t l = s->u_flat[k];
        double wo = s->wold[l];
        if (!(wo > 0))
            continue; /* a link of speed 0 sets no rate that can move */
        const int32_t *L = s->lst + s->first[l];
        for (int64_t p = 0, n = s->load[l]; p < n; p++) {
            int64_t j = L[p];
            if (s->c[j] == wo && first_look(s, j))
                s->look[nl++] = j;
        }
    }
    for (int64_t q = 0; q < nl; q++) {
        int64_t j = s->look[q];
        double rate = route_rate(s, j), go = s->tx[j] > t ? s->tx[j] : t;
        double before = s->cpred[j], after = go + (before - go) * (rate / s->c[j]);
        s->c[j] = rate;
        set_end(s, j, after < before ? after : before);
    }
}

/* ------------------------------------------------------------------ a batch */

/* First sight of link l in this batch: its load change starts at 0, and it joins the
   list of links touched. */
static inline void touch_link(Trace *s, int64_t l, int64_t *nt) {
    if (s->lmark[l] != s->lepoch) {
        s->lmark[l] = s->lepoch;
        s->acc[l] = 0;
        s->touched[(*nt)++] = l;
    }
}

static void change(Trace *s, double t, const int64_t *starting, int64_t ns,
                   const int64_t *ending, int64_t ne) {
    int64_t nt = 0, nl = 0;
    for (int64_t q = 0; q < ns; q++) {
        int64_t i = starting[q];
        s->tx[i] = t + s->latency[i];
        s->c[i] = NAN; /* not rated yet */
        s->inflight[i] = 1;
    }
    s->count += ns;
    s->lepoch++;
    for (int64_t q = 0; q < ne; q++) {
        int64_t i = ending[q];
        for (int64_t k = s->u_start[i], b = k + s->u_hops[i]; k < b; k++) {
            int64_t l = s->u_flat[k];
            touch_link(s, l, &nt);
            s->acc[l]--;
            list_remove(s, l, k, --s->load[l]);
        }
    }
    for (int64_t q = 0; q < ns; q++) {
        int64_t i = starting[q];
        for (int64_t k = s->u_start[i], b = k + s->u_hops[i]; k < b; k++) {
            int64_t l = s->u_flat[k];
            touch_link(s, l, &nt);
            s->acc[l]++;
            list_add(s, l, k);
            s->load[l]++;
        }
    }
    /* the links whose load changed: weights, busy times (the lists are up to date) */
    int64_t nc = 0;
    for (int64_t q = 0; q < nt; q++) {
        int64_t l = s->touched[q], d = s->acc[l];
        if (d == 0)
            continue;
        s->touched[nc++] = l;
        int64_t now = s->load[l];
        s->wold[l] = s->w[l];
        s->w[l] = s->speed[l] * (double)now;
        link_change(s, l, t, now - d, now);
    }
    if (!s->count)
        return;
    s->epoch++;
    for (int64_t q = 0; q < nc; q++) {
        int64_t l = s->touched[q];
        const int32_t *L = s->lst + s->first[l];
        double wn = s->w[l], wo = s->wold[l];
        int up = s->acc[l] > 0;
        if (!up && !(wo > 0))
            continue;
        for (int64_t p = 0, n = s->load[l]; p < n; p++) {
            int64_t j = L[p];
            double cj = s->c[j];
            if ((up ? cj < wn : cj == wo) && first_look(s, j))
                s->look[nl++] = j;
        }
    }
    for (int64_t q = 0; q < ns; q++)
        if (first_look(s, starting[q]))
            s->look[nl++] = starting[q];
    for (int64_t q = 0; q < nl; q++) {
        int64_t j = s->look[q];
        double rate = route_rate(s, j), cj = s->c[j];
        if (rate == cj)
            continue;
        if (cj != cj) {
            set_end(s, j, s->tx[j] + s->nbytes[j] * rate);
        } else {
            double go = s->tx[j] > t ? s->tx[j] : t;
            set_end(s, j, go + (s->cpred[j] - go) * (rate / cj));
        }
        s->c[j] = rate;
    }
}

/* the messages that start at t: `batch` (n of them, from the queue), then those released
 * to start by t (those that take no time end at t and may release more); the ones that
 * take time go to s->starting, their count returned */
static int64_t take_starts(Trace *s, double t, int64_t *batch, int64_t n) {
    int64_t ns = 0;
    for (;;) {
        while (released_by(s, t))
            batch[n++] = rheap_pop(s);
        if (!n)
            break;
        for (int64_t q = 0; q < n; q++)
            s->t0[batch[q]] = t;
        for (int64_t q = 0; q < n; q++) {
            int64_t i = batch[q];
            if (s->instant[i]) {
                s->end[i] = t;
                release(s, i, t);
            } else {
                s->starting[ns++] = i;
            }
        }
        n = 0;
        if (!released_by(s, t))
            break;
    }
    return ns;
}

/* ------------------------------------------------------------------ the loop */

static int run(Trace *s, int64_t nqueue, const int64_t *queue, int64_t *events) {
    int64_t qpos = 0;
    *events = 0;
    for (;;) {
        double t_start = qpos < nqueue ? s->start[queue[qpos]] : INFINITY;
        if (s->rn > 0 && s->rheap[0].when < t_start)
            t_start = s->rheap[0].when;
        double t_end = next_end(s);
        if (t_end == INFINITY && t_start == INFINITY)
            break;
        if (t_end != t_end || t_start != t_start)
            return -1; /* NaN: a bug, not bad input; never loop on it */
        ++*events;
        int64_t ne = 0, ns;
        double t;
        if (t_end <= t_start) {
            t = t_end;
            double limit = t_end + END_RTOL * fabs(t_end);
            if (!(limit <= DBL_MAX)) limit = DBL_MAX; /* near the largest double: not inf, which the padding holds */
            ne = take_ends(s, limit);
            for (int64_t q = 0; q < ne; q++) {
                int64_t i = s->ending[q];
                s->c[i] = INFINITY;
                s->inflight[i] = 0;
            }
            s->count -= ne;
            for (int64_t q = 0; q < ne; q++)
                release(s, s->ending[q], s->end[s->ending[q]]);
            if (ne == 1 && s->count > FEW && !(qpos < nqueue && s->start[queue[qpos]] <= t) &&
                !released_by(s, t)) {
                one_end(s, t, s->ending[0]);
                continue;
            }
        } else {
            t = t_start;
            if (s->count >= FEW && qpos < nqueue && s->start[queue[qpos]] == t &&
                (qpos + 1 == nqueue || s->start[queue[qpos + 1]] > t) && !released_by(s, t) &&
                !s->instant[queue[qpos]]) {
                one_start(s, t, queue[qpos++]);
                continue;
            }
        }
        int64_t nb = 0;
        while (qpos < nqueue && s->start[queue[qpos]] <= t)
            s->batch[nb++] = queue[qpos++];
        ns = take_starts(s, t, s->batch, nb);
        if (s->count > FEW && ne + ns <= SMALL_EVENT) {
            for (int64_t q = 0; q < ne; q++)
                one_end(s, t, s->ending[q]);
            for (int64_t q = 0; q < ns; q++) {
                /* one_start counts it in flight */
                one_start(s, t, s->starting[q]);
            }
            continue;
        }
        change(s, t, s->starting, ns, s->ending, ne);
    }
    return s->count == 0 ? 0 : -1; /* one left in flight: its end was lost (NaN) */
}

/* ------------------------------------------------------------------ entry point */

/* Returns 0, -1 (the trace lost a predicted end: a bug) or -2 (out of memory).
 * t0, end: per message (filled); busy, max_n: per link slot, nlinks + 1 of them (zeroed
 * by the caller). wait_count, dep_ptr, dependents: all NULL when no message waits. */
int64_t parasol_phase_trace(PHASE_IO_PARAMS) {
    Trace s;
    memset(&s, 0, sizeof s);
    PHASE_IO_KEEP(s);

    int64_t crossings = phase_crossings(m, u_start, u_hops);
    size_t M = (size_t)m + 1, K = (size_t)crossings + 1, NL = (size_t)nlinks + 2;
    size_t nb = (size_t)m / BLOCK + 1, ng = nb / BLOCK + 1;
    s.nblocks = (int64_t)nb;
    s.ngroups = (int64_t)ng;
    int ok = 1;
#define ALLOC(p, n) ok &= ((p = calloc((n), sizeof *(p))) != NULL)
    ALLOC(s.which, K);
    ALLOC(s.lpos, K);
    ALLOC(s.lst, K);
    ALLOC(s.lk, K);
    ALLOC(s.first, NL);
    ALLOC(s.load, NL);
    ALLOC(s.w, NL);
    ALLOC(s.wold, NL);
    ALLOC(s.since, NL);
    ALLOC(s.acc, NL);
    ALLOC(s.lmark, NL);
    ALLOC(s.touched, NL);
    ALLOC(s.c, M);
    ALLOC(s.tx, M);
    ALLOC(s.ready, M);
    ALLOC(s.inflight, M);
    ALLOC(s.left, M);
    ALLOC(s.mmark, M);
    ALLOC(s.look, M);
    ALLOC(s.ending, M);
    ALLOC(s.starting, M);
    ALLOC(s.batch, M);
    ALLOC(s.cold, M);
    ALLOC(s.route, K);
    ALLOC(s.cpred, nb * BLOCK);
    ALLOC(s.bmin, ng * BLOCK);
    ALLOC(s.gmin, ng);
    ALLOC(s.rheap, M);
#undef ALLOC
    int64_t rc = -2;
    if (ok) {
        /* each link's list has room for every message of the phase crossing it */
        for (int64_t k = 0; k < crossings; k++)
            s.first[u_flat[k] + 1]++;
        for (int64_t l = 0; l <= nlinks; l++)
            s.first[l + 1] += s.first[l];
        for (int64_t k = 0; k < crossings; k++)
            s.route[k] = (int32_t)u_flat[k];
        for (size_t q = 0; q < nb * BLOCK; q++)
            s.cpred[q] = INFINITY;
        for (size_t q = 0; q < ng * BLOCK; q++)
            s.bmin[q] = INFINITY;
        for (size_t q = 0; q < ng; q++)
            s.gmin[q] = INFINITY;
        for (int64_t i = 0; i < m; i++) {
            for (int64_t k = u_start[i], b = k + u_hops[i]; k < b; k++)
                s.which[k] = i;
            s.c[i] = INFINITY;
            s.ready[i] = start[i];
            s.left[i] = wait_count ? wait_count[i] : 0;
            t0[i] = NAN;
            end[i] = NAN;
        }
        rc = run(&s, nqueue, queue, events);
    }
    free(s.which);
    free(s.lpos);
    free(s.lst);
    free(s.lk);
    free(s.first);
    free(s.load);
    free(s.w);
    free(s.wold);
    free(s.since);
    free(s.acc);
    free(s.lmark);
    free(s.touched);
    free(s.c);
    free(s.cpred);
    free(s.tx);
    free(s.ready);
    free(s.inflight);
    free(s.left);
    free(s.mmark);
    free(s.look);
    free(s.ending);
    free(s.starting);
    free(s.batch);
    free(s.cold);
    free(s.route);
    free(s.bmin);
    free(s.gmin);
    free(s.rheap);
    return rc;
}
