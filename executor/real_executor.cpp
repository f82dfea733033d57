#include "executor/real_executor.h"

#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <exception>
#include <thread>

#include "base/errors.h"
#include "executor/thread_clock.h"

namespace pipesim::executor {
namespace {

TimeNs monotonic_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void pin_to_core(int core) {
  if (core < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

// The policy's window on one worker: only what this device holds or has received.
class WorkerView final : public LocalView {
 public:
  WorkerView(const WorkerNumerics& numerics, const Transport& transport, const ExecutionPlan& plan)
      : numerics_(numerics), transport_(transport), plan_(plan) {}
  bool is_ready(const Action& a) const override {
    const PipelineLayout& layout = plan_.layout;
    switch (a.kind) {
      case OpKind::F:
        return (layout.is_first_stage(a.stage) ||
                numerics_.has({a.stage, a.microbatch, TensorKind::kActivation})) &&
               plan_.forward_reads.version_of(a.microbatch, a.stage) <= numerics_.version(a.stage);
      case OpKind::B:
      case OpKind::I:
        return numerics_.forward_done(a.stage, a.microbatch) &&
               (layout.is_last_stage(a.stage) ||
                numerics_.has({a.stage, a.microbatch, TensorKind::kGradient}));
      case OpKind::W:
        return numerics_.input_grad_done(a.stage, a.microbatch);
      case OpKind::U:
        return (!a.synchronized || transport_.barrier_complete(a.microbatch)) &&
               numerics_.gradients_complete(a.stage, a.microbatch);
    }
    return false;
  }
  int weight_version(int stage) const override { return numerics_.version(stage); }
  int in_flight(int stage) const override { return numerics_.in_flight(stage); }

 private:
  const WorkerNumerics& numerics_;
  const Transport& transport_;
  const ExecutionPlan& plan_;
};

struct WorkerOutput {
  std::vector<ExecutedOp> ops;
  std::map<int, std::vector<float>> parameters;  // by stage
  std::map<int, double> losses;
  std::exception_ptr error;
};

void run_worker(int device, ExecutionPlan& plan, const StagedModel& model, const TrainingSetup& setup,
                Transport& transport, int core, int stall_timeout_ms, WorkerOutput& out) {
  use_single_blas_thread();
  pin_to_core(core);
  const PipelineLayout& layout = plan.layout;
  const std::vector<int> stages = layout.stages_on(device);
  TimeNs send_ns = 0;  // inside the current op
  WorkerNumerics numerics(model, stages, plan, setup, [&](const TensorTag& tag, Matrix<float> tensor) {
    const TimeNs send_start_ns = monotonic_ns();
    transport.send(layout.device(tag.stage), tag, std::move(tensor));
    send_ns += monotonic_ns() - send_start_ns;
  });
  const WorkerView view(numerics, transport, plan);
  DevicePolicy& policy = *plan.policies[device];
  int barrier_next_step = 0;
  // Overhead of the next op: the time since the last op ended, less the time blocked waiting for news.
  TimeNs last_end_ns = monotonic_ns();
  TimeNs waited_ns = 0;
  for (;;) {
    const std::uint64_t seen = transport.news_count(device);
    for (auto& [tag, tensor] : transport.receive_all(device)) numerics.deliver(tag, std::move(tensor));
    const std::optional<Action> next = policy.next(view);
    if (next && next->kind == OpKind::U && next->synchronized && next->microbatch >= barrier_next_step) {
      transport.arrive_at_barrier(device, next->microbatch);
      barrier_next_step = next->microbatch + 1;
    }
    if (!next && policy.finished()) break;
    if (!next || !view.is_ready(*next)) {
      const TimeNs wait_start_ns = monotonic_ns();
      const bool news = transport.wait_for_news(device, seen, stall_timeout_ms);
      waited_ns += monotonic_ns() - wait_start_ns;
      if (!news) {
        throw DeadlockError(
            fmt::format("device {} waited {} ms for {} with no news (or another worker failed)", device + 1,
                        stall_timeout_ms, next ? describe(*next) : "a ready op"));
      }
      continue;
    }
    policy.started(*next);
    const TimeNs start_ns = monotonic_ns();
    const TimeNs cpu_start_ns = thread_cpu_ns();
    send_ns = 0;
    const OpReadout readout = numerics.execute(*next);
    const TimeNs cpu_ns = thread_cpu_ns() - cpu_start_ns;
    const TimeNs end_ns = monotonic_ns();
    Bytes live = 0;
    for (int s : stages) live += numerics.live_activation_bytes(s);
    const TimeNs overhead_ns = std::max<TimeNs>(0, start_ns - last_end_ns - waited_ns) + send_ns;
    out.ops.push_back({*next, device, readout.weight_version, numerics.weights_fingerprint(readout), start_ns,
                       end_ns, live, cpu_ns, overhead_ns});
    last_end_ns = end_ns;
    waited_ns = 0;
  }
  for (int s : stages) out.parameters[s] = numerics.parameters(s);
  out.losses = numerics.losses();
}

// A failing worker aborts the others, which then report a stall: rethrow the failure, not a stall.
void rethrow_first_cause(const std::vector<WorkerOutput>& outputs) {
  std::exception_ptr stall;
  for (const WorkerOutput& out : outputs) {
    if (!out.error) continue;
    try {
      std::rethrow_exception(out.error);
    } catch (const DeadlockError&) {
      if (!stall) stall = out.error;
    } catch (...) {
      throw;
    }
  }
  if (stall) std::rethrow_exception(stall);
}

}  // namespace

std::vector<int> allowed_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cores;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cores;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cores.push_back(c);
  }
  return cores;
}

ExecutionResult execute_real(ExecutionPlan& plan, const TrainingSetup& setup, Transport& transport,
                             int stall_timeout_ms) {
  const int devices = plan.layout.devices;
  const StagedModel model = build_staged_model(setup, plan.layout.stages_per_pipeline());
  const std::vector<int> here = transport.devices_here(devices);
  const std::vector<int> cores = allowed_cores();
  // Timing means something only when every worker of this machine has a core of its own.
  const int first_slot = transport.first_slot_on_machine();
  const bool pin = transport.workers_on_machine(devices) <= static_cast<int>(cores.size());
  std::vector<WorkerOutput> outputs(here.size());
  {
    std::vector<std::jthread> workers;
    for (std::size_t i = 0; i < here.size(); ++i) {
      const int core = pin ? cores[first_slot + i] : -1;
      workers.emplace_back([&, i, core] {
        try {
          run_worker(here[i], plan, model, setup, transport, core, stall_timeout_ms, outputs[i]);
        } catch (...) {
          outputs[i].error = std::current_exception();
          transport.abort();
        }
      });
    }
  }
  rethrow_first_cause(outputs);
  ExecutionResult result;
  result.timing_valid = pin;
  result.final_parameters.resize(plan.layout.stages);
  result.losses.assign(plan.total_microbatches, 0.0);
  for (WorkerOutput& out : outputs) {
    result.ops.insert(result.ops.end(), out.ops.begin(), out.ops.end());
    for (auto& [s, params] : out.parameters) result.final_parameters[s] = std::move(params);
    for (const auto& [mb, loss] : out.losses) result.losses[mb] = loss;
  }
  sort_by_start(result.ops);
  return result;
}

void sort_by_start(std::vector<ExecutedOp>& ops) {
  std::stable_sort(ops.begin(), ops.end(),
                   [](const ExecutedOp& a, const ExecutedOp& b) { return a.start_ns < b.start_ns; });
}

}  // namespace pipesim::executor
