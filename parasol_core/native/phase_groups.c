/* The event trace of a communication phase by bottleneck groups: the same semantics as
 * parasol_phase_trace (phases.c, docs/topology.md "Communication phases"), for phases
 * in which many messages are in flight at once.
 *
 * Under the max rule every message in flight moves at 1 / w(g) bytes a second, g being
 * a link of its route with the largest weight w = speed * load (its bottleneck; any one
 * of them on a tie). Messages with the same bottleneck move at the same rate, so they
 * form a group: each link g keeps a clock V(g), the bytes that any message moving at
 * its rate has moved since the start (dV/dt = 1 / w(g), brought up to date only when
 * w(g) changes or the group is touched), and every member its tag F = V(g) + the bytes
 * it still had to move when it joined. A member ends when V(g) reaches its tag, so the
 * members sit in a heap by tag, and a change of w(g), which in phases.c re-rates every
 * member one by one, costs nothing per member here.
 *
 * What costs per message is a member changing group, which happens only when the order
 * of the weights on its route changes: after a link l got busier, the messages crossing
 * it whose bottleneck is now lighter than l move to l; after l got quieter, the members
 * of l that cross a link now heavier than l move to the heaviest link of their route.
 * To find them without scanning every message on l, the crossings (message, link) are
 * kept in lists per pair (link l, group g): the members of g that cross l. Each link
 * lists the pairs it is the link of (the groups crossing it) and the pairs it is the
 * group of (the links its members cross), so an event looks at groups and links, and
 * only at the messages that really change group.
 *
 * A message is latent from its start to t + its route's latency: it counts in the loads
 * and belongs to a group but moves no bytes; it joins its group's heap (tag V(g) at tx
 * plus its bytes) before the trace passes tx. Ends within END_RTOL (relative) of the
 * earliest are one event, starts due by then with them, as in phases.c. The results
 * equal phases.c's to rounding (the tests hold them to 1e-9 relative on random phases);
 * the event count may differ where two ends fall within rounding of END_RTOL apart.
 */

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "phase_io.h"

#define END_RTOL 1e-12

typedef struct {
    double when;
    int64_t j;
} Due;

typedef struct {
    int64_t l, g;         /* the link crossed, the group (bottleneck link) */
    int64_t head, count;  /* its crossings (a doubly linked list through Cross) */
    int64_t lpos, gpos;   /* where it is in the pair lists of link l and of group g */
} Pair;

typedef struct {
    int64_t *id;    /* pair ids */
    int64_t *other; /* beside each, the pair's group (in a link's list) or link (in a
                       group's): scanned without touching the pairs */
    int64_t n, cap;
    int owned;
} Vec;

/* a crossing (message, link): its pair and its neighbours in the pair's list, side by
 * side (one cache line for what a move touches) */
typedef struct {
    int32_t prev, next, pair, which; /* (the caller keeps crossings under 2**31) */
} Cross;

typedef struct {
    int64_t *a; /* message indices, a min-heap by tag */
    int64_t n, cap;
    int owned; /* a is its own allocation (else a part of the pool) */
} Heap;

typedef struct {
    PHASE_IO_FIELDS /* the arguments: input, and output (phase_io.h) */
    /* per crossing */
    Cross *cross;
    /* per link */
    int64_t *load, *acc, *lmark, *touched, *gmark, *last_g, *last_pair;
    Vec *lvec, *gvec; /* per link, the pairs it is the link of; the pairs it is the group of */
    double *w, *since, *V, *tv;
    Heap *heap;
    /* per message */
    int64_t *grp, *hpos, *left;
    double *F, *tx, *ready;
    uint8_t *active;
    int64_t *ending, *starting, *batch, *scratch, *dirty, *pscratch;
    /* pairs and their hash table (key l * (nlinks + 1) + g) */
    Pair *pairs;
    int64_t npairs, pcap;
    int64_t max_pairs; /* past it, -3: the caller takes the reference kernel, whose memory
                          is bounded by the crossings (pairs, never freed, could grow
                          with the regroups) */
    int64_t *hash;
    int64_t hcap;
    /* the tournament tree over groups: their next ends */
    double *tree;
    int64_t leaves;
    /* released messages waiting for their start; latent messages by tx */
    Due *rheap, *lat;
    int64_t rn, ln;
    int64_t count, epoch, lepoch, gepoch, ndirty;
    int failed;
} G;

