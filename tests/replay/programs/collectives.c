/* The other collectives: Gather, Scatter, Gatherv, Allgatherv, Alltoallv and
 * Reduce_scatter with uneven counts, after an uneven computation; then a Barrier. */
#include <mpi.h>
#include <smpi/smpi.h>
static double a[65536], b[65536*4];
int main(int argc, char **argv) {
  int rank, size, counts[64], displs[64], scounts[64];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 0; i < size; i++) { counts[i] = 100 * (i + 1); displs[i] = i * 2000; }
  for (int i = 0; i < size; i++) scounts[i] = 100 * (rank + 1);
  smpi_execute_flops(1e5 * (rank+1));
  MPI_Gather(a, 1000, MPI_DOUBLE, b, 1000, MPI_DOUBLE, 2, MPI_COMM_WORLD);
  MPI_Scatter(a, 500, MPI_DOUBLE, b, 500, MPI_DOUBLE, 1, MPI_COMM_WORLD);
  MPI_Gatherv(a, counts[rank], MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Allgatherv(a, counts[rank], MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Alltoallv(a, scounts, displs, MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Reduce_scatter(a, b, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
