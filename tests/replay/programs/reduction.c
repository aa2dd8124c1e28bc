/* A reduction loop: compute, reduce partial results to a root, broadcast the new
 * parameters, and every other iteration an Allreduce of a large vector (rendezvous). */
#include <mpi.h>
#include <smpi/smpi.h>
static double a[20000], b[20000];
int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int it = 0; it < 8; it++) {
    smpi_execute_flops(1e5 * (1 + (rank + it) % 4));
    MPI_Reduce(a, b, 512, MPI_DOUBLE, MPI_SUM, it % size, MPI_COMM_WORLD);
    MPI_Bcast(a, 64, MPI_DOUBLE, it % size, MPI_COMM_WORLD);
    if (it % 2)
      MPI_Allreduce(a, b, 20000, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    else
      MPI_Allreduce(a, b, 100, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