/* ------------------------------------------------------------------ small heaps */

static inline int due_less(Due a, Due b) { return a.when < b.when || (a.when == b.when && a.j < b.j); }

static void due_push(Due *h, int64_t *n, double when, int64_t j) {
    Due x = {when, j};
    int64_t p = (*n)++;
    while (p > 0) {
        int64_t q = (p - 1) / 2;
        if (!due_less(x, h[q]))
            break;
        h[p] = h[q];
        p = q;
    }
    h[p] = x;
}

static int64_t due_pop(Due *h, int64_t *n) {
    Due top = h[0], x = h[--*n];
    int64_t p = 0, k = *n;
    for (;;) {
        int64_t q = 2 * p + 1;
        if (q >= k)
            break;
        if (q + 1 < k && due_less(h[q + 1], h[q]))
            q++;
        if (!due_less(h[q], x))
            break;
        h[p] = h[q];
        p = q;
    }
    if (k > 0)
        h[p] = x;
    return top.j;
}

/* ------------------------------------------------------------------ group heaps */

static inline int tag_less(const G *s, int64_t a, int64_t b) {
    return s->F[a] < s->F[b] || (s->F[a] == s->F[b] && a < b);
}

static void sift_up(G *s, Heap *h, int64_t p) {
    int64_t x = h->a[p];
    while (p > 0) {
        int64_t q = (p - 1) / 2;
        if (!tag_less(s, x, h->a[q]))
            break;
        h->a[p] = h->a[q];
        s->hpos[h->a[p]] = p;
        p = q;
    }
    h->a[p] = x;
    s->hpos[x] = p;
}

static void sift_down(G *s, Heap *h, int64_t p) {
    int64_t x = h->a[p], n = h->n;
    for (;;) {
        int64_t q = 2 * p + 1;
        if (q >= n)
            break;
        if (q + 1 < n && tag_less(s, h->a[q + 1], h->a[q]))
            q++;
        if (!tag_less(s, h->a[q], x))
            break;
        h->a[p] = h->a[q];
        s->hpos[h->a[p]] = p;
        p = q;
    }
    h->a[p] = x;
    s->hpos[x] = p;
}

static void heap_push(G *s, int64_t g, int64_t i) {
    Heap *h = &s->heap[g];
    if (h->n == h->cap) {
        int64_t cap = h->cap ? 2 * h->cap : 8;
        int64_t *a = h->owned ? realloc(h->a, (size_t)cap * sizeof *a)
                              : malloc((size_t)cap * sizeof *a);
        if (!a) {
            s->failed = -2;
            return;
        }
        if (!h->owned && h->n)
            memcpy(a, h->a, (size_t)h->n * sizeof *a);
        h->a = a;
        h->cap = cap;
        h->owned = 1;
    }
    h->a[h->n++] = i;
    sift_up(s, h, h->n - 1);
}

static void heap_remove(G *s, int64_t g, int64_t i) {
    Heap *h = &s->heap[g];
    int64_t p = s->hpos[i], last = h->a[--h->n];
    s->hpos[i] = -1;
    if (p == h->n)
        return;
    h->a[p] = last;
    s->hpos[last] = p;
    sift_up(s, h, p);
    sift_down(s, h, s->hpos[last]);
}

/* ------------------------------------------------------------------ clocks, ends */

/* the group's clock brought to t (at its weight since it was last brought up) */
static inline void sync(G *s, int64_t g, double t) {
    if (s->tv[g] != t) {
        if (s->w[g] > 0)
            s->V[g] += (t - s->tv[g]) / s->w[g];
        s->tv[g] = t;
    }
}

static inline double end_of(const G *s, int64_t g, int64_t i) {
    return s->tv[g] + (s->F[i] - s->V[g]) * s->w[g];
}

static void tree_set(G *s, int64_t g, double v) {
    int64_t p = s->leaves + g;
    s->tree[p] = v;
    for (p /= 2; p >= 1; p /= 2) {
        double a = s->tree[2 * p], b = s->tree[2 * p + 1];
        s->tree[p] = a < b ? a : b;
    }
}

