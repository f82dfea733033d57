#include "report/trace_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>

#include "pipesim_version.h"

namespace pipesim {
namespace {

constexpr int kComputeTid = 0;
constexpr int kSendTid = 1000;
constexpr int kReceiveTid = 2000;
constexpr int kCriticalTid = 3000;  // copies of the ops on the run's critical path

// Exact microseconds from nanoseconds.
struct Micros {
  TimeNs ns;
};

}  // namespace
}  // namespace pipesim

template <>
struct fmt::formatter<pipesim::Micros> : fmt::formatter<std::string_view> {
  auto format(pipesim::Micros t, format_context& ctx) const {
    const char* sign = t.ns < 0 ? "-" : "";
    const pipesim::TimeNs ns = t.ns < 0 ? -t.ns : t.ns;
    return fmt::format_to(ctx.out(), "{}{}.{:03}", sign, ns / 1000, ns % 1000);
  }
};

namespace pipesim {
namespace {

std::string quoted(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Assigns each interval the first lane whose previous interval has ended, so that events on one thread never
// overlap. Intervals must come in nondecreasing start order per key.
class LaneAssigner {
 public:
  explicit LaneAssigner(int keys) : lane_end_(keys) {}
  int assign(int key, TimeNs start_ns, TimeNs end_ns) {
    std::vector<TimeNs>& ends = lane_end_[key];
    for (size_t lane = 0; lane < ends.size(); ++lane) {
      if (ends[lane] <= start_ns) {
        ends[lane] = end_ns;
        return static_cast<int>(lane);
      }
    }
    ends.push_back(end_ns);
    return static_cast<int>(ends.size()) - 1;
  }
  int lanes(int key) const { return static_cast<int>(lane_end_[key].size()); }

 private:
  std::vector<std::vector<TimeNs>> lane_end_;
};

class TraceBuilder {
 public:
  void add_run(const SimulationResult& result, bool several_runs) {
    const RunTrace& trace = result.trace;
    const int devices = trace.layout.devices;
    const std::string prefix = several_runs ? result.label + ": " : "";
    add_compute(trace);
    add_critical_path(trace, result.graph);
    LaneAssigner send_lanes(devices);
    LaneAssigner receive_lanes(devices);
    add_transfers(trace, send_lanes, receive_lanes);
    add_memory(trace);
    add_weight_versions(trace);
    for (int d = 0; d < devices; ++d) {
      const int pid = pid_base_ + d;
      metadata(pid, kComputeTid, "process_name",
               fmt::format("\"name\":{}", quoted(fmt::format("{}device {}", prefix, d + 1))));
      metadata(pid, kComputeTid, "process_sort_index", fmt::format("\"sort_index\":{}", pid));
      thread(pid, kComputeTid, "compute", 0);
      if (!result.graph.critical_path.empty()) thread(pid, kCriticalTid, "critical path", 10000);
      for (int lane = 0; lane < send_lanes.lanes(d); ++lane) {
        thread(pid, kSendTid + lane, lane ? fmt::format("send {}", lane + 1) : "send", 1 + lane);
      }
      for (int lane = 0; lane < receive_lanes.lanes(d); ++lane) {
        thread(pid, kReceiveTid + lane, lane ? fmt::format("receive {}", lane + 1) : "receive",
               1 + send_lanes.lanes(d) + lane);
      }
    }
    pid_base_ += devices;
  }

  int next_pid() const { return pid_base_; }

  std::string finish(const std::string& metadata_json) {
    std::string out = "{\"displayTimeUnit\":\"ms\",\"metadata\":" + metadata_json + ",\"traceEvents\":[\n";
    out += metadata_;
    out += events_;
    if (out.size() >= 2 && out[out.size() - 2] == ',') out.erase(out.size() - 2, 1);
    out += "]}\n";
    return out;
  }

 private:
  template <typename... Args>
  void event(fmt::format_string<Args...> format, Args&&... args) {
    fmt::format_to(std::back_inserter(events_), format, std::forward<Args>(args)...);
    events_ += ",\n";
  }

  void metadata(int pid, int tid, const char* name, const std::string& args) {
    fmt::format_to(std::back_inserter(metadata_),
                   "{{\"name\":\"{}\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{{}}}}},\n", name, pid,
                   tid, args);
  }
  void thread(int pid, int tid, const std::string& name, int sort_index) {
    metadata(pid, tid, "thread_name", fmt::format("\"name\":{}", quoted(name)));
    metadata(pid, tid, "thread_sort_index", fmt::format("\"sort_index\":{}", sort_index));
  }

  // The op of a kind on a stage for a microbatch; null when the trace has none.
  const OpRecord* find_op(OpKind kind, int stage, int microbatch) const {
    const auto it = op_index_.find({static_cast<int>(kind), stage, microbatch});
    return it == op_index_.end() ? nullptr : &(*ops_)[it->second];
  }
  // Activations feed the next stage's F; gradients the previous stage's backward (B, or I when split).
  const OpRecord* consumer_of(const TransferRecord& t) const {
    if (t.producer == OpKind::F) return find_op(OpKind::F, t.dst_stage, t.microbatch);
    const OpRecord* b = find_op(OpKind::B, t.dst_stage, t.microbatch);
    return b ? b : find_op(OpKind::I, t.dst_stage, t.microbatch);
  }

  void add_critical_path(const RunTrace& trace, const TaskGraphReport& graph) {
    for (size_t i : graph.critical_path) {
      const OpRecord& op = trace.ops.at(i);
      event(
          "{{\"name\":\"{}{}\",\"cat\":\"critical\",\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},"
          "\"args\":{{\"stage\":{}}}}}",
          op_letter(op.action.kind), op.action.microbatch, pid_base_ + op.device, kCriticalTid,
          Micros{op.start_ns}, Micros{op.duration_ns()}, op.action.stage + 1);
    }
  }

  void add_compute(const RunTrace& trace) {
    ops_ = &trace.ops;
    op_index_.clear();
    for (size_t i = 0; i < trace.ops.size(); ++i) {
      const Action& a = trace.ops[i].action;
      op_index_.emplace(std::array<int, 3>{static_cast<int>(a.kind), a.stage, a.microbatch}, i);
    }
    for (const OpRecord& op : trace.ops) {
      const Action& a = op.action;
      const char letter = op_letter(a.kind);
      event(
          "{{\"name\":\"{}{}\",\"cat\":\"{}\",\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},"
          "\"args\":{{\"stage\":{},\"chunk\":{},\"{}\":{},\"weight_version\":{}{}}}}}",
          letter, a.microbatch, letter, pid_base_ + op.device, kComputeTid, Micros{op.start_ns},
          Micros{op.duration_ns()}, a.stage + 1, trace.layout.chunk_of_stage[a.stage],
          a.kind == OpKind::U ? "step" : "microbatch", a.microbatch, op.weight_version,
          // A fused F&B slot: this F and the device's next op share it (Action::fused_with_next).
          a.fused_with_next ? ",\"fused_with_next\":true" : "");
    }
  }

  void add_transfers(const RunTrace& trace, LaneAssigner& send_lanes, LaneAssigner& receive_lanes) {
    // Sends come in time order; receives need their own order (by start) for lane assignment.
    std::vector<int> receive_lane(trace.transfers.size());
    std::vector<size_t> by_start(trace.transfers.size());
    for (size_t i = 0; i < by_start.size(); ++i) by_start[i] = i;
    std::stable_sort(by_start.begin(), by_start.end(), [&](size_t x, size_t y) {
      return trace.transfers[x].start_ns < trace.transfers[y].start_ns;
    });
    for (size_t i : by_start) {
      const TransferRecord& t = trace.transfers[i];
      if (t.arrival_ns > t.start_ns)
        receive_lane[i] = receive_lanes.assign(t.dst_device, t.start_ns, t.arrival_ns);
    }
    for (size_t i = 0; i < trace.transfers.size(); ++i) {
      const TransferRecord& t = trace.transfers[i];
      const char* what = t.producer == OpKind::F ? "act" : "grad";
      const int src_pid = pid_base_ + t.src_device;
      const int dst_pid = pid_base_ + t.dst_device;
      const int send_tid =
          t.arrival_ns > t.send_ns ? kSendTid + send_lanes.assign(t.src_device, t.send_ns, t.arrival_ns) : 0;
      const int receive_tid = kReceiveTid + receive_lane[i];
      const std::string args = fmt::format(
          "\"microbatch\":{},\"src_stage\":{},\"dst_stage\":{},\"src_device\":{},\"dst_device\":{},\"bytes\":"
          "{},\"blocking\":{}",  // blocking: the send and recv slices held the devices' compute streams
          t.microbatch, t.src_stage + 1, t.dst_stage + 1, t.src_device + 1, t.dst_device + 1, t.bytes,
          t.blocking);
      // With free comm the transfer takes no time: no zero-length slices, only the flow.
      if (t.arrival_ns > t.send_ns) {
        event(
            "{{\"name\":\"send {} mb{}\",\"cat\":\"transfer\",\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{},"
            "\"dur\":{},\"args\":{{{}}}}}",
            what, t.microbatch, src_pid, send_tid, Micros{t.send_ns}, Micros{t.arrival_ns - t.send_ns}, args);
      }
      if (t.arrival_ns > t.start_ns) {
        event(
            "{{\"name\":\"recv {} mb{}\",\"cat\":\"transfer\",\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{},"
            "\"dur\":{},\"args\":{{{}}}}}",
            what, t.microbatch, dst_pid, receive_tid, Micros{t.start_ns}, Micros{t.arrival_ns - t.start_ns},
            args);
      }
      // The flow runs from the op that produced the data to the op that consumes it, both compute slices.
      const OpRecord* producer = find_op(t.producer, t.src_stage, t.microbatch);
      const OpRecord* consumer = consumer_of(t);
      if (!producer || !consumer) continue;
      event(
          "{{\"name\":\"{} mb{}\",\"cat\":\"transfer\",\"ph\":\"s\",\"id\":{},\"pid\":{},\"tid\":{},"
          "\"ts\":{}}}",
          what, t.microbatch, flow_id_, src_pid, kComputeTid, Micros{producer->start_ns});
      event(
          "{{\"name\":\"{} mb{}\",\"cat\":\"transfer\",\"ph\":\"f\",\"bp\":\"e\",\"id\":{},\"pid\":{},"
          "\"tid\":{},\"ts\":{}}}",
          what, t.microbatch, flow_id_, dst_pid, kComputeTid, Micros{consumer->start_ns});
      ++flow_id_;
    }
  }

  void add_memory(const RunTrace& trace) {
    for (size_t d = 0; d < trace.memory.size(); ++d) {
      for (const MemorySample& s : trace.memory[d]) {
        event(
            "{{\"name\":\"activation memory\",\"ph\":\"C\",\"pid\":{},\"ts\":{},\"args\":{{\"bytes\":{}}}}}",
            pid_base_ + d, Micros{s.time_ns}, s.activation_bytes);
        event("{{\"name\":\"in flight\",\"ph\":\"C\",\"pid\":{},\"ts\":{},\"args\":{{\"microbatches\":{}}}}}",
              pid_base_ + d, Micros{s.time_ns}, s.in_flight);
      }
    }
  }

  // One counter per device with a series per stage it holds; a sample at 0 and after every optimizer step.
  void add_weight_versions(const RunTrace& trace) {
    const PipelineLayout& layout = trace.layout;
    std::vector<int> version(layout.stages, 0);
    auto sample = [&](int device, TimeNs time_ns) {
      std::string args;
      for (int stage : layout.stages_on(device)) {
        fmt::format_to(std::back_inserter(args), "{}\"stage {}\":{}", args.empty() ? "" : ",", stage + 1,
                       version[stage]);
      }
      event("{{\"name\":\"weight version\",\"ph\":\"C\",\"pid\":{},\"ts\":{},\"args\":{{{}}}}}",
            pid_base_ + device, Micros{time_ns}, args);
    };
    for (int d = 0; d < layout.devices; ++d) sample(d, 0);
    for (const OpRecord& op : trace.ops) {
      if (op.action.kind != OpKind::U) continue;
      version[op.action.stage] = op.weight_version + 1;
      sample(op.device, op.end_ns);
    }
  }

  const std::vector<OpRecord>* ops_ = nullptr;
  std::map<std::array<int, 3>, size_t> op_index_;  // (kind, stage, microbatch) -> index into ops_
  std::string metadata_;
  std::string events_;
  int pid_base_ = 0;
  long flow_id_ = 0;
};

}  // namespace

SimulationResult windowed(const SimulationResult& result, const TraceWindow& window) {
  SimulationResult w = result;
  if (window.batches <= 0) return w;
  const int first_cut = window.batches * result.spec.microbatches;
  TimeNs cutoff = -1;
  for (const OpRecord& op : result.trace.ops) {
    if (op.action.kind == OpKind::F && op.action.stage == 0 && op.action.microbatch == first_cut) {
      cutoff = op.start_ns;
      break;
    }
  }
  if (cutoff < 0) return w;  // the run has no more batches than the window
  RunTrace& t = w.trace;
  const auto kept =
      std::find_if(t.ops.begin(), t.ops.end(), [&](const OpRecord& op) { return op.start_ns >= cutoff; });
  const size_t count = static_cast<size_t>(kept - t.ops.begin());
  t.ops.erase(kept, t.ops.end());
  std::erase_if(t.transfers, [&](const TransferRecord& x) { return x.send_ns >= cutoff; });
  for (auto& samples : t.memory)
    std::erase_if(samples, [&](const MemorySample& m) { return m.time_ns >= cutoff; });
  std::erase_if(w.graph.critical_path, [&](size_t i) { return i >= count; });
  return w;
}

double estimated_trace_bytes(const std::vector<SimulationResult>& results, const TraceWindow& window) {
  // Measured on this writer's output: about 190 bytes per op (its slice), 560 per transfer (send and
  // receive slices, two flow events) and 190 per memory sample (two counters).
  double bytes = 1000;
  for (const SimulationResult& full : results) {
    const SimulationResult r = window.batches > 0 ? windowed(full, window) : SimulationResult{};
    const RunTrace& t = window.batches > 0 ? r.trace : full.trace;
    double samples = 0;
    for (const auto& device : t.memory) samples += static_cast<double>(device.size());
    bytes += 190.0 * static_cast<double>(t.ops.size()) + 560.0 * static_cast<double>(t.transfers.size()) +
             190.0 * samples;
  }
  return bytes;
}

std::string chrome_trace_json(const std::vector<SimulationResult>& all_results,
                              const std::string& scenario_name, const TraceWindow& window) {
  std::vector<SimulationResult> cut;
  if (window.batches > 0) {
    for (const SimulationResult& r : all_results) cut.push_back(windowed(r, window));
  }
  const std::vector<SimulationResult>& results = window.batches > 0 ? cut : all_results;
  TraceBuilder builder;
  nlohmann::ordered_json schedules = nlohmann::ordered_json::array();
  for (const SimulationResult& result : results) {
    schedules.push_back({{"name", result.schedule_name},
                         {"label", result.label},
                         {"first_pid", builder.next_pid()},
                         {"devices", result.trace.layout.devices}});
    builder.add_run(result, results.size() > 1);
  }
  nlohmann::ordered_json metadata = {{"scenario", scenario_name},
                                     {"schedules", schedules},
                                     {"pipesim_version", PIPESIM_VERSION},
                                     {"units", {{"ts", "us"}, {"dur", "us"}, {"bytes", "B"}}}};
  if (window.batches > 0) metadata["window_batches"] = window.batches;
  return builder.finish(metadata.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace pipesim
