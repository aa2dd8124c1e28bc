/* Sub-communicators that differ: MPI_COMM_WORLD split (MPI_Comm_split) into ranks 0-3
 * and ranks 4-15; the first group allreduces 1,000 doubles and broadcasts, the second
 * allreduces 10 doubles; then every rank meets in a barrier of MPI_COMM_WORLD.
 * SimGrid 3.32's -trace-ti writes each group's collectives as collectives of
 * MPI_COMM_WORLD, so the ranks' collectives differ ("allreduce 1000 0 0" on rank 0,
 * "allreduce 10 0 0" on rank 4): our replay refuses the trace, naming both lines
 * (docs/replay.md, "Communicators"). Made as the other programs here
 * (tests/replay/smpi_replay.py, trace_program). */
#include <mpi.h>
#include <smpi/smpi.h>
int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm group;
  MPI_Comm_split(MPI_COMM_WORLD, rank < 4 ? 0 : 1, rank, &group);
  static double x[1000], y[1000];
  smpi_execute_flops(1e5 * (1 + rank % 3));
  if (rank < 4) {
    MPI_Allreduce(x, y, 1000, MPI_DOUBLE, MPI_SUM, group);
    MPI_Bcast(x, 1000, MPI_DOUBLE, 0, group);
  } else {
    MPI_Allreduce(x, y, 10, MPI_DOUBLE, MPI_SUM, group);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Comm_free(&group);
  MPI_Finalize();
  return 0;
}
