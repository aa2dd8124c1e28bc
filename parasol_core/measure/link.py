"""The host's one link: a message between two processes on this machine, through a pipe.

The processor section's combinations (``ia_spd = pt(1).iga / tl(1)(1).speed``, ...) and
``maxtotalspd`` need a link, and a host's processors talk through the kernel. This C
program forks; the two processes ping-pong a 1-byte message (latency = half the round
trip) and stream 64 KiB blocks one way with a 1-byte acknowledgement at the end (speed =
seconds per byte). Several runs each, mean and standard deviation. The network part of
`parasol-model measure` (MPI between hosts) measures real network links.
"""

from __future__ import annotations

__all__ = ["SOURCE"]

SOURCE = r"""
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

static double now_s(void) {
    struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
static void full_read(int fd, char *buf, long n) {
    while (n > 0) { long k = read(fd, buf, n); if (k <= 0) exit(3); n -= k; buf += k; }
}
static void full_write(int fd, const char *buf, long n) {
    while (n > 0) { long k = write(fd, buf, n); if (k <= 0) exit(3); n -= k; buf += k; }
}
#define BLOCK 65536
int main(int argc, char **argv) {
    double need = atof(argv[1]);
    int runs = atoi(argv[2]);
    int to_child[2], to_parent[2];
    if (pipe(to_child) || pipe(to_parent)) return 2;
    static char buf[BLOCK];
    memset(buf, 'x', sizeof buf);
    pid_t pid = fork();
    if (pid < 0) return 2;
    if (pid == 0) {
        char cmd;
        long n;
        for (;;) {
            full_read(to_child[0], &cmd, 1);
            if (cmd == 'q') _exit(0);
            full_read(to_child[0], (char *)&n, sizeof n);
            if (cmd == 'p') {
                for (long i = 0; i < n; i++) { full_read(to_child[0], buf, 1); full_write(to_parent[1], buf, 1); }
            } else {
                for (long i = 0; i < n; i++) full_read(to_child[0], buf, BLOCK);
                full_write(to_parent[1], buf, 1);
            }
        }
    }
    char c;
    double lat[64], spd[64];
    if (runs > 64) runs = 64;
    long n = 16;
    for (int pass = 0; pass < 2; pass++) {
        char cmd = pass ? 's' : 'p';
        for (int r = -1; r < runs; r++) {
            for (;;) {
                full_write(to_child[1], &cmd, 1);
                full_write(to_child[1], (char *)&n, sizeof n);
                double t0 = now_s();
                if (!pass) for (long i = 0; i < n; i++) { full_write(to_child[1], buf, 1); full_read(to_parent[0], &c, 1); }
                else { for (long i = 0; i < n; i++) full_write(to_child[1], buf, BLOCK); full_read(to_parent[0], &c, 1); }
                double t = now_s() - t0;
                if (r >= 0 || t >= need) {
                    if (r >= 0) { if (!pass) lat[r] = t / n / 2; else spd[r] = t / ((double)n * BLOCK); }
                    break;
                }
                n *= 2;
            }
        }
        n = 4;
    }
    c = 'q';
    full_write(to_child[1], &c, 1);
    waitpid(pid, NULL, 0);
    printf("{\"latency\": [");
    for (int r = 0; r < runs; r++) printf("%s%.9g", r ? ", " : "", lat[r]);
    printf("], \"speed\": [");
    for (int r = 0; r < runs; r++) printf("%s%.9g", r ? ", " : "", spd[r]);
    printf("]}\n");
    return 0;
}
"""
