#include "executor/mpi_transport.h"

#include "base/errors.h"

#ifdef PIPESIM_HAS_MPI
#include <fmt/format.h>
#include <mpi.h>

#include <array>
#include <chrono>
#include <cstring>
#include <exception>
#include <thread>
#include <type_traits>

#include "distributed/mpi_session.h"
#include "executor/real_executor.h"
#include "sim/layout.h"

namespace pipesim::executor {
namespace {

constexpr int kTensorTag = 1;
constexpr int kBarrierTag = 2;
constexpr int kGatherTag = 3;
constexpr int kHeaderInts = 5;  // stage, microbatch, kind, rows, cols

void check_mpi(int code, const char* what) {
  if (code != MPI_SUCCESS) throw ScheduleError(fmt::format("MPI: {} failed (code {})", what, code));
}

template <typename T>
void append_bytes(std::vector<std::byte>& out, const T* values, std::size_t count) {
  static_assert(std::is_trivially_copyable_v<T>);
  const auto* first = reinterpret_cast<const std::byte*>(values);
  out.insert(out.end(), first, first + count * sizeof(T));
}

void send_bytes(const std::vector<std::byte>& bytes, int dst, MPI_Comm comm) {
  const auto size = static_cast<long long>(bytes.size());
  check_mpi(MPI_Send(&size, 1, MPI_LONG_LONG, dst, kGatherTag, comm), "MPI_Send");
  check_mpi(MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, dst, kGatherTag, comm),
            "MPI_Send");
}

std::vector<std::byte> receive_bytes(int src, MPI_Comm comm) {
  long long size = 0;
  check_mpi(MPI_Recv(&size, 1, MPI_LONG_LONG, src, kGatherTag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
  std::vector<std::byte> bytes(static_cast<std::size_t>(size));
  check_mpi(
      MPI_Recv(bytes.data(), static_cast<int>(size), MPI_BYTE, src, kGatherTag, comm, MPI_STATUS_IGNORE),
      "MPI_Recv");
  return bytes;
}

// Reads `count` values of T from `bytes` at `offset`, advancing it.
template <typename T>
void read_bytes(const std::vector<std::byte>& bytes, std::size_t& offset, T* out, std::size_t count) {
  std::memcpy(out, bytes.data() + offset, count * sizeof(T));
  offset += count * sizeof(T);
}

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

}  // namespace

MpiTransport::MpiTransport(int devices) {
  check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &ranks_);
  MPI_Comm machine = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &machine),
            "MPI_Comm_split_type");
  MPI_Comm_rank(machine, &local_rank_);
  MPI_Comm_size(machine, &local_ranks_);
  MPI_Comm_free(&machine);
  if (devices != ranks_) {
    MPI_Comm_free(&comm_);
    throw InputError(fmt::format(
        "--transport mpi: the pipeline has {} devices but mpiexec started {} ranks (one rank per device: "
        "run mpiexec -n {})",
        devices, ranks_, devices));
  }
}

MpiTransport::~MpiTransport() {
  for (PendingSend& s : sends_) MPI_Wait(&s.request, MPI_STATUS_IGNORE);
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void MpiTransport::post(int dst_rank, int tag, std::vector<std::byte> bytes) {
  PendingSend& s = sends_.emplace_back();
  s.bytes = std::move(bytes);
  check_mpi(
      MPI_Isend(s.bytes.data(), static_cast<int>(s.bytes.size()), MPI_BYTE, dst_rank, tag, comm_, &s.request),
      "MPI_Isend");
}

void MpiTransport::send(int dst_device, const TensorTag& tag, Matrix<float> tensor) {
  const std::array<int, kHeaderInts> header{tag.stage, tag.microbatch, static_cast<int>(tag.kind),
                                            tensor.rows, tensor.cols};
  std::vector<std::byte> bytes;
  bytes.reserve(sizeof(header) + tensor.bytes());
  append_bytes(bytes, header.data(), header.size());
  append_bytes(bytes, tensor.data(), tensor.values.size());
  post(dst_device, kTensorTag, std::move(bytes));
}

void MpiTransport::progress() {
  // Finished sends free their buffers (a vector's elements move, the requests' buffers do not).
  std::erase_if(sends_, [](PendingSend& s) {
    int done = 0;
    MPI_Test(&s.request, &done, MPI_STATUS_IGNORE);
    return done != 0;
  });
  // Only the run's own tags: a rank that finished early may already have sent its part of the gather.
  for (const int tag : {kTensorTag, kBarrierTag}) {
    for (;;) {
      int arrived = 0;
      MPI_Status status;
      check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, tag, comm_, &arrived, &status), "MPI_Iprobe");
      if (!arrived) break;
      int count = 0;
      MPI_Get_count(&status, MPI_BYTE, &count);
      std::vector<std::byte> bytes(static_cast<std::size_t>(count));
      check_mpi(MPI_Recv(bytes.data(), count, MPI_BYTE, status.MPI_SOURCE, tag, comm_, MPI_STATUS_IGNORE),
                "MPI_Recv");
      deliver(tag, bytes);
    }
  }
}

