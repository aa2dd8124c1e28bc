/* The flow engine: the event trace of a communication phase over resources (link
 * directions, forwarders) with a sharing rule, in one call. Plain C, no Python.h, loaded
 * with ctypes by parasol_core/simulate/flow.py, whose Python trace (run_flow) is its
 * executable specification: the same events, the same rates to rounding (the tests hold
 * the two to 1e-9, relative).
 *
 * Data. Message i puts e_w[k] seconds a byte on resource e_res[k] for every entry k in
 * e_start[i] .. e_start[i+1] (each resource once). It has a summed
 * latency, a size in bytes, a penalty (CM02: its route's latency, 1 when that is 0;
 * otherwise 1; penalty NULL: these, from the latency) and a cap: the least seconds a byte it may take whatever the others do
 * (its fatpipe links' speed; under CM02 its route's slowest link), 0 for none (cap
 * NULL: none for any). It
 * crosses the distinct link slots u_flat[u_start[i] .. + u_hops[i]] (for the links'
 * busy times and largest loads; u_flat NULL: its resources are the directions of the
 * links it crosses, each once, 2 x slot + d, and its slots are e_res[k] >> 1). Under max with a forwarding cost, its gap entries
 * g_res[q], g_last[q] (q in g_start[i] .. g_start[i+1]) are the link directions it
 * crosses into a processor and whether it ends there (the blocked-link term).
 * Message i waits for wait_count[i] others and releases dependents[dep_ptr[i] ..
 * dep_ptr[i+1]] when it ends (dep_ptr NULL: nobody waits; wait_count NULL with dep_ptr:
 * each message waits for as many as list it among their dependents).
 * The entries' offsets and resources and the dependents and their offsets are 32-bit
 * (the caller keeps each count below 2^31); end[] is also the kernel's heap of predicted
 * ends (a message's predicted end is its end once reached; NaN for one never reached).
 * start[i] is when a message that waits for nobody starts; one that waits starts at the
 * later of start[i] and the last end it waits for plus delay[i] (delay NULL: 0; the
 * caller passes start[i] with delay[i] already added, so the later of the two is
 * start + delay or end + delay).
 *
 * Rules (docs/topology.md, "Which model answers what"):
 *
 *   max     a message in flight (its latency included) moves 1 / c bytes a second,
 *           c = max(cap, max over its entries of L(r)), L(r) the work per byte on r of
 *           every message in flight, plus the blocked-link term;
 *   maxmin  a message whose latency has passed moves at its max-min fair rate
 *           (progressive filling; capacity 1 second of work a second per resource);
 *   cm02    the same, weighted: rate = level / penalty, and capped at 1 / cap.
 *
 * Max: per resource, the messages in flight on it (a list) and the sum of their weights,
 * updated in place; at an event only the messages on a resource whose load changed can
 * change pace: on one that got busier, those below its new load; on one that got
 * quieter, those whose pace was its old load. Their pace is taken again over their
 * route.
 *
 * Max-min (incremental): every moving message keeps its rate, the level at which the
 * progressive filling froze it (rate x penalty) and what froze it (its bottleneck: a
 * resource, or its cap). When messages stop (end) or start moving, the filling is done
 * again only where it can differ from the last one: on the resources the change
 * touches, each from the lowest level at which it can differ there (for a message that
 * stops, its own level; for one that starts, 1 / the sum of w / penalty of every moving
 * message on the resource, below which it cannot fill), and on the resources of every
 * message that then freezes at another rate, or is still moving at its old level
 * because its bottleneck moved, from that level on. Such a resource is *dirty*: its
 * state at that level comes from its list (the capacity the messages frozen below take,
 * the demand of the others), and its messages not yet frozen are looked at again. The
 * others keep their rates and predicted ends exactly: nothing they meet changed. The
 * filling runs over a heap of levels (resources filling, kept lazily: a level only
 * rises as messages freeze, so a stale entry is pushed again with its level when it
 * comes out; caps; old freezing levels). A rate within 1e-12 of its old value is the
 * old value (rounding), so that rounding does not spread.
 *
 * Events: the predicted ends in an indexed heap (ends within 1e-12, relative, of the
 * earliest are one event, each at its own predicted time), the ends of latencies
 * (max-min) and the released messages in plain heaps.
 *
 * crit[j] (crit NULL: not made) is the message whose end released message j: of those it
 * waits for, the one whose end (plus j's delay) was latest, the highest numbered among
 * equals; -1 when its own start was as late as any of them or it waits for nobody (its
 * critical predecessor: what a replay's waitall waited for last).
 *
 * events[0] is the number of events, events[1] the polls of the check callback (one every
 * CHECK_WORK units of work). Returns 0; -2 when memory ran out; -3 on a NaN event time, -5 on a message left without
 * a rate (bugs, never bad input); -4 when the check callback asked to stop. */

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RTOL 1e-12
/* a change reaches down to a level lowered by this much, relative (rounding) */
#define LEVEL_SLACK 1e-9
/* units of work (an event, a message starting or ending, a heap item, a list entry looked
 * at) between two polls of the check callback: a stop lands within about a millisecond
 * however heavy the events (a lockstep trace's events each move thousands of messages) */
#define CHECK_WORK 8192
/* a resource's demand is summed again once it fell below this fraction of its sum */
#define DEMAND_DROP 1e-3
/* a rate within this of the last one, relative, is the same (rounding) */
#define CHANGE_RTOL 1e-12