static void mark_dirty(G *s, int64_t g) {
    if (s->gmark[g] != s->gepoch) {
        s->gmark[g] = s->gepoch;
        s->dirty[s->ndirty++] = g;
    }
}

static void refresh_dirty(G *s) {
    for (int64_t q = 0; q < s->ndirty; q++) {
        int64_t g = s->dirty[q];
        Heap *h = &s->heap[g];
        tree_set(s, g, h->n ? end_of(s, g, h->a[0]) : INFINITY);
    }
    s->ndirty = 0;
    s->gepoch++;
}

/* ------------------------------------------------------------------ pairs */

static int64_t pair_lookup(G *s, int64_t l, int64_t g);

/* the pair (l, g), made if new; each link remembers the last it was asked for (the
 * messages crossing a link mostly share a few bottlenecks), pairs are never freed */
static inline int64_t pair_of(G *s, int64_t l, int64_t g) {
    if (s->last_g[l] == g)
        return s->last_pair[l];
    int64_t id = pair_lookup(s, l, g);
    if (id >= 0) {
        s->last_g[l] = g;
        s->last_pair[l] = id;
    }
    return id;
}

static int64_t pair_lookup(G *s, int64_t l, int64_t g) {
    int64_t key = l * (s->nlinks + 1) + g, mask = s->hcap - 1;
    uint64_t hsh = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    for (int64_t p = (int64_t)(hsh >> 20) & mask;; p = (p + 1) & mask) {
        int64_t e = s->hash[p];
        if (e < 0) {
            /* a new pair */
            if (s->npairs == s->pcap) {
                int64_t cap = 2 * s->pcap;
                Pair *np = realloc(s->pairs, (size_t)cap * sizeof *np);
                if (!np) {
                    s->failed = -2;
                    return -1;
                }
                s->pairs = np;
                s->pcap = cap;
            }
            if (s->npairs >= s->max_pairs) {
                s->failed = -3;
                return -1;
            }
            int64_t id = s->npairs++;
            Pair *x = &s->pairs[id];
            x->l = l;
            x->g = g;
            x->head = -1;
            x->count = 0;
            s->hash[p] = id;
            if (2 * s->npairs > s->hcap) { /* grow the table */
                int64_t cap = 2 * s->hcap;
                int64_t *nh = malloc((size_t)cap * sizeof *nh);
                if (!nh) {
                    s->failed = -2;
                    return -1;
                }
                for (int64_t q = 0; q < cap; q++)
                    nh[q] = -1;
                for (int64_t e2 = 0; e2 < s->npairs; e2++) {
                    int64_t k2 = s->pairs[e2].l * (s->nlinks + 1) + s->pairs[e2].g;
                    uint64_t h2 = (uint64_t)k2 * 0x9E3779B97F4A7C15ull;
                    int64_t q = (int64_t)(h2 >> 20) & (cap - 1);
                    while (nh[q] >= 0)
                        q = (q + 1) & (cap - 1);
                    nh[q] = e2;
                }
                free(s->hash);
                s->hash = nh;
                s->hcap = cap;
            }
            return id;
        }
        if (s->pairs[e].l == l && s->pairs[e].g == g)
            return e;
    }
}

static int64_t vec_push(G *s, Vec *v, int64_t id, int64_t other) {
    if (v->n == v->cap) {
        int64_t cap = v->cap ? 2 * v->cap : 4;
        int64_t *a, *b;
        if (v->owned) {
            a = realloc(v->id, (size_t)cap * sizeof *a);
            if (a)
                v->id = a;
            b = a ? realloc(v->other, (size_t)cap * sizeof *b) : NULL;
        } else {
            a = malloc((size_t)cap * sizeof *a);
            b = malloc((size_t)cap * sizeof *b);
            if (a && b && v->n) {
                memcpy(a, v->id, (size_t)v->n * sizeof *a);
                memcpy(b, v->other, (size_t)v->n * sizeof *b);
            }
            if (a && b)
                v->id = a;
            else {
                free(a);
                free(b);
                b = NULL;
            }
        }
        if (!b) {
            s->failed = -2;
            return 0;
        }
        v->other = b;
        v->cap = cap;
        v->owned = 1;
    }
    v->id[v->n] = id;
    v->other[v->n] = other;
    return v->n++;
}

