/* What both event traces of a communication phase take and give: parasol_phase_trace
 * (phases.c) and parasol_phase_trace_groups (phase_groups.c) have the same arguments,
 * set by parasol_core/simulate/trace.py through ctypes, and keep the same of them in
 * their state. Declared once here.
 *
 * m messages; nlinks link slots; message i crosses the slots
 * u_flat[u_start[i] .. u_start[i] + u_hops[i]]; speed, latency per slot; nbytes, start,
 * instant per message; the messages in order of start (queue, nqueue of them); how many
 * each waits for (wait_count) and whom it releases (dependents[dep_ptr[i] ..
 * dep_ptr[i+1]]), all NULL when none waits. Out: t0, end per message; busy, max_n per
 * slot; the number of events. */

#ifndef PARASOL_PHASE_IO_H
#define PARASOL_PHASE_IO_H

#include <stdint.h>

#define PHASE_IO_PARAMS                                                                   \
    int64_t m, int64_t nlinks, const int64_t *u_start, const int64_t *u_hops,            \
        const int64_t *u_flat, const double *speed, const double *latency,               \
        const double *nbytes, const double *start, const uint8_t *instant, int64_t nqueue, \
        const int64_t *queue, const int64_t *wait_count, const int64_t *dep_ptr,           \
        const int64_t *dependents, double *t0, double *end, double *busy, int64_t *max_n,  \
        int64_t *events

/* the arguments a trace's state keeps */
#define PHASE_IO_FIELDS                                  \
    int64_t m, nlinks;                                   \
    const int64_t *u_start, *u_hops, *u_flat;            \
    const double *speed, *latency, *nbytes, *start;      \
    const uint8_t *instant;                              \
    const int64_t *dep_ptr, *dependents;                 \
    double *t0, *end, *busy;                             \
    int64_t *max_n;

/* the state s (a struct with PHASE_IO_FIELDS) takes the arguments, within a function of
 * PHASE_IO_PARAMS */
#define PHASE_IO_KEEP(s)          \
    do {                          \
        (s).m = m;                \
        (s).nlinks = nlinks;      \
        (s).u_start = u_start;    \
        (s).u_hops = u_hops;      \
        (s).u_flat = u_flat;      \
        (s).speed = speed;        \
        (s).latency = latency;    \
        (s).nbytes = nbytes;      \
        (s).start = start;        \
        (s).instant = instant;    \
        (s).dep_ptr = dep_ptr;    \
        (s).dependents = dependents; \
        (s).t0 = t0;              \
        (s).end = end;            \
        (s).busy = busy;          \
        (s).max_n = max_n;        \
    } while (0)

/* the crossings (message, link slot) of all messages */
static inline int64_t phase_crossings(int64_t m, const int64_t *u_start, const int64_t *u_hops) {
    return m ? u_start[m - 1] + u_hops[m - 1] : 0;
}

#endif