enum { RULE_MAX = 0, RULE_MAXMIN = 1, RULE_CM02 = 2 };
enum { WAITING = 0, LATENT = 1, ACTIVE = 2, DONE = 3, STARTING = 4 };

typedef int (*flow_check_fn)(void);

/* ------------------------------------------------------------------ heaps */

typedef struct {
    double key;
    int64_t item;
} Item;

typedef struct {
    Item *a;
    int64_t n, cap;
} Heap;

static inline int before(Item x, Item y) { return x.key < y.key || (x.key == y.key && x.item < y.item); }

static int heap_push(Heap *h, double key, int64_t item) {
    if (h->n == h->cap) {
        int64_t cap = h->cap ? 2 * h->cap : 64;
        Item *a = realloc(h->a, (size_t)cap * sizeof(Item));
        if (!a)
            return -2;
        h->a = a;
        h->cap = cap;
    }
    Item x = {key, item};
    int64_t i = h->n++;
    while (i > 0) {
        int64_t p = (i - 1) / 2;
        if (!before(x, h->a[p]))
            break;
        h->a[i] = h->a[p];
        i = p;
    }
    h->a[i] = x;
    return 0;
}

static Item heap_pop(Heap *h) {
    Item top = h->a[0];
    Item x = h->a[--h->n];
    int64_t i = 0, n = h->n;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && before(h->a[c + 1], h->a[c]))
            c++;
        if (!before(h->a[c], x))
            break;
        h->a[i] = h->a[c];
        i = c;
    }
    if (n)
        h->a[i] = x;
    return top;
}

static inline double heap_top(const Heap *h) { return h->n ? h->a[0].key : INFINITY; }

/* an indexed min-heap of messages by predicted end */
typedef struct {
    int32_t *a;   /* heap of messages (32 bits: the caller keeps them below 2^31) */
    int32_t *pos; /* per message: where it is in a, -1 when absent */
    double *key;  /* per message (the caller's end: a message's predicted end is its end
                   * once it ends; set to NaN after the run for those that never end) */
    int64_t n;
} IHeap;

static inline int ib(const IHeap *h, int64_t i, int64_t j) {
    return h->key[i] < h->key[j] || (h->key[i] == h->key[j] && i < j);
}

static void ih_up(IHeap *h, int64_t at) {
    int64_t i = h->a[at];
    while (at > 0) {
        int64_t p = (at - 1) / 2;
        if (!ib(h, i, h->a[p]))
            break;
        h->a[at] = h->a[p];
        h->pos[h->a[at]] = (int32_t)at;
        at = p;
    }
    h->a[at] = (int32_t)i;
    h->pos[i] = (int32_t)at;
}

static void ih_down(IHeap *h, int64_t at) {
    int64_t i = h->a[at], n = h->n;
    for (;;) {
        int64_t c = 2 * at + 1;
        if (c >= n)
            break;
        if (c + 1 < n && ib(h, h->a[c + 1], h->a[c]))
            c++;
        if (!ib(h, h->a[c], i))
            break;
        h->a[at] = h->a[c];
        h->pos[h->a[at]] = (int32_t)at;
        at = c;
    }
    h->a[at] = (int32_t)i;
    h->pos[i] = (int32_t)at;
}

static void ih_set(IHeap *h, int64_t i, double key) {
    if (h->pos[i] < 0) {
        h->key[i] = key;
        h->a[h->n] = (int32_t)i;
        h->pos[i] = (int32_t)h->n++;
        ih_up(h, h->pos[i]);
        return;
    }
    double old = h->key[i];
    h->key[i] = key;
    if (key < old)
        ih_up(h, h->pos[i]);
    else if (key > old)
        ih_down(h, h->pos[i]);
}

static void ih_remove(IHeap *h, int64_t i) {
    int64_t at = h->pos[i];
    h->pos[i] = -1;
    int64_t last = h->a[--h->n];
    if (at == h->n)
        return;
    h->a[at] = (int32_t)last;
    h->pos[last] = (int32_t)at;
    ih_up(h, at);
    ih_down(h, h->pos[last]);
}

/* ------------------------------------------------------------------ the state */

/* what the loops read of a message most: kept together */
typedef struct {
    double level; /* max-min: the level it froze at (rate x penalty) */
    double rate;  /* max: seconds a byte; max-min: bytes a second */
    double ip;    /* 1 / penalty */
    int64_t mark; /* max-min: 4 x the solve it was last looked at in + its state there */
} Hot;

enum { UNTOUCHED = 0, PENDING = 1, FROZEN = 2 };
/* a message's bottleneck (max-min), when not a resource */
enum { BY_CAP = -1, BY_NOTHING = -2, NEW = -3 };