static void pair_list(G *s, int64_t id) {
    Pair *x = &s->pairs[id];
    x->lpos = vec_push(s, &s->lvec[x->l], id, x->g);
    x->gpos = vec_push(s, &s->gvec[x->g], id, x->l);
}

static void pair_unlist(G *s, int64_t id) {
    Pair *x = &s->pairs[id];
    Vec *v = &s->lvec[x->l];
    int64_t last = --v->n;
    if (x->lpos != last) {
        v->id[x->lpos] = v->id[last];
        v->other[x->lpos] = v->other[last];
        s->pairs[v->id[last]].lpos = x->lpos;
    }
    v = &s->gvec[x->g];
    last = --v->n;
    if (x->gpos != last) {
        v->id[x->gpos] = v->id[last];
        v->other[x->gpos] = v->other[last];
        s->pairs[v->id[last]].gpos = x->gpos;
    }
}

/* crossing k (of link l) joins group g's pair */
static void cross_add(G *s, int64_t k, int64_t l, int64_t g) {
    int64_t id = pair_of(s, l, g);
    if (id < 0)
        return;
    Pair *x = &s->pairs[id];
    Cross *c = &s->cross[k];
    c->pair = (int32_t)id;
    c->prev = -1;
    c->next = (int32_t)x->head;
    if (x->head >= 0)
        s->cross[x->head].prev = (int32_t)k;
    x->head = k;
    if (x->count++ == 0)
        pair_list(s, id);
}

static void cross_remove(G *s, int64_t k) {
    Cross *c = &s->cross[k];
    int64_t id = c->pair;
    Pair *x = &s->pairs[id];
    if (c->prev >= 0)
        s->cross[c->prev].next = c->next;
    else
        x->head = c->next;
    if (c->next >= 0)
        s->cross[c->next].prev = c->prev;
    if (--x->count == 0)
        pair_unlist(s, id);
}

/* ------------------------------------------------------------------ messages */

static int64_t heaviest(const G *s, int64_t i) {
    int64_t a = s->u_start[i], b = a + s->u_hops[i], best = s->u_flat[a];
    for (int64_t k = a + 1; k < b; k++)
        if (s->w[s->u_flat[k]] > s->w[best])
            best = s->u_flat[k];
    return best;
}

/* message i (in flight) changes group to g at t */
static void regroup(G *s, int64_t i, int64_t g, double t) {
    int64_t old = s->grp[i];
    for (int64_t k = s->u_start[i], b = k + s->u_hops[i]; k < b; k++) {
        cross_remove(s, k);
        cross_add(s, k, s->u_flat[k], g);
    }
    s->grp[i] = g;
    if (s->active[i]) {
        sync(s, old, t);
        sync(s, g, t);
        double left = s->F[i] - s->V[old];
        heap_remove(s, old, i);
        s->F[i] = s->V[g] + left;
        heap_push(s, g, i);
        mark_dirty(s, old);
        mark_dirty(s, g);
    }
}

/* a latent message starts moving its bytes at its tx (the weights unchanged since the
 * last event, which was at or before tx) */
static void activate(G *s, int64_t i) {
    int64_t g = s->grp[i];
    sync(s, g, s->tx[i]);
    s->F[i] = s->V[g] + s->nbytes[i];
    s->active[i] = 1;
    heap_push(s, g, i);
    mark_dirty(s, g);
}

static void release(G *s, int64_t i, double at) {
    if (!s->dep_ptr)
        return;
    for (int64_t k = s->dep_ptr[i]; k < s->dep_ptr[i + 1]; k++) {
        int64_t j = s->dependents[k];
        if (at > s->ready[j])
            s->ready[j] = at;
        if (--s->left[j] == 0)
            due_push(s->rheap, &s->rn, s->ready[j], j);
    }
}

static inline void link_change(G *s, int64_t l, double t, int64_t old, int64_t now) {
    if (old > 0)
        s->busy[l] += t - s->since[l];
    s->since[l] = t;
    if (now > s->max_n[l])
        s->max_n[l] = now;
}

static inline void touch_link(G *s, int64_t l, int64_t *nt) {
    if (s->lmark[l] != s->lepoch) {
        s->lmark[l] = s->lepoch;
        s->acc[l] = 0;
        s->touched[(*nt)++] = l;
    }
}

