/* A trace compiled into a program of messages (parasol_core/replay/program.py, whose
 * _Builder is its executable specification: the same nodes, in the same order, the same
 * dependencies). Plain C, no Python.h, loaded with ctypes.
 *
 * Input, per action (rank by rank): kind (program.py's KINDS numbers, passed in K_*),
 * peer, tag, size, size2, flops; first[r]..first[r+1] are rank r's actions. A
 * collective's point-to-point steps come from Python (SMPI's algorithms there, once):
 * prim_ptr[i]..prim_ptr[i+1] are action i's steps, each an op (P_*), a peer, bytes and
 * a phase (its tag: the collective's number and phase). Receives from any source and
 * collectives costed by the model are left to Python (the caller does not come here).
 *
 * Output: per node src, dst (ranks), nbytes, flops, transfer (0/1), and its
 * dependencies as CSR (after_ptr, after_idx); per action op_start, op_end, op_msg,
 * op_flops (the scratch dep0, dep1, xstart and xcount 32-bit: the caller keeps max_nodes
 * and max_edges below 2^31; narrow: no op_start, op_end and op_msg int32, op_flops uint8 1 where the
 * action computes; the caller keeps max_nodes below 2^31). Arrays sized by the caller
 * (max_nodes, max_edges). Returns the node count,
 * or a negative code: -2 no memory, -6 the caller's room is short, -10 a send or receive
 * never matched, -13 a wait with no request (*where: the action; the caller asks the
 * Python builder for the message). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { P_SEND = 0, P_RECV = 1, P_ISEND = 2, P_IRECV = 3, P_WAITALL = 4 };

typedef struct {
    int64_t src, dst, tag, space; /* space 0: the program's tags; 1: collectives' */
    int64_t head, tail;           /* pending entries (pool indices), -1: none */
    int used;
} Slot;

typedef struct {
    int side; /* 's' or 'r' */
    int64_t msg, val, action, next;
} Entry;

typedef struct {
    int64_t src, dst, tag, done, msg;
} Request;

typedef struct {
    /* nodes */
    int64_t n, cap, *src, *dst;
    int32_t *dep0, *dep1, *xstart, *xcount; /* scratch: the caller keeps nodes and edges below 2^31 */
    double *nbytes, *flops;
    uint8_t *transfer;
    int64_t nx, xcap, *xdeps; /* the deps of joins of more than two */
    /* channels */
    Slot *slots;
    int64_t nslots, nused; /* open addressing, grown to keep it at most half full */
    Entry *pool;
    int64_t npool, poolcap, freed; /* freed: a list of popped entries, through next */
    double eager;
    int err;
} B;

static uint64_t hash4(int64_t a, int64_t b, int64_t c, int64_t d) {
    uint64_t h = 1469598103934665603ULL;
    int64_t v[4] = {a, b, c, d};
    for (int i = 0; i < 4; i++) {
        h ^= (uint64_t)v[i];
        h *= 1099511628211ULL;
        h ^= h >> 29;
    }
    return h;
}

/* the table twice as large, every slot moved (the pool's entries do not point at slots) */
static int grow_slots(B *b) {
    int64_t n = 2 * b->nslots;
    Slot *t = calloc((size_t)n, sizeof(Slot));
    if (!t)
        return -2;
    uint64_t mask = (uint64_t)n - 1;
    for (int64_t k = 0; k < b->nslots; k++) {
        Slot *s = &b->slots[k];
        if (!s->used)
            continue;
        uint64_t i = hash4(s->src, s->dst, s->tag, s->space) & mask;
        while (t[i].used)
            i = (i + 1) & mask;
        t[i] = *s;
    }
    free(b->slots);
    b->slots = t;
    b->nslots = n;
    return 0;
}