typedef struct {
    int rule;
    int64_t m, nres, nslots;
    const int32_t *e_start, *e_res; /* 32 bits: the caller keeps entries below 2^31 */
    const double *e_w;
    const double *latency, *nbytes, *penalty, *cap;
    const uint8_t *instant;
    const int64_t *u_start, *u_hops, *u_flat;
    const int64_t *g_start, *g_res;
    const uint8_t *g_last;
    const double *g_speed;
    double forward;
    const int32_t *dep_ptr, *dependents; /* (and the dependents below 2^31) */
    const double *delay; /* per message, or NULL: seconds after the last it waits for */
    double *t0, *end, *busy;
    int32_t *crit; /* per message, or NULL: the message whose end released it */
    int64_t *max_n;
    /* per message */
    Hot *hot;
    uint8_t *st;
    double *ready; /* when it may start; from its start on, tx: when its bytes start to move */
    double *tx, *rem, *anchor, *xold;
    int32_t *left, *neck; /* (the caller keeps messages and resources below 2^31) */
    int64_t *necked; /* per resource: how many moving messages it holds (their bottleneck) */
    /* per entry: where it is in its resource's list (-1: not there); 32 bits, as the
     * list's entries and messages (the caller keeps both below 2^31) */
    int32_t *lpos;
    /* per resource: its list, positions rfirst[r] .. + rcount[r] of rl_k (the entry),
     * rl_g (its message) and rl_w (its weight) */
    int64_t *rfirst, *rcount;
    int32_t *rl_k, *rl_g;
    double *rl_w;
    double *sumw; /* max: the weights of its list; max-min: their w / penalty */
    double *L;    /* max: its load per byte */
    int64_t *gf, *gd;
    int64_t *rmark; /* the event (max) or solve (max-min) it was last looked at in */
    double *rrem, *rD, *rD0;
    int64_t *rn;
    double *Lold;
    /* per link slot */
    int64_t *load;
    double *since;
    /* scratch lists */
    int64_t *E, *S, *A, *R;
    int64_t nE, nS, nA;
    int64_t epoch;
    int64_t work; /* units of work done (CHECK_WORK) */
    IHeap ends;
    Heap go, rel, fill;
} Flow;

/* message g's penalty: the caller's, or (NULL) under CM02 its latency (1 when that is
 * 0, as rule_arrays in flow.py), under the others 1 */
static inline double pen(const Flow *s, int64_t g) {
    if (s->penalty)
        return s->penalty[g];
    if (s->rule == RULE_CM02)
        return s->latency[g] > 0 ? s->latency[g] : 1.0;
    return 1.0;
}

/* message g's cap: the caller's, or 0 (none) when it gave none (cap NULL) */
static inline double cap_of(const Flow *s, int64_t g) { return s->cap ? s->cap[g] : 0.0; }

static inline int listed(const Flow *s, int64_t k) { return s->rule == RULE_MAX || s->e_w[k] > 0; }

static inline void list_add(Flow *s, int64_t k, int64_t owner) {
    int64_t r = s->e_res[k];
    int64_t at = s->rfirst[r] + s->rcount[r]++;
    s->rl_k[at] = (int32_t)k;
    s->rl_g[at] = (int32_t)owner;
    s->rl_w[at] = s->e_w[k];
    s->lpos[k] = (int32_t)at;
}

static inline void list_remove(Flow *s, int64_t k) {
    int64_t r = s->e_res[k];
    int64_t at = s->lpos[k];
    int64_t last = s->rfirst[r] + --s->rcount[r];
    int64_t moved = s->rl_k[last];
    s->rl_k[at] = (int32_t)moved;
    s->rl_g[at] = s->rl_g[last];
    s->rl_w[at] = s->rl_w[last];
    s->lpos[moved] = (int32_t)at;
    s->lpos[k] = -1;
}

static void release(Flow *s, int64_t i, double at, int *err) {
    if (!s->dep_ptr)
        return;
    for (int64_t q = s->dep_ptr[i]; q < s->dep_ptr[i + 1]; q++) {
        int64_t j = s->dependents[q];
        double a = s->delay ? at + s->delay[j] : at;
        if (s->crit && (a > s->ready[j] || (a == s->ready[j] && s->crit[j] >= 0 && i > s->crit[j])))
            s->crit[j] = (int32_t)i;
        if (a > s->ready[j])
            s->ready[j] = a;
        if (--s->left[j] == 0 && heap_push(&s->rel, s->ready[j], j))
            *err = -2;
    }
}

/* message i's link slots: u_flat[a .. b), or (u_flat NULL) e_res[a .. b) >> 1 */
static inline void slots_of(const Flow *s, int64_t i, int64_t *a, int64_t *b) {
    if (s->u_flat) {
        *a = s->u_start[i];
        *b = *a + s->u_hops[i];
    } else {
        *a = s->e_start[i];
        *b = s->e_start[i + 1];
    }
}

static inline int64_t slot_at(const Flow *s, int64_t q) { return s->u_flat ? s->u_flat[q] : s->e_res[q] >> 1; }

static void links_up(Flow *s, int64_t i, double t) {
    int64_t a, b;
    slots_of(s, i, &a, &b);
    for (int64_t q = a; q < b; q++) {
        int64_t l = slot_at(s, q);
        if (s->load[l]++ == 0)
            s->since[l] = t;
        if (s->load[l] > s->max_n[l])
            s->max_n[l] = s->load[l];
    }
}

static void links_down(Flow *s, int64_t i, double t) {
    int64_t a, b;
    slots_of(s, i, &a, &b);
    for (int64_t q = a; q < b; q++) {
        int64_t l = slot_at(s, q);
        if (--s->load[l] == 0)
            s->busy[l] += t - s->since[l];
    }
}

/* ------------------------------------------------------------------ max */