/* the ends collected: every group whose next end is by `limit`, its members ending by
 * then taken out of its heap */
static int64_t take_ends(G *s, double limit, int64_t node, int64_t n) {
    if (!(s->tree[node] <= limit))
        return n;
    if (node >= s->leaves) {
        int64_t g = node - s->leaves;
        Heap *h = &s->heap[g];
        while (h->n && end_of(s, g, h->a[0]) <= limit) {
            int64_t i = h->a[0];
            s->end[i] = end_of(s, g, i);
            heap_remove(s, g, i);
            s->ending[n++] = i;
        }
        mark_dirty(s, g);
        return n;
    }
    n = take_ends(s, limit, 2 * node, n);
    return take_ends(s, limit, 2 * node + 1, n);
}

static void change(G *s, double t, int64_t ns, int64_t ne) {
    int64_t nt = 0;
    s->lepoch++;
    for (int64_t q = 0; q < ne; q++) {
        int64_t i = s->ending[q];
        for (int64_t k = s->u_start[i], b = k + s->u_hops[i]; k < b; k++) {
            int64_t l = s->u_flat[k];
            touch_link(s, l, &nt);
            s->acc[l]--;
            s->load[l]--;
            cross_remove(s, k);
        }
        s->grp[i] = -1;
    }
    for (int64_t q = 0; q < ns; q++) {
        int64_t i = s->starting[q];
        s->tx[i] = t + s->latency[i];
        for (int64_t k = s->u_start[i], b = k + s->u_hops[i]; k < b; k++) {
            int64_t l = s->u_flat[k];
            touch_link(s, l, &nt);
            s->acc[l]++;
            s->load[l]++;
        }
    }
    /* the weights: each clock brought up to t at its old weight first */
    int64_t nc = 0;
    for (int64_t q = 0; q < nt; q++) {
        int64_t l = s->touched[q], d = s->acc[l];
        if (d == 0)
            continue;
        s->touched[nc++] = l;
        sync(s, l, t);
        int64_t now = s->load[l];
        s->w[l] = s->speed[l] * (double)now;
        link_change(s, l, t, now - d, now);
        mark_dirty(s, l);
    }
    /* the new messages, each in the group of its heaviest link, latent until tx */
    for (int64_t q = 0; q < ns; q++) {
        int64_t i = s->starting[q], g = heaviest(s, i);
        s->grp[i] = g;
        s->active[i] = 0;
        for (int64_t k = s->u_start[i], b = k + s->u_hops[i]; k < b; k++)
            cross_add(s, k, s->u_flat[k], g);
        due_push(s->lat, &s->ln, s->tx[i], i);
    }
    /* a link that got busier: the messages crossing it from lighter groups move */
    for (int64_t q = 0; q < nc; q++) {
        int64_t l = s->touched[q];
        if (s->acc[l] <= 0)
            continue;
        int64_t np = 0;
        const Vec *v = &s->lvec[l];
        double wl = s->w[l];
        for (int64_t r = 0; r < v->n; r++)
            if (s->w[v->other[r]] < wl)
                s->pscratch[np++] = v->id[r];
        for (int64_t r = 0; r < np; r++) {
            int64_t p = s->pscratch[r];
            /* to the heaviest link of the route, not l: one not yet looked at this
             * event (a group that got quieter) may be heavier */
            while (s->pairs[p].count > 0 && !s->failed) {
                int64_t i = s->cross[s->pairs[p].head].which;
                regroup(s, i, heaviest(s, i), t);
            }
        }
    }
    /* a link that got quieter gives its members crossing a heavier link to the heaviest
     * link of their route */
    for (int64_t q = 0; q < nc; q++) {
        int64_t l = s->touched[q];
        if (s->acc[l] >= 0)
            continue;
        int64_t np = 0;
        const Vec *v = &s->gvec[l];
        double wl = s->w[l];
        for (int64_t r = 0; r < v->n; r++)
            if (s->w[v->other[r]] > wl)
                s->pscratch[np++] = v->id[r];
        for (int64_t r = 0; r < np; r++) {
            int64_t p = s->pscratch[r];
            /* the pair may have lost members (and group l others) on the way */
            while (s->pairs[p].count > 0 && s->pairs[p].g == l && !s->failed) {
                int64_t i = s->cross[s->pairs[p].head].which;
                regroup(s, i, heaviest(s, i), t);
            }
        }
    }
}

