/* A pipeline: items flow from rank 0 to the last rank; each stage receives an item
 * (blocking), computes and sends it on (large items rendezvous, small ones eager);
 * the last stage answers rank 0 with a Sendrecv at the end, and rank 0 collects a
 * count from any source. */
#include <mpi.h>
#include <smpi/smpi.h>
static double item[12000];
int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int k = 0; k < 6; k++) {
    int n = k % 3 == 0 ? 12000 : 500; /* 96 KB or 4 KB */
    if (rank > 0)
      MPI_Recv(item, n, MPI_DOUBLE, rank - 1, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    smpi_execute_flops(5e4 * (1 + rank % 2));
    if (rank < size - 1)
      MPI_Send(item, n, MPI_DOUBLE, rank + 1, k, MPI_COMM_WORLD);
  }
  double x = rank, y;
  if (rank == size - 1)
    MPI_Sendrecv(&x, 1, MPI_DOUBLE, 0, 9, &y, 1, MPI_DOUBLE, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (rank == 0)
    MPI_Sendrecv(&x, 1, MPI_DOUBLE, size - 1, 9, &y, 1, MPI_DOUBLE, size - 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Finalize();
  return 0;
}