static double load_of(const Flow *s, int64_t r) {
    double L = s->sumw[r];
    if (s->gf) {
        int64_t f = s->gf[r], d = s->gd[r];
        double F = s->forward;
        L += F * (double)(f > d ? f - d : 0);
        double x = F - s->g_speed[r];
        L += (x > 0 ? x : 0.0) * (double)(f < d ? f : d);
    }
    return L;
}

static inline void touch(Flow *s, int64_t r, int64_t *nR) {
    if (s->rmark[r] != s->epoch) {
        s->rmark[r] = s->epoch;
        s->Lold[r] = s->L[r];
        s->R[(*nR)++] = r;
    }
}

static void gaps(Flow *s, int64_t i, int64_t d, int64_t *nR) {
    if (!s->gf)
        return;
    for (int64_t q = s->g_start[i]; q < s->g_start[i + 1]; q++) {
        int64_t r = s->g_res[q];
        touch(s, r, nR);
        if (s->g_last[q])
            s->gd[r] += d;
        else
            s->gf[r] += d;
    }
}

static inline double pace(const Flow *s, int64_t i) {
    double c = cap_of(s, i);
    for (int64_t k = s->e_start[i]; k < s->e_start[i + 1]; k++) {
        double L = s->L[s->e_res[k]];
        if (L > c)
            c = L;
    }
    return c;
}

static void rate_max(Flow *s, int64_t i, double t, int fresh) {
    double c = pace(s, i);
    if (fresh) {
        s->anchor[i] = s->tx[i];
        s->rem[i] = s->nbytes[i];
    } else {
        double c0 = s->hot[i].rate;
        if (c == c0)
            return;
        if (t > s->anchor[i]) {
            double r = c0 > 0 ? s->rem[i] - (t - s->anchor[i]) / c0 : 0.0;
            s->rem[i] = r > 0 ? r : 0.0;
        }
        s->anchor[i] = t > s->tx[i] ? t : s->tx[i];
    }
    s->hot[i].rate = c;
    ih_set(&s->ends, i, s->anchor[i] + s->rem[i] * c);
}

static void update_max(Flow *s, double t) {
    int64_t nR = 0;
    s->epoch++;
    for (int64_t q = 0; q < s->nE; q++) {
        int64_t i = s->E[q];
        for (int64_t k = s->e_start[i]; k < s->e_start[i + 1]; k++) {
            int64_t r = s->e_res[k];
            touch(s, r, &nR);
            list_remove(s, k);
            s->sumw[r] -= s->e_w[k];
        }
        gaps(s, i, -1, &nR);
    }
    for (int64_t q = 0; q < s->nS; q++) {
        int64_t i = s->S[q];
        for (int64_t k = s->e_start[i]; k < s->e_start[i + 1]; k++) {
            int64_t r = s->e_res[k];
            touch(s, r, &nR);
            list_add(s, k, i);
            s->sumw[r] += s->e_w[k];
        }
        gaps(s, i, 1, &nR);
    }
    for (int64_t q = 0; q < nR; q++) {
        int64_t r = s->R[q];
        if (s->rcount[r] == 0)
            s->sumw[r] = 0.0; /* no drift left behind */
        s->L[r] = load_of(s, r);
    }
    /* who may change pace (mark: looked at in this event) */
    int64_t nA = 0;
    for (int64_t q = 0; q < s->nS; q++)
        s->hot[s->S[q]].mark = s->epoch;
    for (int64_t q = 0; q < nR; q++) {
        int64_t r = s->R[q];
        double Ln = s->L[r], Lo = s->Lold[r];
        if (Ln == Lo)
            continue;
        s->work += s->rcount[r];
        for (int64_t j = s->rfirst[r]; j < s->rfirst[r] + s->rcount[r]; j++) {
            int64_t i = s->rl_g[j];
            Hot *h = &s->hot[i];
            if (h->mark == s->epoch)
                continue;
            if (Ln > Lo ? h->rate < Ln : h->rate == Lo) {
                h->mark = s->epoch;
                s->A[nA++] = i;
            }
        }
    }
    for (int64_t q = 0; q < s->nS; q++)
        rate_max(s, s->S[q], t, 1);
    for (int64_t q = 0; q < nA; q++)
        rate_max(s, s->A[q], t, 0);
}

/* ------------------------------------------------------------------ max-min
 *
 * The solve is a progressive filling over the levels (a message not yet frozen moves
 * at level / penalty), simulated only where it may differ from the last one: on the
 * *dirty* resources, each from the level where it may start to differ. Heap items, in
 * this order at equal levels:
 *
 *   DIRTY r   resource r becomes dirty at this level: its state there (the capacity
 *             left by the messages frozen below, the demand of the others) from its
 *             list; its messages not yet frozen become pending, each with an OLD item
 *             at the level it froze at last time;
 *   SAT r     r fills at this level (kept lazily: a stale level is pushed again): its
 *             pending messages freeze;
 *   CAP g     g reaches its cap;
 *   OLD g     the level g froze at last time: if its bottleneck then is not dirty it
 *             freezes again there (its rate unchanged); if it is, g goes on, and its
 *             resources become dirty from here.
 *
 * A message frozen at another rate than last time makes its resources dirty from that
 * level. Messages never made pending keep their rates: nothing they meet changed. */