static int64_t take_starts(G *s, double t, int64_t n) {
    int64_t ns = 0;
    int64_t *batch = s->batch;
    for (;;) {
        while (s->rn > 0 && s->rheap[0].when <= t)
            batch[n++] = due_pop(s->rheap, &s->rn);
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
        if (!(s->rn > 0 && s->rheap[0].when <= t))
            break;
    }
    return ns;
}

static int run(G *s, int64_t nqueue, const int64_t *queue, int64_t *events) {
    int64_t qpos = 0;
    *events = 0;
    for (;;) {
        if (s->failed)
            return s->failed;
        double t_start = qpos < nqueue ? s->start[queue[qpos]] : INFINITY;
        if (s->rn > 0 && s->rheap[0].when < t_start)
            t_start = s->rheap[0].when;
        /* the latent messages whose bytes start moving by the next event join their
         * groups first (each may bring its group's next end forward) */
        double t_end = s->tree[1];
        if (s->ln > 0 && s->lat[0].when <= (t_end < t_start ? t_end : t_start)) {
            /* in tx order, each bringing the next event forward to its own end at most */
            while (s->ln > 0 && s->lat[0].when <= (t_end < t_start ? t_end : t_start)) {
                int64_t i = due_pop(s->lat, &s->ln);
                activate(s, i);
                double e = end_of(s, s->grp[i], i);
                if (e < t_end)
                    t_end = e;
            }
            refresh_dirty(s);
            t_end = s->tree[1];
        }
        if (t_end == INFINITY && t_start == INFINITY)
            break;
        if (t_end != t_end || t_start != t_start)
            return -1;
        ++*events;
        int64_t ne = 0;
        double t;
        if (t_end <= t_start) {
            t = t_end;
            double limit = t_end + END_RTOL * fabs(t_end);
            if (!(limit <= DBL_MAX)) limit = DBL_MAX; /* not inf: past every end there is */
            ne = take_ends(s, limit, 1, 0);
            for (int64_t q = 0; q < ne; q++)
                s->active[s->ending[q]] = 0;
            s->count -= ne;
            for (int64_t q = 0; q < ne; q++)
                release(s, s->ending[q], s->end[s->ending[q]]);
        } else {
            t = t_start;
        }
        int64_t nb = 0;
        while (qpos < nqueue && s->start[queue[qpos]] <= t)
            s->batch[nb++] = queue[qpos++];
        int64_t ns = take_starts(s, t, nb);
        s->count += ns;
        change(s, t, ns, ne);
        refresh_dirty(s);
    }
    return s->count == 0 ? 0 : -1;
}

