/* Sub-communicators used alike by every group: MPI_COMM_WORLD split into 4 rows of 4
 * ranks (MPI_Comm_split, color rank / 4), each row calling the same collectives with
 * the same arguments (an allreduce of 1,000 doubles, a bcast of 100 from the row's
 * rank 1), then a barrier on a duplicate of MPI_COMM_WORLD (MPI_Comm_dup).
 * SimGrid 3.32's -trace-ti writes no line for the split or the dup, and the row
 * collectives as collectives of MPI_COMM_WORLD ("allreduce 1000 0 0" on every rank,
 * "bcast 100 1 0": the root a rank of the row): nothing in the trace says the rows
 * existed, and both replays (SimGrid's and ours) run them over all 16 ranks
 * (docs/replay.md, "Communicators"). Made as the other programs here
 * (tests/replay/smpi_replay.py, trace_program). */
#include <mpi.h>
#include <smpi/smpi.h>
int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm row, dup;
  MPI_Comm_split(MPI_COMM_WORLD, rank / 4, rank, &row);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  static double x[1000], y[1000];
  smpi_execute_flops(1e5 * (1 + rank % 3));
  MPI_Allreduce(x, y, 1000, MPI_DOUBLE, MPI_SUM, row);
  MPI_Bcast(x, 100, MPI_DOUBLE, 1, row);
  MPI_Barrier(dup);
  MPI_Comm_free(&row);
  MPI_Comm_free(&dup);
  MPI_Finalize();
  return 0;
}
