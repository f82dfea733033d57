#pragma once
// The MPI transport: one rank per device, so that the executor runs across processes and machines with
// `mpiexec -n N pipesim execute --transport mpi`. MPI stays inside mpi_transport.cpp (and distributed/): this
// header, and so every caller, compiles the same with or without MPI; a build without MPI says so when the
// transport is asked for.
//
// Each rank runs its device's worker (execute_real over devices_here() = {rank}); tensors travel as one
// message each (a header of stage, microbatch, kind, rows, cols, then the floats), sent without blocking so
// that two neighbours sending to each other cannot deadlock. A synchronised U's barrier is a message from
// every rank to every other. Each transport works on its own duplicate of MPI_COMM_WORLD, so the runs of
// several schedules cannot mix their messages. Monotonic times compare across ranks of one machine only.
#include <memory>

#include "executor/execution_result.h"
#include "executor/transport.h"
#include "sim/layout.h"

namespace pipesim::executor {

// Collective over MPI_COMM_WORLD, inside an MpiSession (distributed/mpi_session.h). Throws InputError when
// `devices` differs from the number of ranks, or in a build without MPI (naming --transport mpi).
std::unique_ptr<Transport> make_mpi_transport(int devices);

// Collective: rank 0 receives every rank's ops, its stages' final weights and (from the last stage's
// device) the losses, and returns the whole run; the other ranks return their part unchanged. `transport`
// is the one make_mpi_transport returned.
ExecutionResult gather_on_first_rank(ExecutionResult local, const PipelineLayout& layout,
                                     const Transport& transport);

}  // namespace pipesim::executor
