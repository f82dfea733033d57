#include "distributed/work_farm.h"

#include <fmt/format.h>

#include <chrono>
#include <climits>
#include <cstdint>
#include <exception>
#include <thread>

#include "base/errors.h"
#include "distributed/mpi_session.h"

#ifdef PIPESIM_HAS_MPI
#include <mpi.h>
#endif

namespace pipesim {
namespace {

// Runs every job here, in the order given.
void run_alone(const std::function<std::string(std::size_t)>& job, const std::vector<std::size_t>& indices,
               const FarmResult& on_result) {
  for (std::size_t i : indices) on_result(i, job(i));
}

#ifdef PIPESIM_HAS_MPI

constexpr int kJobTag = 11;      // rank 0 -> server: the job's index, or -1 to stop
constexpr int kHeaderTag = 12;   // server -> rank 0: index, status (0 ok, 1 the job threw), payload bytes
constexpr int kPayloadTag = 13;  // server -> rank 0: the result, or the error's message

void check(int code, const char* what) {
  if (code != MPI_SUCCESS) throw ScheduleError(fmt::format("MPI: {} failed (code {})", what, code));
}

void send_job(MPI_Comm comm, int rank, std::int64_t index) {
  check(MPI_Send(&index, 1, MPI_INT64_T, rank, kJobTag, comm), "MPI_Send");
}

void serve(MPI_Comm comm, const std::function<std::string(std::size_t)>& job) {
  for (;;) {
    std::int64_t index = -1;
    check(MPI_Recv(&index, 1, MPI_INT64_T, 0, kJobTag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
    if (index < 0) return;
    std::int64_t status = 0;
    std::string payload;
    try {
      payload = job(static_cast<std::size_t>(index));
    } catch (const std::exception& e) {
      status = 1;
      payload = e.what();
    }
    if (payload.size() > static_cast<std::size_t>(INT_MAX)) {
      status = 1;
      payload = fmt::format("a result of {} bytes, over MPI's message limit", payload.size());
    }
    const std::int64_t header[3] = {index, status, static_cast<std::int64_t>(payload.size())};
    check(MPI_Send(header, 3, MPI_INT64_T, 0, kHeaderTag, comm), "MPI_Send");
    check(MPI_Send(payload.data(), static_cast<int>(payload.size()), MPI_BYTE, 0, kPayloadTag, comm),
          "MPI_Send");
  }
}

void lead_ranks(MPI_Comm comm, int ranks, const std::vector<std::size_t>& indices,
                const FarmResult& on_result) {
  std::size_t next = 0;
  int busy = 0;
  for (int rank = 1; rank < ranks && next < indices.size(); ++rank, ++busy) {
    send_job(comm, rank, static_cast<std::int64_t>(indices[next++]));
  }
  while (busy > 0) {
    // Polled with short sleeps rather than a blocking receive, which MPICH busy-waits in: rank 0 then leaves
    // its core to a serving rank on the same machine.
    int arrived = 0;
    MPI_Status status;
    for (;;) {
      check(MPI_Iprobe(MPI_ANY_SOURCE, kHeaderTag, comm, &arrived, &status), "MPI_Iprobe");
      if (arrived) break;
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    std::int64_t header[3] = {0, 0, 0};
    check(MPI_Recv(header, 3, MPI_INT64_T, status.MPI_SOURCE, kHeaderTag, comm, &status), "MPI_Recv");
    const int source = status.MPI_SOURCE;
    std::string payload(static_cast<std::size_t>(header[2]), '\0');
    check(MPI_Recv(payload.data(), static_cast<int>(header[2]), MPI_BYTE, source, kPayloadTag, comm,
                   MPI_STATUS_IGNORE),
          "MPI_Recv");
    --busy;
    if (header[1] != 0) {
      throw ScheduleError(fmt::format("rank {}: job {}: {}", source, header[0], payload));
    }
    // The idle rank's next job goes out before this result is handled, so it never waits on rank 0's writes.
    if (next < indices.size()) {
      send_job(comm, source, static_cast<std::int64_t>(indices[next++]));
      ++busy;
    }
    on_result(static_cast<std::size_t>(header[0]), std::move(payload));
  }
}

#endif

}  // namespace

bool lead_or_serve(bool use_mpi, const std::function<std::string(std::size_t)>& job,
                   const std::function<void(const FarmRun&)>& lead) {
  const FarmRun alone = [&](const std::vector<std::size_t>& indices, const FarmResult& on_result) {
    run_alone(job, indices, on_result);
  };
#ifdef PIPESIM_HAS_MPI
  if (use_mpi && MpiSession::size() > 1) {
    MPI_Comm comm = MPI_COMM_NULL;
    check(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "MPI_Comm_dup");  // the farm's messages on their own
    const int ranks = MpiSession::size();
    if (MpiSession::rank() != 0) {
      serve(comm, job);
      MPI_Comm_free(&comm);
      return false;
    }
    lead([&](const std::vector<std::size_t>& indices, const FarmResult& on_result) {
      lead_ranks(comm, ranks, indices, on_result);
    });
    for (int rank = 1; rank < ranks; ++rank) send_job(comm, rank, -1);
    MPI_Comm_free(&comm);
    return true;
  }
#else
  if (use_mpi) MpiSession session;  // throws: built without MPI
#endif
  lead(alone);
  return true;
}

}  // namespace pipesim
