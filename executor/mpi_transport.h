#pragma once
// The MPI transport: one rank per device, so that the executor runs across processes and machines with
// `mpiexec -n N pipesim execute --transport mpi`. Built only when CMake finds MPI (PIPESIM_HAS_MPI).
//
// Each rank runs its device's worker (execute_real over devices_here() = {rank}); tensors travel as one
// message each (a header of stage, microbatch, kind, rows, cols, then the floats), sent without blocking so
// that two neighbours sending to each other cannot deadlock. A synchronised U's barrier is a message from
// every rank to every other. Each transport works on its own duplicate of MPI_COMM_WORLD, so the runs of
// several schedules cannot mix their messages. Monotonic times compare across ranks of one machine only.
#ifdef PIPESIM_HAS_MPI
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "distributed/mpi_session.h"
#include "executor/execution_result.h"
#include "executor/transport.h"
#include "sim/policy.h"

namespace pipesim::executor {

// The MPI session the transport runs in (distributed/mpi_session.h).
using pipesim::MpiSession;

class MpiTransport final : public Transport {
 public:
  // Collective over MPI_COMM_WORLD. Throws InputError when `devices` differs from the number of ranks.
  explicit MpiTransport(int devices);
  ~MpiTransport() override;  // completes the pending sends, then frees the communicator
  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;

  void send(int dst_device, const TensorTag& tag, Matrix<float> tensor) override;
  std::vector<std::pair<TensorTag, Matrix<float>>> receive_all(int device) override;
  void arrive_at_barrier(int device, int step) override;
  bool barrier_complete(int step) const override;
  std::uint64_t news_count(int device) const override;
  bool wait_for_news(int device, std::uint64_t seen, int timeout_ms) override;
  void abort() override;
  std::vector<int> devices_here(int devices) const override;
  int first_slot_on_machine() const override { return local_rank_; }
  int workers_on_machine(int /*devices*/) const override { return local_ranks_; }

  int rank() const { return rank_; }
  MPI_Comm communicator() const { return comm_; }

 private:
  void progress();  // receives whatever has arrived, completes finished sends
  void deliver(int tag, const std::vector<std::byte>& bytes);  // one received message
  void post(int dst_rank, int tag, std::vector<std::byte> bytes);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int ranks_ = 0;
  int local_rank_ = 0;
  int local_ranks_ = 1;
  std::vector<std::pair<TensorTag, Matrix<float>>> inbox_;
  std::vector<int> barrier_arrivals_;  // per step
  std::uint64_t news_ = 0;
  bool aborted_ = false;
  struct PendingSend {
    MPI_Request request = MPI_REQUEST_NULL;
    std::vector<std::byte> bytes;
  };
  std::vector<PendingSend> sends_;
};

// Collective: rank 0 receives every rank's ops, its stages' final weights and (from the last stage's
// device) the losses, and returns the whole run; the other ranks return their part unchanged.
ExecutionResult gather_on_first_rank(ExecutionResult local, const PipelineLayout& layout,
                                     const MpiTransport& transport);

}  // namespace pipesim::executor
#endif