/* the channel (src, dst, tag, space), made if new; NULL when memory ran out (b->err) */
static Slot *slot_of(B *b, int64_t src, int64_t dst, int64_t tag, int64_t space) {
    if (2 * (b->nused + 1) > b->nslots && grow_slots(b)) {
        b->err = -2;
        return NULL;
    }
    uint64_t mask = (uint64_t)b->nslots - 1;
    uint64_t i = hash4(src, dst, tag, space) & mask;
    for (;;) {
        Slot *s = &b->slots[i];
        if (!s->used) {
            b->nused++;
            s->used = 1;
            s->src = src;
            s->dst = dst;
            s->tag = tag;
            s->space = space;
            s->head = s->tail = -1;
            return s;
        }
        if (s->src == src && s->dst == dst && s->tag == tag && s->space == space)
            return s;
        i = (i + 1) & mask;
    }
}

static int64_t node(B *b, int64_t a, int64_t d, double nbytes, int64_t d0, int64_t d1, double flops,
                    int transfer) {
    if (b->n == b->cap) {
        b->err = -6;
        return 0;
    }
    int64_t k = b->n++;
    b->src[k] = a;
    b->dst[k] = d;
    b->nbytes[k] = nbytes;
    b->flops[k] = flops;
    b->transfer[k] = (uint8_t)transfer;
    b->dep0[k] = (int32_t)d0;
    b->dep1[k] = (int32_t)d1;
    b->xstart[k] = 0;
    b->xcount[k] = 0;
    return k;
}

/* program.py's join of two: [a, b] */
static int64_t join2(B *b, int64_t rank, int64_t a, int64_t c) {
    if (a < 0 || a == c)
        return c;
    if (c < 0)
        return a;
    return node(b, rank, rank, 0.0, a, c, 0.0, 0);
}

/* program.py's join of a list (dedupe in order, drop < 0) */
static int64_t join_list(B *b, int64_t rank, const int64_t *deps, int64_t n) {
    if (n == 2)
        return join2(b, rank, deps[0], deps[1]);
    int64_t start = b->nx, m = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t d = deps[i];
        if (d < 0)
            continue;
        int seen = 0;
        for (int64_t j = 0; j < m; j++)
            if (b->xdeps[start + j] == d) {
                seen = 1;
                break;
            }
        if (seen)
            continue;
        if (start + m >= b->xcap) {
            b->err = -6;
            return -1;
        }
        b->xdeps[start + m++] = d;
    }
    if (m == 0)
        return -1;
    if (m == 1)
        return b->xdeps[start];
    if (m == 2)
        return node(b, rank, rank, 0.0, b->xdeps[start], b->xdeps[start + 1], 0.0, 0);
    int64_t k = node(b, rank, rank, 0.0, -1, -1, 0.0, 0);
    b->xstart[k] = (int32_t)start;
    b->xcount[k] = (int32_t)m;
    b->nx = start + m;
    return k;
}

static void push(B *b, Slot *s, int side, int64_t msg, int64_t val, int64_t action) {
    int64_t e;
    if (b->freed >= 0) { /* a popped entry again: the pool holds the pending ones */
        e = b->freed;
        b->freed = b->pool[e].next;
    } else {
        if (b->npool == b->poolcap) {
            int64_t cap = 2 * b->poolcap;
            Entry *p = realloc(b->pool, (size_t)cap * sizeof(Entry));
            if (!p) {
                b->err = -2;
                return;
            }
            b->pool = p;
            b->poolcap = cap;
        }
        e = b->npool++;
    }
    b->pool[e] = (Entry){side, msg, val, action, -1};
    if (s->tail >= 0)
        b->pool[s->tail].next = e;
    else
        s->head = e;
    s->tail = e;
}

/* the slot's first entry, taken off and put on the free list: its fields stay as they
 * are until the next push */
static Entry pop(B *b, Slot *s) {
    int64_t k = s->head;
    Entry e = b->pool[k];
    s->head = e.next;
    if (s->head < 0)
        s->tail = -1;
    b->pool[k].next = b->freed;
    b->freed = k;
    return e;
}