#define DIRTY_ITEM(s, r) (r)
#define SAT_ITEM(s, r) ((s)->nres + (r))
#define CAP_ITEM(s, g) (2 * (s)->nres + (g))
#define OLD_ITEM(s, g) (2 * (s)->nres + (s)->m + (g))

static inline int state_of(const Flow *s, int64_t g) {
    int64_t mk = s->hot[g].mark;
    return mk >> 2 == s->epoch ? (int)(mk & 3) : UNTOUCHED;
}

static inline void set_state(Flow *s, int64_t g, int st) { s->hot[g].mark = (s->epoch << 2) | st; }

static inline int is_dirty(const Flow *s, int64_t r) { return s->rmark[r] == s->epoch; }

/* g joins the solve as pending (its rate kept in xold to compare at the end) */
static int make_pending(Flow *s, int64_t g, int with_old) {
    set_state(s, g, PENDING);
    s->xold[g] = s->hot[g].rate;
    s->A[s->nA++] = g;
    if (with_old && heap_push(&s->fill, s->hot[g].level, OLD_ITEM(s, g)))
        return -2;
    if (cap_of(s, g) > 0 && s->neck[g] != BY_CAP &&
        heap_push(&s->fill, pen(s, g) / s->cap[g], CAP_ITEM(s, g)))
        return -2;
    return 0;
}

static int make_dirty(Flow *s, int64_t r, double lvl) {
    s->rmark[r] = s->epoch;
    s->work += s->rcount[r];
    double left = 1.0, D = 0.0;
    int64_t n = 0;
    double below = lvl * (1.0 - LEVEL_SLACK);
    for (int64_t j = s->rfirst[r]; j < s->rfirst[r] + s->rcount[r]; j++) {
        int64_t g = s->rl_g[j];
        double w = s->rl_w[j];
        int st = state_of(s, g);
        Hot *h = &s->hot[g];
        if (st == FROZEN || (st == UNTOUCHED && h->level < below && h->rate > 0)) {
            left -= w * h->rate;
            continue;
        }
        if (st == UNTOUCHED && make_pending(s, g, 1))
            return -2;
        D += w * h->ip;
        n++;
    }
    s->rrem[r] = left;
    s->rD[r] = s->rD0[r] = D;
    s->rn[r] = n;
    if (n && heap_push(&s->fill, (left > 0 ? left : 0.0) / D, SAT_ITEM(s, r)))
        return -2;
    return 0;
}

/* the sum of w / penalty over the pending messages on r, anew */
static double demand_of(const Flow *s, int64_t r) {
    double D = 0.0;
    for (int64_t j = s->rfirst[r]; j < s->rfirst[r] + s->rcount[r]; j++) {
        int64_t g = s->rl_g[j];
        if (state_of(s, g) == PENDING)
            D += s->rl_w[j] * s->hot[g].ip;
    }
    return D;
}

static inline void set_neck(Flow *s, int64_t g, int64_t neck) {
    if (s->neck[g] >= 0)
        s->necked[s->neck[g]]--;
    if (neck >= 0)
        s->necked[neck]++;
    s->neck[g] = (int32_t)neck;
}

/* g's resources not yet dirty become dirty from level lvl: all of them when g takes
 * more of them (up), else those some message is held by (the others have room to
 * spare, which more room does not change) */
static int spread(Flow *s, int64_t g, double lvl, int up) {
    for (int64_t k = s->e_start[g]; k < s->e_start[g + 1]; k++) {
        if (!(s->e_w[k] > 0))
            continue;
        int64_t r = s->e_res[k];
        if (is_dirty(s, r) || (!up && s->necked[r] == 0))
            continue;
        if (heap_push(&s->fill, lvl, DIRTY_ITEM(s, r)))
            return -2;
    }
    return 0;
}

static int freeze(Flow *s, int64_t g, double x, double lvl, int64_t neck) {
    Hot *h = &s->hot[g];
    int changed = 1, up = s->neck[g] == NEW || x > s->xold[g];
    if (s->neck[g] != NEW && fabs(x - s->xold[g]) <= CHANGE_RTOL * s->xold[g]) {
        /* the same rate but for rounding: kept exactly, so that nothing it meets is
         * taken again for it */
        x = s->xold[g];
        lvl = h->level;
        changed = 0;
    }
    set_state(s, g, FROZEN);
    h->rate = x;
    h->level = lvl;
    set_neck(s, g, neck);
    for (int64_t k = s->e_start[g]; k < s->e_start[g + 1]; k++) {
        double w = s->e_w[k];
        if (!(w > 0))
            continue;
        int64_t r = s->e_res[k];
        if (!is_dirty(s, r))
            continue;
        s->rrem[r] -= w * x;
        s->rD[r] -= w * h->ip;
        s->rn[r]--;
    }
    return changed ? spread(s, g, lvl, up) : 0;
}

#ifdef FLOW_STATS
#include <stdio.h>
static int64_t st_solves, st_pops, st_dirty, st_sat, st_old, st_cap, st_dup, st_A, st_changed;
#define STAT(x) (x)
#else
#define STAT(x)
#endif

