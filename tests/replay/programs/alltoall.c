/* All-to-all exchanges (a transpose): small and large blocks, an Allgather of the
 * block sizes, and a barrier between rounds. */
#include <mpi.h>
#include <smpi/smpi.h>
static double s[16 * 8192], r[16 * 8192];
int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int it = 0; it < 4; it++) {
    int n = it % 2 ? 8192 : 256; /* doubles a block: 64 KiB (rendezvous) or 2 KiB */
    smpi_execute_flops(3e5);
    MPI_Alltoall(s, n, MPI_DOUBLE, r, n, MPI_DOUBLE, MPI_COMM_WORLD);
    MPI_Allgather(s, 16, MPI_DOUBLE, r, 16, MPI_DOUBLE, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
