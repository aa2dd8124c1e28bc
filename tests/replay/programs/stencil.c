/* A 1-D Jacobi stencil on a ring of ranks: each iteration exchanges halos with both
 * neighbours (Irecv, Isend, Waitall), computes, and every 4th iteration reduces the
 * residual (Allreduce). Halos of 16 KiB (eager) and 128 KiB (rendezvous) alternate.
 * ITERS iterations: 12 unless built with -DITERS=N (120 made traces/stencil-long.txt). */
#include <mpi.h>
#include <smpi/smpi.h>
#ifndef ITERS
#define ITERS 12
#endif
static double out[2][16384], in[2][16384];
int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int left = (rank + size - 1) % size, right = (rank + 1) % size;
  for (int it = 0; it < ITERS; it++) {
    int n = it % 2 ? 16384 : 2048; /* doubles: 128 KiB or 16 KiB */
    MPI_Request q[4];
    MPI_Irecv(in[0], n, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &q[0]);
    MPI_Irecv(in[1], n, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &q[1]);
    MPI_Isend(out[0], n, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &q[2]);
    MPI_Isend(out[1], n, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &q[3]);
    MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
    smpi_execute_flops(2e5 * (1 + rank % 3)); /* an uneven load */
    if (it % 4 == 3) {
      double r = rank, s;
      MPI_Allreduce(&r, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
  }
  MPI_Finalize();
  return 0;
}