static int solve(Flow *s, double t) {
    int64_t nres = s->nres, m = s->m;
    STAT(st_solves++);
    while (s->fill.n) {
        Item top = heap_pop(&s->fill);
        int64_t it = top.item;
        s->work++;
        STAT(st_pops++);
        STAT(it < nres ? (is_dirty(s, it) ? st_dup++ : st_dirty++) : it < 2 * nres ? st_sat++ : it < 2 * nres + m ? st_cap++ : st_old++);
        if (it < nres) { /* DIRTY */
            if (!is_dirty(s, it) && make_dirty(s, it, top.key))
                return -2;
        } else if (it < 2 * nres) { /* SAT */
            int64_t r = it - nres;
            if (s->rn[r] <= 0)
                continue;
            if (!(s->rD[r] > s->rD0[r] * DEMAND_DROP)) {
                /* most of the demand froze: the sum, taken again, loses no digits */
                s->rD[r] = demand_of(s, r);
                s->rD0[r] = s->rD[r];
            }
            double left = s->rrem[r] > 0 ? s->rrem[r] : 0.0;
            double lvl = left / s->rD[r];
            if (lvl > top.key) {
                if (heap_push(&s->fill, lvl, it))
                    return -2;
                continue;
            }
            s->work += s->rcount[r];
            for (int64_t j = s->rfirst[r]; j < s->rfirst[r] + s->rcount[r]; j++) {
                int64_t g = s->rl_g[j];
                if (state_of(s, g) == PENDING && freeze(s, g, lvl / pen(s, g), lvl, r))
                    return -2;
            }
        } else if (it < 2 * nres + m) { /* CAP */
            int64_t g = it - 2 * nres;
            if (state_of(s, g) == PENDING && freeze(s, g, 1.0 / s->cap[g], top.key, BY_CAP))
                return -2;
        } else { /* OLD */
            int64_t g = it - 2 * nres - m;
            if (state_of(s, g) != PENDING)
                continue;
            int64_t b = s->neck[g];
            if (b == BY_CAP || (b >= 0 && !is_dirty(s, b))) {
                if (freeze(s, g, s->hot[g].rate, s->hot[g].level, b))
                    return -2;
            } else if (spread(s, g, top.key, 1)) {
                return -2;
            }
        }
    }
    /* new predicted ends where a rate changed */
    for (int64_t q = 0; q < s->nA; q++) {
        int64_t g = s->A[q];
        if (state_of(s, g) != FROZEN)
            return -5; /* a bug: a message left unrated */
        double x = s->hot[g].rate;
        STAT(st_A++);
        STAT(st_changed += x != s->xold[g]);
        if (s->st[g] == STARTING) { /* it starts moving now */
            s->st[g] = ACTIVE;
            s->anchor[g] = t;
            s->rem[g] = s->nbytes[g];
        } else {
            double x0 = s->xold[g];
            if (x == x0)
                continue;
            if (t > s->anchor[g]) {
                double r = s->rem[g] - x0 * (t - s->anchor[g]);
                s->rem[g] = r > 0 ? r : 0.0;
            }
            s->anchor[g] = t;
        }
        double rem = s->rem[g];
        double end = rem <= 0 || isinf(x) ? t : (x > 0 ? t + rem / x : INFINITY);
        if (end == INFINITY) {
            if (s->ends.pos[g] >= 0)
                ih_remove(&s->ends, g);
        } else {
            ih_set(&s->ends, g, end);
        }
    }
    return 0;
}

static int update_maxmin(Flow *s, double t) {
    s->epoch++;
    s->fill.n = 0;
    s->nA = 0;
    for (int64_t q = 0; q < s->nE; q++) {
        int64_t i = s->E[q];
        double ip = s->hot[i].ip;
        double from = s->hot[i].level * (1.0 - LEVEL_SLACK);
        set_neck(s, i, BY_NOTHING);
        for (int64_t k = s->e_start[i]; k < s->e_start[i + 1]; k++) {
            if (!(s->e_w[k] > 0))
                continue;
            int64_t r = s->e_res[k];
            list_remove(s, k);
            s->sumw[r] = s->rcount[r] ? s->sumw[r] - s->e_w[k] * ip : 0.0;
            /* the room it leaves matters only where someone is held */
            if (s->necked[r] && heap_push(&s->fill, from, DIRTY_ITEM(s, r)))
                return -2;
        }
    }
    for (int64_t q = 0; q < s->nS; q++) {
        int64_t i = s->S[q];
        double ip = s->hot[i].ip;
        int costly = cap_of(s, i) > 0;
        for (int64_t k = s->e_start[i]; k < s->e_start[i + 1]; k++) {
            if (!(s->e_w[k] > 0))
                continue;
            costly = 1;
            list_add(s, k, i);
            s->sumw[s->e_res[k]] += s->e_w[k] * ip;
        }
        if (!costly) { /* nothing with a cost: all its bytes at once */
            s->st[i] = ACTIVE;
            s->hot[i].rate = INFINITY;
            s->hot[i].level = INFINITY;
            set_neck(s, i, BY_NOTHING);
            ih_set(&s->ends, i, t);
            continue;
        }
        set_neck(s, i, NEW);
        s->hot[i].rate = 0.0;
        if (make_pending(s, i, 0))
            return -2;
    }
    /* below the level where one of its resources could fill with everyone moving on it,
     * nothing changes there for a message that starts */
    for (int64_t q = 0; q < s->nA; q++) {
        int64_t i = s->A[q];
        for (int64_t k = s->e_start[i]; k < s->e_start[i + 1]; k++) {
            if (!(s->e_w[k] > 0))
                continue;
            int64_t r = s->e_res[k];
            double from = (1.0 / s->sumw[r]) * (1.0 - LEVEL_SLACK);
            if (heap_push(&s->fill, from, DIRTY_ITEM(s, r)))
                return -2;
        }
    }
    return solve(s, t);
}