int64_t parasol_phase_trace_groups(PHASE_IO_PARAMS) {
    G s;
    memset(&s, 0, sizeof s);
    PHASE_IO_KEEP(s);
    int64_t crossings = phase_crossings(m, u_start, u_hops);
    size_t M = (size_t)m + 1, K = (size_t)crossings + 1, NL = (size_t)nlinks + 2;
    int64_t leaves = 1;
    while (leaves < (int64_t)NL)
        leaves *= 2;
    s.leaves = leaves;
    s.pcap = 1024;
    s.max_pairs = 4 * (crossings + 1) + (1 << 20);
    if (s.max_pairs > INT32_MAX)
        s.max_pairs = INT32_MAX;
    s.hcap = 2048;
    int ok = 1;
#define ALLOC(p, n) ok &= ((p = calloc((n), sizeof *(p))) != NULL)
    ALLOC(s.cross, K);
    ALLOC(s.load, NL);
    ALLOC(s.lvec, NL);
    ALLOC(s.gvec, NL);
    ALLOC(s.acc, NL);
    ALLOC(s.lmark, NL);
    ALLOC(s.touched, NL);
    ALLOC(s.gmark, NL);
    ALLOC(s.last_g, NL);
    ALLOC(s.last_pair, NL);
    ALLOC(s.w, NL);
    ALLOC(s.since, NL);
    ALLOC(s.V, NL);
    ALLOC(s.tv, NL);
    ALLOC(s.heap, NL);
    ALLOC(s.dirty, NL);
    ALLOC(s.pscratch, 1);
    ALLOC(s.grp, M);
    ALLOC(s.hpos, M);
    ALLOC(s.left, M);
    ALLOC(s.F, M);
    ALLOC(s.tx, M);
    ALLOC(s.ready, M);
    ALLOC(s.active, M);
    ALLOC(s.ending, M);
    ALLOC(s.starting, M);
    ALLOC(s.batch, M);
    ALLOC(s.rheap, M);
    ALLOC(s.lat, M);
    ALLOC(s.pairs, (size_t)s.pcap);
    ALLOC(s.hash, (size_t)s.hcap);
    ALLOC(s.tree, 2 * (size_t)leaves);
    /* the first room of every heap and pair list, in one pool: a group's heap holds
     * at most the messages crossing it, a link's pairs at most its crossings (a
     * group's pairs may outgrow theirs, and then move to an allocation of their own) */
    int64_t *pool = NULL;
    ALLOC(pool, 5 * K);
#undef ALLOC
    int64_t rc = -2;
    int64_t pscap = 1;
    if (ok) {
        /* pair scratch: at most the pairs of one link or group, bounded by the links */
        free(s.pscratch);
        pscap = (int64_t)NL;
        s.pscratch = malloc((size_t)pscap * sizeof *s.pscratch);
        ok = s.pscratch != NULL;
    }
    if (ok) {
        for (int64_t q = 0; q < s.hcap; q++)
            s.hash[q] = -1;
        for (size_t q = 0; q < NL; q++) {
            s.lmark[q] = s.gmark[q] = s.last_g[q] = -1;
        }
        for (int64_t q = 0; q < 2 * leaves; q++)
            s.tree[q] = INFINITY;
        for (int64_t k = 0; k < crossings; k++)
            s.touched[u_flat[k]]++; /* (scratch) the crossings of each link */
        int64_t at = 0;
        for (size_t l = 0; l < NL; l++) {
            int64_t room = s.touched[l];
            s.touched[l] = 0;
            s.heap[l].a = pool + at;
            s.lvec[l].id = pool + K + at;
            s.lvec[l].other = pool + 2 * K + at;
            s.gvec[l].id = pool + 3 * K + at;
            s.gvec[l].other = pool + 4 * K + at;
            s.heap[l].cap = s.lvec[l].cap = s.gvec[l].cap = room;
            at += room;
        }
        for (int64_t i = 0; i < m; i++) {
            for (int64_t k = u_start[i], b = k + u_hops[i]; k < b; k++)
                s.cross[k].which = (int32_t)i;
            s.grp[i] = -1;
            s.hpos[i] = -1;
            s.ready[i] = start[i];
            s.left[i] = wait_count ? wait_count[i] : 0;
            t0[i] = NAN;
            end[i] = NAN;
        }
        rc = run(&s, nqueue, queue, events);
    }
    if (s.heap)
        for (size_t q = 0; q < NL; q++)
            if (s.heap[q].owned)
                free(s.heap[q].a);
    free(s.cross);
    free(s.load);
    if (s.lvec && s.gvec)
        for (size_t q = 0; q < NL; q++) {
            if (s.lvec[q].owned) {
                free(s.lvec[q].id);
                free(s.lvec[q].other);
            }
            if (s.gvec[q].owned) {
                free(s.gvec[q].id);
                free(s.gvec[q].other);
            }
        }
    free(s.lvec);
    free(s.gvec);
    free(s.acc);
    free(s.lmark);
    free(s.touched);
    free(s.gmark);
    free(s.last_g);
    free(s.last_pair);
    free(s.w);
    free(s.since);
    free(s.V);
    free(s.tv);
    free(s.heap);
    free(s.dirty);
    free(s.pscratch);
    free(s.grp);
    free(s.hpos);
    free(s.left);
    free(s.F);
    free(s.tx);
    free(s.ready);
    free(s.active);
    free(s.ending);
    free(s.starting);
    free(s.batch);
    free(s.rheap);
    free(s.lat);
    free(s.pairs);
    free(s.hash);
    free(s.tree);
    free(pool);
    return rc;
}
