#pragma once
// Work spread over MPI ranks. Every rank builds the same list of jobs (the same input, read the same way);
// rank 0 leads: it decides what runs, hands each idle rank one job at a time in the order it chooses (the
// most expensive first, so that a long job does not run alone at the end), takes the results back as bytes
// in whatever order they finish, and writes the output. The other ranks only serve: run the job they are
// handed, send its result, wait for the next, until rank 0 is done. Rank 0 runs no job itself while other
// ranks serve (`mpiexec -n K` gives K - 1 workers); alone (one rank, or no MPI session), it runs every job.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace pipesim {

// Runs the jobs at `indices`, in that order of handing out, and calls on_result(index, result) on rank 0 for
// each as it arrives. A job that throws on a serving rank ends the lead with a ScheduleError naming the rank
// and the job's message.
using FarmResult = std::function<void(std::size_t index, std::string result)>;
using FarmRun = std::function<void(const std::vector<std::size_t>& indices, const FarmResult& on_result)>;

// Called by every rank after the same setup, inside an MpiSession (distributed/mpi_session.h) when
// `use_mpi`. Rank 0 calls lead(run) and returns true once it returns; every other rank serves job(index)
// until then and returns false. Without `use_mpi` it is rank 0 alone.
bool lead_or_serve(bool use_mpi, const std::function<std::string(std::size_t)>& job,
                   const std::function<void(const FarmRun&)>& lead);

}  // namespace pipesim