/* ------------------------------------------------------------------ the loop */

static void free_all(Flow *s) {
    void *p[] = {s->hot, s->st, s->rem, s->anchor, s->ready, s->xold, s->left, s->neck, s->necked,
                 s->lpos, s->rfirst, s->rcount, s->rl_k, s->rl_g, s->rl_w, s->sumw, s->L, s->gf,
                 s->gd, s->rmark, s->rrem, s->rD, s->rD0, s->rn, s->Lold, s->load, s->since,
                 s->E, s->S, s->A, s->R, s->ends.a, s->ends.pos, s->go.a, s->rel.a, s->fill.a};
    for (size_t q = 0; q < sizeof p / sizeof p[0]; q++)
        free(p[q]);
}

int64_t parasol_flow_trace(int64_t rule, int64_t m, int64_t nres, int64_t nslots,
                           const int32_t *e_start, const int32_t *e_res,
                           const double *e_w, const double *latency, const double *nbytes,
                           const double *penalty, const double *cap, const uint8_t *instant,
                           const int64_t *u_start, const int64_t *u_hops, const int64_t *u_flat,
                           const int64_t *g_start, const int64_t *g_res, const uint8_t *g_last,
                           const double *g_speed, double forward, const double *start,
                           int64_t nqueue, const int64_t *queue, const int64_t *wait_count,
                           const int32_t *dep_ptr, const int32_t *dependents, double *t0,
                           double *end, double *busy, int64_t *max_n, int64_t *events,
                           const double *delay, flow_check_fn check, int32_t *crit) {
    Flow s;
    memset(&s, 0, sizeof s);
    s.rule = (int)rule;
    s.m = m;
    s.nres = nres;
    s.nslots = nslots;
    s.e_start = e_start;
    s.e_res = e_res;
    s.e_w = e_w;
    s.latency = latency;
    s.nbytes = nbytes;
    s.penalty = penalty;
    s.cap = cap;
    s.instant = instant;
    s.u_start = u_start;
    s.u_hops = u_hops;
    s.u_flat = u_flat;
    s.g_start = g_start;
    s.g_res = g_res;
    s.g_last = g_last;
    s.g_speed = g_speed;
    s.forward = forward;
    s.dep_ptr = dep_ptr;
    s.dependents = dependents;
    s.delay = delay;
    s.t0 = t0;
    s.end = end;
    s.crit = crit;
    s.busy = busy;
    s.max_n = max_n;
    int64_t nent = m ? e_start[m] : 0;
    size_t M = (size_t)(m ? m : 1), K = (size_t)(nent ? nent : 1), NR = (size_t)nres + 1,
           NS = (size_t)nslots + 1;
    s.hot = calloc(M, sizeof(Hot));
    s.st = calloc(M, 1);
    s.rem = malloc(M * sizeof(double));
    s.anchor = malloc(M * sizeof(double));
    s.ready = malloc(M * sizeof(double));
    s.tx = s.ready; /* ready is not read once a message starts, tx not before */
    s.xold = malloc(M * sizeof(double));
    s.left = malloc(M * sizeof(int32_t));
    s.neck = malloc(M * sizeof(int32_t));
    s.necked = calloc(NR, sizeof(int64_t));
    s.lpos = malloc(K * sizeof(int32_t));
    s.rfirst = calloc(NR + 1, sizeof(int64_t));
    s.rcount = calloc(NR, sizeof(int64_t));
    s.rl_k = malloc(K * sizeof(int32_t));
    s.rl_g = malloc(K * sizeof(int32_t));
    s.rl_w = malloc(K * sizeof(double));
    s.sumw = calloc(NR, sizeof(double));
    s.L = calloc(NR, sizeof(double));
    s.rmark = calloc(NR, sizeof(int64_t));
    s.rrem = malloc(NR * sizeof(double));
    s.rD = malloc(NR * sizeof(double));
    s.rD0 = malloc(NR * sizeof(double));
    s.rn = malloc(NR * sizeof(int64_t));
    s.Lold = malloc(NR * sizeof(double));
    s.load = calloc(NS, sizeof(int64_t));
    s.since = malloc(NS * sizeof(double));
    s.E = malloc(M * sizeof(int64_t));
    s.S = malloc(M * sizeof(int64_t));
    s.A = malloc(M * sizeof(int64_t));
    s.R = malloc(NR * sizeof(int64_t));
    s.ends.a = malloc(M * sizeof(int32_t));
    s.ends.pos = malloc(M * sizeof(int32_t));
    s.ends.key = end; /* the caller's: a predicted end is the end once it is reached */
    if (g_start && rule == RULE_MAX) {
        s.gf = calloc(NR, sizeof(int64_t));
        s.gd = calloc(NR, sizeof(int64_t));
    }
    if (!s.hot || !s.st || !s.tx || !s.rem || !s.anchor || !s.ready || !s.xold || !s.left ||
        !s.neck || !s.necked || !s.lpos || !s.rfirst || !s.rcount || !s.rl_k || !s.rl_g || !s.rl_w ||
        !s.sumw || !s.L || !s.rmark || !s.rrem || !s.rD || !s.rD0 || !s.rn || !s.Lold ||
        !s.load || !s.since || !s.E || !s.S || !s.A || !s.R || !s.ends.a || !s.ends.pos ||
        (g_start && rule == RULE_MAX && (!s.gf || !s.gd))) {
        free_all(&s);
        return -2;
    }
    /* each resource's room: the entries that may sit in its list */
    for (int64_t k = 0; k < nent; k++)
        if (listed(&s, k))
            s.rfirst[e_res[k] + 1]++;
    for (int64_t r = 0; r < nres; r++)
        s.rfirst[r + 1] += s.rfirst[r];
    for (int64_t k = 0; k < nent; k++)
        s.lpos[k] = -1;
    for (int64_t i = 0; i < m; i++) {
        s.neck[i] = BY_NOTHING;
        s.hot[i].ip = 1.0 / pen(&s, i);
        s.ready[i] = start[i];
        s.left[i] = wait_count ? (int32_t)wait_count[i] : 0;
        s.ends.pos[i] = -1;
        t0[i] = NAN;
        end[i] = NAN;
        if (crit)
            crit[i] = -1;
    }
    if (!wait_count && dep_ptr) /* each message waits for as many as list it a dependent */
        for (int64_t q = 0; q < dep_ptr[m]; q++)
            s.left[dependents[q]]++;
    int err = 0;
    double t = 0.0;
    int64_t qpos = 0, nev = 0, polls = 0, next_poll = CHECK_WORK;
    for (;;) {
        double t_start = qpos < nqueue ? start[queue[qpos]] : INFINITY;
        if (heap_top(&s.rel) < t_start)
            t_start = heap_top(&s.rel);
        double t_end = s.ends.n ? s.ends.key[s.ends.a[0]] : INFINITY;
        double t_next = t_start < t_end ? t_start : t_end;
        if (heap_top(&s.go) < t_next)
            t_next = heap_top(&s.go);
        if (t_next == INFINITY)
            break;
        if (t_next != t_next) { /* NaN: a bug, not bad input; never loop on it */
            free_all(&s);
            return -3;
        }
        nev++;
        s.work++;
        if (check && s.work >= next_poll) { /* by the work done, not the events */
            next_poll = s.work + CHECK_WORK;
            polls++;
            if (check()) {
                events[1] = polls;
                free_all(&s);
                return -4;
            }
        }
        t = t_next;
        double limit = t + RTOL * fabs(t);
        s.nE = s.nS = 0;
        while (s.ends.n && s.ends.key[s.ends.a[0]] <= limit) {
            int64_t i = s.ends.a[0];
            end[i] = s.ends.key[i];
            ih_remove(&s.ends, i);
            s.st[i] = DONE;
            s.E[s.nE++] = i;
            links_down(&s, i, t);
        }
        for (int64_t q = 0; q < s.nE; q++)
            release(&s, s.E[q], t, &err);
        /* starts (those that take no time end at once, which may release others) */
        for (;;) {
            int any = 0;
            while ((qpos < nqueue && start[queue[qpos]] <= t) || heap_top(&s.rel) <= t) {
                int64_t b;
                if (qpos < nqueue && start[queue[qpos]] <= t)
                    b = queue[qpos++];
                else
                    b = heap_pop(&s.rel).item;
                any = 1;
                t0[b] = t;
                if (instant[b]) {
                    end[b] = t;
                    s.st[b] = DONE;
                    release(&s, b, t, &err);
                    continue;
                }
                s.tx[b] = t + latency[b];
                links_up(&s, b, t);
                if (s.rule == RULE_MAX || s.tx[b] <= t) {
                    s.st[b] = s.rule == RULE_MAX ? ACTIVE : STARTING;
                    s.S[s.nS++] = b;
                } else {
                    s.st[b] = LATENT;
                    if (heap_push(&s.go, s.tx[b], b))
                        err = -2;
                }
            }
            if (!any)
                break;
        }
        while (heap_top(&s.go) <= t) {
            int64_t b = heap_pop(&s.go).item;
            s.st[b] = STARTING;
            s.S[s.nS++] = b;
        }
        if (err) {
            free_all(&s);
            return err;
        }
        if (!s.nE && !s.nS)
            continue;
        s.work += s.nE + s.nS;
        if (s.rule == RULE_MAX)
            update_max(&s, t);
        else if ((err = update_maxmin(&s, t)) != 0) {
            free_all(&s);
            return err;
        }
    }
    for (int64_t i = 0; i < m; i++) /* a predicted end never reached is no end */
        if (s.st[i] != DONE)
            end[i] = NAN;
    events[0] = nev;
    events[1] = polls;
#ifdef FLOW_STATS
    fprintf(stderr, "A %.1f changed %.1f ", (double)st_A / st_solves, (double)st_changed / st_solves);
    fprintf(stderr, "solves %ld pops %.1f dirty %.1f dup %.1f sat %.1f old %.1f cap %.1f\n",
            (long)st_solves, (double)st_pops / st_solves, (double)st_dirty / st_solves,
            (double)st_dup / st_solves, (double)st_sat / st_solves, (double)st_old / st_solves,
            (double)st_cap / st_solves);
#endif
    free_all(&s);
    return 0;
}