/* program.py's _Builder.send: its transfer node; *eager */
static int64_t post_send(B *b, int64_t rank, int64_t dst, int64_t tag, int64_t space, double nbytes,
                         int64_t cur, int64_t action, int *eager) {
    *eager = nbytes < b->eager;
    Slot *s = slot_of(b, rank, dst, tag, space);
    if (!s)
        return 0;
    if (s->head >= 0 && b->pool[s->head].side == 'r') {
        Entry e = pop(b, s);
        int64_t msg = e.msg, post = e.val;
        b->src[msg] = rank;
        b->dst[msg] = dst;
        b->nbytes[msg] = nbytes;
        int64_t d[2] = {cur, post}, m = 0, out[2] = {-1, -1};
        for (int i = 0; i < (*eager ? 1 : 2); i++)
            if (d[i] >= 0)
                out[m++] = d[i];
        b->dep0[msg] = (int32_t)out[0];
        b->dep1[msg] = (int32_t)out[1];
        return msg;
    }
    int64_t msg = node(b, rank, dst, nbytes, cur >= 0 ? cur : -1, -1, 0.0, 1);
    push(b, s, 's', msg, *eager, action);
    return msg;
}

/* program.py's _Builder.recv (not from any source): its completion; *msg */
static int64_t post_recv(B *b, int64_t rank, int64_t src, int64_t tag, int64_t space, int64_t cur,
                         int64_t action, int blocking, int64_t *msg) {
    Slot *s = slot_of(b, src, rank, tag, space);
    if (!s) {
        *msg = 0;
        return 0;
    }
    if (s->head >= 0 && b->pool[s->head].side == 's') {
        Entry e = pop(b, s);
        *msg = e.msg;
        if (e.val) /* eager */
            return blocking ? join2(b, rank, *msg, cur) : *msg;
        if (cur >= 0) {
            if (b->dep0[*msg] < 0)
                b->dep0[*msg] = (int32_t)cur;
            else
                b->dep1[*msg] = (int32_t)cur;
        }
        return *msg;
    }
    *msg = node(b, src, rank, 0.0, -1, -1, 0.0, 1);
    push(b, s, 'r', *msg, cur, action);
    return blocking ? join2(b, rank, *msg, cur) : *msg;
}

static void free_all(B *b, Request *req, int64_t *vals) {
    free(b->slots);
    free(b->pool);
    free(req);
    free(vals);
}