void MpiTransport::deliver(int tag, const std::vector<std::byte>& bytes) {
  std::size_t offset = 0;
  if (tag == kBarrierTag) {
    int step = 0;
    read_bytes(bytes, offset, &step, 1);
    if (static_cast<int>(barrier_arrivals_.size()) <= step) barrier_arrivals_.resize(step + 1, 0);
    ++barrier_arrivals_[step];
  } else {
    std::array<int, kHeaderInts> header{};
    read_bytes(bytes, offset, header.data(), header.size());
    Matrix<float> tensor(header[3], header[4]);
    read_bytes(bytes, offset, tensor.data(), tensor.values.size());
    inbox_.emplace_back(TensorTag{header[0], header[1], static_cast<TensorKind>(header[2])},
                        std::move(tensor));
  }
  ++news_;
}

std::vector<std::pair<TensorTag, Matrix<float>>> MpiTransport::receive_all(int /*device*/) {
  progress();
  return std::exchange(inbox_, {});
}

void MpiTransport::arrive_at_barrier(int /*device*/, int step) {
  if (static_cast<int>(barrier_arrivals_.size()) <= step) barrier_arrivals_.resize(step + 1, 0);
  ++barrier_arrivals_[step];
  for (int r = 0; r < ranks_; ++r) {
    if (r == rank_) continue;
    std::vector<std::byte> bytes;
    append_bytes(bytes, &step, 1);
    post(r, kBarrierTag, std::move(bytes));
  }
  ++news_;
}

bool MpiTransport::barrier_complete(int step) const {
  return step < static_cast<int>(barrier_arrivals_.size()) && barrier_arrivals_[step] == ranks_;
}

std::uint64_t MpiTransport::news_count(int /*device*/) const {
  return news_;
}

bool MpiTransport::wait_for_news(int /*device*/, std::uint64_t seen, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    progress();
    if (aborted_) return false;
    if (news_ != seen) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    // Polling, as MPI offers no wake-up; short enough to add little to a millisecond op.
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

void MpiTransport::abort() {
  aborted_ = true;
}

std::vector<int> MpiTransport::devices_here(int /*devices*/) const {
  return {rank_};
}

namespace {

template <typename T>
void append_vector(std::vector<std::byte>& out, const std::vector<T>& values) {
  const auto count = static_cast<long long>(values.size());
  append_bytes(out, &count, 1);
  append_bytes(out, values.data(), values.size());
}

template <typename T>
std::vector<T> read_vector(const std::vector<std::byte>& bytes, std::size_t& offset) {
  long long count = 0;
  read_bytes(bytes, offset, &count, 1);
  std::vector<T> values(static_cast<std::size_t>(count));
  read_bytes(bytes, offset, values.data(), values.size());
  return values;
}

}  // namespace

std::unique_ptr<Transport> make_mpi_transport(int devices) {
  return std::make_unique<MpiTransport>(devices);
}

ExecutionResult gather_on_first_rank(ExecutionResult local, const PipelineLayout& layout,
                                     const Transport& any_transport) {
  const auto& transport = dynamic_cast<const MpiTransport&>(any_transport);
  static_assert(std::is_trivially_copyable_v<ExecutedOp>);
  const MPI_Comm comm = transport.communicator();
  int valid = local.timing_valid ? 1 : 0;
  int all_valid = 0;
  check_mpi(MPI_Reduce(&valid, &all_valid, 1, MPI_INT, MPI_MIN, 0, comm), "MPI_Reduce");
  if (transport.rank() != 0) {
    std::vector<std::byte> bytes;
    append_vector(bytes, local.ops);
    for (int s : layout.stages_on(transport.rank())) append_vector(bytes, local.final_parameters[s]);
    append_vector(bytes, local.losses);
    send_bytes(bytes, 0, comm);
    return local;
  }
  local.timing_valid = all_valid != 0;
  for (int r = 1; r < layout.devices; ++r) {
    const std::vector<std::byte> bytes = receive_bytes(r, comm);
    std::size_t offset = 0;
    const auto ops = read_vector<ExecutedOp>(bytes, offset);
    local.ops.insert(local.ops.end(), ops.begin(), ops.end());
    for (int s : layout.stages_on(r)) local.final_parameters[s] = read_vector<float>(bytes, offset);
    // Only a copy's last stage computes losses, each its own microbatches' (0 elsewhere).
    const std::vector<double> losses = read_vector<double>(bytes, offset);
    for (std::size_t mb = 0; mb < losses.size() && mb < local.losses.size(); ++mb) {
      if (losses[mb] != 0.0) local.losses[mb] = losses[mb];
    }
  }
  sort_by_start(local.ops);
  return local;
}

}  // namespace pipesim::executor

#else

namespace pipesim::executor {

std::unique_ptr<Transport> make_mpi_transport(int /*devices*/) {
  throw InputError("--transport mpi: this pipesim was built without MPI (install mpich and libmpich-dev)");
}

ExecutionResult gather_on_first_rank(ExecutionResult local, const PipelineLayout& /*layout*/,
                                     const Transport& /*transport*/) {
  return local;  // no MPI transport exists to gather over
}

}  // namespace pipesim::executor

#endif
