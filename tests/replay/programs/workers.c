/* Master and workers with receives from any source (MPI_ANY_SOURCE): rank 0 hands out
 * 40 tasks; each worker computes a task in a time that depends on its rank (rank r
 * takes 1 + (5 r mod 7) units), so results come back in an order far from the ranks'.
 * Rank 0 takes each result with MPI_Recv(MPI_ANY_SOURCE) and gives that worker the
 * next task; in a second phase it collects with MPI_Irecv(MPI_ANY_SOURCE) + MPI_Wait,
 * every worker sending a large (rendezvous, 80 KB) result after its own compute.
 * Made as the other programs here (tests/replay/smpi_replay.py, trace_program):
 *   smpicc -O1 workers.c -o workers
 *   smpirun -np 16 -platform trace-platform.xml -hostfile trace-hosts -trace-ti \
 *     --cfg=tracing/filename:workers.txt --cfg=smpi/simulate-computation:no ./workers
 * on a flat cluster of 16 hosts (1 Gf, 1 GBps, 1 us). SMPI writes the receives from
 * any source as "recv -333" and their waits as "wait -333 0 3"; SimGrid's own replay
 * is given a copy saying -555 and -556 (for_simgrid_replay). */
#include <mpi.h>
#include <smpi/smpi.h>
#define TASKS 40
static double big[10000];
int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double task[64] = {0}, result[64] = {0};
  if (rank == 0) {
    int sent = 0;
    for (int w = 1; w < size; w++) {
      task[0] = sent < TASKS ? sent : -1;
      MPI_Send(task, 64, MPI_DOUBLE, w, 1, MPI_COMM_WORLD);
      sent++;
    }
    for (int done = 0; done < TASKS; done++) {
      MPI_Status st;
      MPI_Recv(result, 64, MPI_DOUBLE, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &st);
      smpi_execute_flops(2e4);
      task[0] = sent < TASKS ? sent : -1;
      MPI_Send(task, 64, MPI_DOUBLE, st.MPI_SOURCE, 1, MPI_COMM_WORLD);
      sent++;
    }
    for (int w = 1; w < size; w++) {
      MPI_Request rq;
      MPI_Irecv(big, 10000, MPI_DOUBLE, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &rq);
      MPI_Wait(&rq, MPI_STATUS_IGNORE);
      smpi_execute_flops(1e4);
    }
  } else {
    for (;;) {
      MPI_Recv(task, 64, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (task[0] < 0)
        break;
      smpi_execute_flops(1e5 * (1 + (5 * rank) % 7));
      MPI_Send(result, 64, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
    }
    smpi_execute_flops(3e4 * (1 + (3 * rank) % 5));
    MPI_Send(big, 10000, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