int64_t parasol_replay_compile(
    int64_t ranks, const int64_t *first, int64_t nact, const int8_t *kind, const int64_t *peer,
    const int64_t *tag, const double *size, const double *size2, const double *flops,
    const int64_t *prim_ptr, const int64_t *prim_op, const int64_t *prim_peer,
    const double *prim_bytes, const int64_t *prim_phase, const int64_t *kinds, double eager,
    int64_t max_nodes, int64_t max_edges, int64_t *out_src, int64_t *out_dst, double *out_nbytes,
    double *out_flops, uint8_t *out_transfer, int32_t *dep0, int32_t *dep1, int32_t *xstart,
    int32_t *xcount, int64_t *xdeps, int64_t *after_ptr, int64_t *after_idx, int64_t *op_start,
    int64_t *op_end, int64_t *op_msg, double *op_flops, int64_t *where, int64_t narrow) {
    /* kinds: the numbers of compute, send, isend, recv, irecv, wait, waitall, sendRecv,
     * and the first and last collective (they are contiguous in KINDS) */
    const int64_t K_COMPUTE = kinds[0], K_SEND = kinds[1], K_ISEND = kinds[2], K_RECV = kinds[3],
                  K_IRECV = kinds[4], K_WAIT = kinds[5], K_WAITALL = kinds[6], K_SENDRECV = kinds[7],
                  K_COLL0 = kinds[8], K_COLL1 = kinds[9];
    B b;
    memset(&b, 0, sizeof b);
    b.cap = max_nodes;
    b.src = out_src;
    b.dst = out_dst;
    b.nbytes = out_nbytes;
    b.flops = out_flops;
    b.transfer = out_transfer;
    b.dep0 = dep0;
    b.dep1 = dep1;
    b.xstart = xstart;
    b.xcount = xcount;
    b.xdeps = xdeps;
    b.xcap = max_edges;
    b.eager = eager;
    b.nslots = 1024; /* grown as channels come (a table sized by the trace touched GBs) */
    b.slots = calloc((size_t)b.nslots, sizeof(Slot));
    b.poolcap = 1024;
    b.freed = -1;
    b.pool = malloc((size_t)b.poolcap * sizeof(Entry));
    int64_t reqcap = 64;
    Request *req = malloc((size_t)reqcap * sizeof(Request));
    int64_t valcap = 64;
    int64_t *vals = malloc((size_t)valcap * sizeof(int64_t)); /* a collective's requests */
    if (!b.slots || !b.pool || !req || !vals) {
        free_all(&b, req, vals);
        return -2;
    }
    for (int64_t rank = 0; rank < ranks; rank++) {
        int64_t cur = -1, nreq = 0, number = 0;
        for (int64_t i = first[rank]; i < first[rank + 1]; i++) {
            int64_t k = kind[i];
            int64_t a_start = cur, a_msg = -1;
            double a_flops = 0.0;
            if (k == K_COMPUTE) {
                if (flops[i] > 0)
                    cur = node(&b, rank, rank, 0.0, cur >= 0 ? cur : -1, -1, flops[i], 0);
                a_flops = flops[i];
            } else if (k == K_SEND || k == K_ISEND) {
                int e;
                int64_t msg = post_send(&b, rank, peer[i], tag[i], 0, size[i], cur, i, &e);
                if (k == K_ISEND) {
                    if (nreq == reqcap) {
                        reqcap *= 2;
                        Request *r2 = realloc(req, (size_t)reqcap * sizeof(Request));
                        if (!r2) {
                            free_all(&b, req, vals);
                            return -2;
                        }
                        req = r2;
                    }
                    req[nreq++] = (Request){rank, peer[i], tag[i], e ? -1 : msg, msg};
                } else if (!e) {
                    cur = msg;
                    a_msg = msg;
                }
            } else if (k == K_RECV || k == K_IRECV) {
                int64_t msg;
                int64_t done = post_recv(&b, rank, peer[i], tag[i], 0, cur, i, k == K_RECV, &msg);
                if (k == K_RECV) {
                    cur = done;
                    a_msg = msg;
                } else {
                    if (nreq == reqcap) {
                        reqcap *= 2;
                        Request *r2 = realloc(req, (size_t)reqcap * sizeof(Request));
                        if (!r2) {
                            free_all(&b, req, vals);
                            return -2;
                        }
                        req = r2;
                    }
                    req[nreq++] = (Request){peer[i], rank, tag[i], done, msg};
                }
            } else if (k == K_WAIT) {
                if (!nreq) {
                    *where = i;
                    free_all(&b, req, vals);
                    return -13;
                }
                int64_t at = 0, src = peer[i], dst = (int64_t)size2[i], t = tag[i];
                for (int64_t q = 0; q < nreq; q++)
                    if (req[q].dst == dst && req[q].tag == t &&
                        (req[q].src == src || req[q].src == -555 || src == -555)) {
                        at = q;
                        break;
                    }
                Request r = req[at];
                memmove(&req[at], &req[at + 1], (size_t)(nreq - at - 1) * sizeof(Request));
                nreq--;
                cur = join2(&b, rank, cur, r.done);
                if (r.done >= 0)
                    a_msg = r.msg;
            } else if (k == K_WAITALL) {
                int64_t m = 0, firstmsg = -1;
                if (valcap < nreq + 1) {
                    valcap = 2 * (nreq + 1);
                    int64_t *v2 = realloc(vals, (size_t)valcap * sizeof(int64_t));
                    if (!v2) {
                        free_all(&b, req, vals);
                        return -2;
                    }
                    vals = v2;
                }
                vals[m++] = cur;
                for (int64_t q = 0; q < nreq; q++)
                    if (req[q].done >= 0) {
                        if (firstmsg < 0)
                            firstmsg = req[q].msg;
                        vals[m++] = req[q].done;
                    }
                if (m > 1) {
                    cur = join_list(&b, rank, vals, m);
                    a_msg = firstmsg;
                }
                nreq = 0;
            } else if (k == K_SENDRECV || (k >= K_COLL0 && k <= K_COLL1)) {
                /* _Ops: a sendRecv (tag 0, the program's) or a collective's steps */
                int64_t space = k == K_SENDRECV ? 0 : 1, firstmsg = -1, nv = 0;
                for (int64_t q = prim_ptr[i]; q < prim_ptr[i + 1]; q++) {
                    int64_t op = prim_op[q], p = prim_peer[q], msg;
                    int64_t t = k == K_SENDRECV ? 0 : 2 * number + prim_phase[q];
                    int e;
                    if (op == P_SEND || op == P_ISEND) {
                        msg = post_send(&b, rank, p, t, space, prim_bytes[q], cur, i, &e);
                        if (firstmsg < 0)
                            firstmsg = msg;
                        if (op == P_SEND) {
                            if (!e)
                                cur = msg;
                        } else {
                            if (nv + 1 >= valcap) {
                                valcap *= 2;
                                int64_t *v2 = realloc(vals, (size_t)valcap * sizeof(int64_t));
                                if (!v2) {
                                    free_all(&b, req, vals);
                                    return -2;
                                }
                                vals = v2;
                            }
                            vals[1 + nv++] = e ? -1 : msg;
                        }
                    } else if (op == P_RECV || op == P_IRECV) {
                        int64_t done = post_recv(&b, rank, p, t, space, cur, i, op == P_RECV, &msg);
                        if (firstmsg < 0)
                            firstmsg = msg;
                        if (op == P_RECV)
                            cur = done;
                        else {
                            if (nv + 1 >= valcap) {
                                valcap *= 2;
                                int64_t *v2 = realloc(vals, (size_t)valcap * sizeof(int64_t));
                                if (!v2) {
                                    free_all(&b, req, vals);
                                    return -2;
                                }
                                vals = v2;
                            }
                            vals[1 + nv++] = done;
                        }
                    } else { /* P_WAITALL: the requests of steps peer .. nv */
                        int64_t from = p;
                        vals[from] = cur; /* [cur, *requests from `from` on] */
                        cur = join_list(&b, rank, &vals[from], 1 + nv - from);
                        nv = from; /* those requests are done */
                    }
                    if (b.err) {
                        free_all(&b, req, vals);
                        return b.err;
                    }
                }
                a_msg = firstmsg;
                if (k != K_SENDRECV) {
                    number++;
                    if (flops[i] > 0) {
                        cur = node(&b, rank, rank, 0.0, cur >= 0 ? cur : -1, -1, flops[i], 0);
                        a_flops = flops[i];
                    }
                }
            }
            if (b.err) {
                free_all(&b, req, vals);
                return b.err;
            }
            if (narrow) { /* a one-shot replay's: 32-bit node numbers, whether it computes */
                ((int32_t *)op_end)[i] = (int32_t)cur;
                ((int32_t *)op_msg)[i] = (int32_t)a_msg;
                ((uint8_t *)op_flops)[i] = a_flops > 0;
            } else {
                op_start[i] = a_start;
                op_end[i] = cur;
                op_msg[i] = a_msg;
                op_flops[i] = a_flops;
            }
        }
    }
    /* every queue empty, or the first action left in one */
    for (int64_t s = 0; s < b.nslots; s++)
        if (b.slots[s].used && b.slots[s].head >= 0) {
            *where = b.pool[b.slots[s].head].action;
            free_all(&b, req, vals);
            return -10;
        }
    /* the dependencies as CSR, in node order */
    int64_t e = 0;
    after_ptr[0] = 0;
    for (int64_t k = 0; k < b.n; k++) {
        if (b.xcount[k]) {
            if (e + b.xcount[k] > max_edges) {
                free_all(&b, req, vals);
                return -6;
            }
            memcpy(&after_idx[e], &b.xdeps[b.xstart[k]], (size_t)b.xcount[k] * sizeof(int64_t));
            e += b.xcount[k];
        } else {
            if (e + 2 > max_edges) {
                free_all(&b, req, vals);
                return -6;
            }
            if (b.dep0[k] >= 0)
                after_idx[e++] = b.dep0[k];
            if (b.dep1[k] >= 0)
                after_idx[e++] = b.dep1[k];
        }
        after_ptr[k + 1] = e;
    }
    (void)nact;
    free_all(&b, req, vals);
    return b.n;
}
