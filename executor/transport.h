#pragma once
// How workers exchange activations and gradients, and meet at the barrier of a synchronised optimizer step.
// Implementations: threads (one process, this file's ThreadsTransport) and MPI (one rank per device,
// mpi_transport.h, built when CMake finds MPI).
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "executor/worker_numerics.h"

namespace pipesim::executor {

class Transport {
 public:
  virtual ~Transport() = default;
  virtual void send(int dst_device, const TensorTag& tag, Matrix<float> tensor) = 0;
  // Everything that arrived for `device` since its last call; never blocks.
  virtual std::vector<std::pair<TensorTag, Matrix<float>>> receive_all(int device) = 0;
  // `device` reached the barrier of optimizer step `step` (once per device and step).
  virtual void arrive_at_barrier(int device, int step) = 0;
  virtual bool barrier_complete(int step) const = 0;
  // Counts what happened for `device` (arrivals, completed barriers): read it before looking at the state,
  // then wait_for_news with that count, so that nothing slips in between.
  virtual std::uint64_t news_count(int device) const = 0;
  // Blocks until news_count(device) differs from `seen`; false when the run was aborted or `timeout_ms`
  // passed.
  virtual bool wait_for_news(int device, std::uint64_t seen, int timeout_ms) = 0;
  // Wakes every waiter with false (a worker failed).
  virtual void abort() = 0;
  // The devices whose workers run in this process: every device for threads, the rank's own for MPI.
  virtual std::vector<int> devices_here(int devices) const;
  // Where this process's workers sit among the workers of its machine: the first one's index and how many
  // there are on the machine. Each gets its own allowed core only when they all fit.
  virtual int first_slot_on_machine() const { return 0; }
  virtual int workers_on_machine(int devices) const { return devices; }
};

// Every device is a thread of this process; tensors move through per-device mailboxes.
class ThreadsTransport final : public Transport {
 public:
  explicit ThreadsTransport(int devices);
  void send(int dst_device, const TensorTag& tag, Matrix<float> tensor) override;
  std::vector<std::pair<TensorTag, Matrix<float>>> receive_all(int device) override;
  void arrive_at_barrier(int device, int step) override;
  bool barrier_complete(int step) const override;
  std::uint64_t news_count(int device) const override;
  bool wait_for_news(int device, std::uint64_t seen, int timeout_ms) override;
  void abort() override;

 private:
  int devices_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::vector<std::pair<TensorTag, Matrix<float>>>> mailboxes_;
  std::vector<std::uint64_t> news_;
  std::vector<int> barrier_arrivals_;  // per step
  bool aborted_ = false;
};

}  // namespace pipesim::executor
