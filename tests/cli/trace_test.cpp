// The Chrome/Perfetto trace: valid JSON, one complete event per op with its exact duration, a flow with both
// ends per transfer, non-overlapping events per track, memory counters, byte-identical output for equal runs.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "report/trace_writer.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

using nlohmann::json;

// Odd nanosecond costs (1.000001 ms = 1000.001 us) and a link whose transfers overlap (2 ms latency, longer
// than an F), so that several send/receive lanes are needed.
constexpr const char* kTraceScenario =
    "pipeline: {stages: 4, microbatches: 8, batches: 2}\n"
    "costs: {forward_ms: [1.000001, 1.5, 1.25, 1.75], backward_input_ms: [1, 1.25, 1.5, 2.000003],\n"
    "        backward_weight_ms: 0.75, optimizer_ms: 0.5, transfer_bytes: 1000000,\n"
    "        weight_grad_activation_bytes: 250000}\n"
    "comm: {model: link, bandwidth_gb_per_s: 2, latency_ms: 2}\n";

SimulationResult traced_run(const std::string& schedule,
                            const std::map<std::string, std::string>& params = {}) {
  return test::run_schedule(test::scenario_from_yaml(kTraceScenario), schedule, params,
                            test::fixed_batches());
}

double micros(TimeNs ns) {
  return static_cast<double>(ns) / 1000.0;
}
TimeNs nanos(const json& us) {
  return std::llround(us.get<double>() * 1000.0);
}

std::vector<json> events_with(const json& trace, const std::string& phase) {
  std::vector<json> out;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == phase) out.push_back(e);
  }
  return out;
}

TEST(ChromeTrace, OneCompleteEventPerOpWithItsExactTimes) {
  const SimulationResult run = traced_run("zb-h1");
  const std::string text = chrome_trace_json({run});
  const json trace = json::parse(text);
  ASSERT_TRUE(trace["traceEvents"].is_array());
  EXPECT_EQ(trace["displayTimeUnit"], "ms");

  // (pid, ts, name) -> duration of compute events.
  std::map<std::tuple<int, double, std::string>, double> compute;
  for (const json& e : events_with(trace, "X")) {
    if (e["tid"] != 0) continue;
    const auto key =
        std::make_tuple(e["pid"].get<int>(), e["ts"].get<double>(), e["name"].get<std::string>());
    EXPECT_TRUE(compute.emplace(key, e["dur"].get<double>()).second) << e.dump();
  }
  ASSERT_EQ(compute.size(), run.trace.ops.size());
  for (const OpRecord& op : run.trace.ops) {
    const std::string name = fmt::format("{}{}", op_letter(op.action.kind), op.action.microbatch);
    const auto it = compute.find(std::make_tuple(op.device, micros(op.start_ns), name));
    ASSERT_NE(it, compute.end()) << describe(op.action) << " at " << op.start_ns << " ns";
    EXPECT_EQ(it->second, micros(op.duration_ns())) << describe(op.action);
  }
  // Times are written exactly: F of microbatch 1 on device 1 starts at 1000001 ns.
  EXPECT_NE(
      text.find(
          "\"name\":\"F1\",\"cat\":\"F\",\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":1000.001,\"dur\":1000.001"),
      std::string::npos);
}

TEST(ChromeTrace, EveryTransferHasASendAReceiveAndAFlowWithBothEnds) {
  const SimulationResult run = traced_run("interleaved-1f1b", {{"chunks", "2"}});
  ASSERT_FALSE(run.trace.transfers.empty());
  const json trace = json::parse(chrome_trace_json({run}));

  // Slices per (pid, tid) in whole ns, to find the slice each flow end binds to.
  std::map<std::pair<int, int>, std::vector<std::pair<TimeNs, TimeNs>>> slices;
  int sends = 0;
  int receives = 0;
  for (const json& e : events_with(trace, "X")) {
    const int tid = e["tid"];
    sends += tid >= 1000 && tid < 2000;
    receives += tid >= 2000 && tid < 3000;
    const TimeNs ts = nanos(e["ts"]);
    slices[{e["pid"], tid}].push_back({ts, ts + nanos(e["dur"])});
  }
  EXPECT_EQ(sends, static_cast<int>(run.trace.transfers.size()));
  EXPECT_EQ(receives, static_cast<int>(run.trace.transfers.size()));

  // Events on one track never overlap (Chrome and Perfetto need proper nesting).
  int max_lane = 0;
  for (auto& [track, intervals] : slices) {
    max_lane = std::max(max_lane, track.second % 1000);
    std::sort(intervals.begin(), intervals.end());
    for (size_t i = 1; i < intervals.size(); ++i) {
      EXPECT_LE(intervals[i - 1].second, intervals[i].first)
          << "pid " << track.first << " tid " << track.second;
    }
  }
  EXPECT_GT(max_lane, 0) << "the 2 ms latency should make transfers overlap";

  auto inside_a_slice = [&](const json& e) {
    const TimeNs ts = nanos(e["ts"]);
    for (const auto& [begin, end] : slices[{e["pid"], e["tid"]}]) {
      if (begin <= ts && ts <= end) return true;
    }
    return false;
  };
  // Each flow runs from the compute slice of the op that produced the data to that of the op consuming it.
  std::map<long, json> starts;
  std::map<long, json> finishes;
  for (const json& e : events_with(trace, "s")) {
    EXPECT_TRUE(starts.emplace(e["id"].get<long>(), e).second) << e.dump();
    EXPECT_EQ(e["tid"], 0);
    EXPECT_TRUE(inside_a_slice(e)) << e.dump();
  }
  for (const json& e : events_with(trace, "f")) {
    EXPECT_TRUE(finishes.emplace(e["id"].get<long>(), e).second) << e.dump();
    EXPECT_EQ(e["bp"], "e");
    EXPECT_EQ(e["tid"], 0);
    EXPECT_TRUE(inside_a_slice(e)) << e.dump();
  }
  ASSERT_EQ(starts.size(), run.trace.transfers.size());
  ASSERT_EQ(finishes.size(), starts.size());
  // In transfer order: the producer's start on the source device, the consumer's (same microbatch, the next
  // stage's F for activations, the previous stage's backward for gradients) on the destination.
  long id = starts.begin()->first;
  for (const TransferRecord& t : run.trace.transfers) {
    const json& from = starts.at(id);
    const json& to = finishes.at(id++);
    EXPECT_EQ(from["pid"], t.src_device);
    EXPECT_EQ(to["pid"], t.dst_device);
    EXPECT_EQ(nanos(from["ts"]), test::start_ns(run.trace, t.producer, t.src_stage, t.microbatch));
    const OpKind consumer = t.producer == OpKind::F ? OpKind::F : OpKind::B;
    const bool split = t.producer == OpKind::I;
    EXPECT_EQ(nanos(to["ts"]),
              test::start_ns(run.trace, split ? OpKind::I : consumer, t.dst_stage, t.microbatch));
    EXPECT_GE(nanos(to["ts"]), t.arrival_ns);  // the consumer waited for the data
  }
}

TEST(ChromeTrace, FreeCommHasNoTransferSlicesButKeepsTheFlows) {
  const Scenario free_comm = test::scenario_from_yaml(
      "pipeline: {stages: 3, microbatches: 4, batches: 1}\ncosts: {forward_ms: 1, backward_ms: 2}\n");
  const SimulationResult run = test::run_schedule(free_comm, "1f1b-flush", {}, test::fixed_batches());
  ASSERT_FALSE(run.trace.transfers.empty());
  const json trace = json::parse(chrome_trace_json({run}));
  for (const json& e : events_with(trace, "X")) EXPECT_NE(e["cat"], "transfer") << e.dump();
  EXPECT_EQ(events_with(trace, "s").size(), run.trace.transfers.size());
}

TEST(ChromeTrace, CriticalPathAndMetadata) {
  const SimulationResult run = traced_run("zb-h1");
  ASSERT_FALSE(run.graph.critical_path.empty());
  const json trace = json::parse(chrome_trace_json({run}, "my-scenario"));
  // The critical-path thread repeats exactly the path's ops, in order, and they chain in time.
  std::vector<json> critical;
  for (const json& e : events_with(trace, "X")) {
    if (e["tid"] == 3000) critical.push_back(e);
  }
  ASSERT_EQ(critical.size(), run.graph.critical_path.size());
  TimeNs path_ns = 0;
  for (size_t k = 0; k < critical.size(); ++k) {
    const OpRecord& op = run.trace.ops[run.graph.critical_path[k]];
    EXPECT_EQ(critical[k]["pid"], op.device);
    EXPECT_EQ(nanos(critical[k]["ts"]), op.start_ns);
    EXPECT_EQ(critical[k]["cat"], "critical");
    path_ns += op.duration_ns();
  }
  EXPECT_LE(path_ns, run.graph.critical_path_ns);  // ops plus the transfers between them
  const json& metadata = trace["metadata"];
  EXPECT_EQ(metadata["scenario"], "my-scenario");
  EXPECT_EQ(metadata["schedules"][0]["name"], "zb-h1");
  EXPECT_EQ(metadata["schedules"][0]["first_pid"], 0);
  EXPECT_EQ(metadata["schedules"][0]["devices"], 4);
  EXPECT_EQ(metadata["units"]["ts"], "us");
  EXPECT_FALSE(metadata["pipesim_version"].get<std::string>().empty());
}

TEST(ChromeTrace, ProcessesThreadsAndCounters) {
  const SimulationResult run = traced_run("1f1b-flush");
  const json trace = json::parse(chrome_trace_json({run}));
  std::map<int, std::string> process_names;
  std::map<std::pair<int, int>, std::string> thread_names;
  for (const json& e : events_with(trace, "M")) {
    if (e["name"] == "process_name") process_names[e["pid"]] = e["args"]["name"];
    if (e["name"] == "thread_name") thread_names[{e["pid"], e["tid"]}] = e["args"]["name"];
  }
  ASSERT_EQ(process_names.size(), 4u);
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(process_names[d], fmt::format("device {}", d + 1));
    EXPECT_EQ((thread_names[{d, 0}]), "compute");
  }
  EXPECT_EQ((thread_names[{0, 1000}]), "send");
  EXPECT_EQ((thread_names[{3, 2000}]), "receive");

  // One memory counter sample per MemorySample, with its bytes; weight versions end at `batches` steps.
  std::map<int, std::vector<std::pair<double, long>>> memory;
  std::map<int, json> last_version;
  for (const json& e : events_with(trace, "C")) {
    if (e["name"] == "activation memory") memory[e["pid"]].push_back({e["ts"], e["args"]["bytes"]});
    if (e["name"] == "weight version") last_version[e["pid"]] = e["args"];
  }
  for (int d = 0; d < 4; ++d) {
    const auto& samples = run.trace.memory[d];
    ASSERT_EQ(memory[d].size(), samples.size());
    for (size_t i = 0; i < samples.size(); ++i) {
      EXPECT_EQ(memory[d][i].first, micros(samples[i].time_ns));
      EXPECT_EQ(memory[d][i].second, samples[i].activation_bytes);
    }
    EXPECT_EQ(last_version[d][fmt::format("stage {}", d + 1)], 2);
  }
}

// A fused F&B slot's forward says so (plots/gantt.py frames it with the device's next op); no other op does.
TEST(ChromeTrace, AFusedForwardIsMarked) {
  const SimulationResult run = traced_run("dualpipe-v");
  const json trace = json::parse(chrome_trace_json({run}));
  size_t fused = 0, expected = 0;
  for (const OpRecord& op : run.trace.ops) expected += op.action.fused_with_next ? 1 : 0;
  for (const json& e : events_with(trace, "X")) {
    if (!e["args"].contains("fused_with_next")) continue;
    EXPECT_EQ(e["cat"], "F");
    ++fused;
  }
  EXPECT_GT(expected, 0u);
  EXPECT_EQ(fused, expected);
}

TEST(ChromeTrace, SeveralRunsGetTheirOwnProcesses) {
  const json trace = json::parse(chrome_trace_json({traced_run("gpipe"), traced_run("zb-h1")}));
  std::map<int, std::string> process_names;
  for (const json& e : events_with(trace, "M")) {
    if (e["name"] == "process_name") process_names[e["pid"]] = e["args"]["name"];
  }
  ASSERT_EQ(process_names.size(), 8u);
  EXPECT_EQ(process_names[0], "gpipe: device 1");
  EXPECT_EQ(process_names[7], "zb-h1: device 4");
}

TEST(ChromeTrace, TwoRunsGiveByteIdenticalTraces) {
  const std::string first = chrome_trace_json({traced_run("zb-h2")});
  const std::string second = chrome_trace_json({traced_run("zb-h2")});
  EXPECT_EQ(first, second);

  test::TempDir dir;
  const std::string yaml = dir.write("s.yaml", kTraceScenario);
  for (const char* name : {"a.json", "b.json"}) {
    const test::CommandResult r = test::run_pipesim(
        fmt::format("run '{}' --schedules zb-h1,1f1b-flush --trace '{}'", yaml, dir.file(name)), dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const std::string a = test::read_file(dir.file("a.json"));
  EXPECT_EQ(a, test::read_file(dir.file("b.json")));
  EXPECT_TRUE(json::accept(a));
}

TEST(ChromeTrace, AWindowKeepsTheFirstBatchesAndTheEstimateIsNearTheSize) {
  const SimulationResult run = traced_run("1f1b-flush");
  ASSERT_EQ(run.spec.batches, 2);
  const std::string whole = chrome_trace_json({run}, "s");
  const std::string first = chrome_trace_json({run}, "s", TraceWindow{1});
  const json cut = json::parse(first);
  EXPECT_EQ(cut["metadata"]["window_batches"], 1);
  // Every op of the first batch (4 stages x 8 microbatches x F, B... and its U) and none of the second's F.
  for (const json& e : events_with(cut, "X")) {
    if (e["tid"] != 0) continue;
    const std::string name = e["name"];
    if (name[0] == 'F') {
      EXPECT_LT(std::stoi(name.substr(1)), 8) << name;
    }
  }
  size_t forwards = 0;
  for (const json& e : events_with(cut, "X")) forwards += e["tid"] == 0 && std::string(e["name"])[0] == 'F';
  EXPECT_EQ(forwards, 4u * 8);
  EXPECT_LT(first.size(), whole.size());
  // A window as long as the run changes nothing but the metadata.
  EXPECT_EQ(windowed(run, TraceWindow{5}).trace.ops.size(), run.trace.ops.size());
  // The estimate that guards --trace is within a factor of 1.5 of what is written.
  for (const auto& [text, window] : {std::pair{whole, TraceWindow{}}, std::pair{first, TraceWindow{1}}}) {
    const double estimate = estimated_trace_bytes({run}, window);
    EXPECT_GT(estimate, text.size() / 1.5);
    EXPECT_LT(estimate, text.size() * 1.5);
  }
}

TEST(ChromeTrace, RunRefusesATraceOverTheLimitUnlessForced) {
  test::TempDir dir;
  const std::string trace = dir.file("t.json");
  const std::string base = fmt::format("{} run {} --trace {} > /dev/null 2> {}", PIPESIM_BINARY,
                                       dir.write("s.yaml", kTraceScenario), trace, dir.file("err"));
  EXPECT_NE(std::system((base + " --trace-limit-mb 0.01").c_str()), 0);
  EXPECT_NE(test::read_file(dir.file("err")).find("the trace would be about"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(trace));
  EXPECT_EQ(std::system((base + " --trace-limit-mb 0.01 --force").c_str()), 0);
  EXPECT_TRUE(std::filesystem::exists(trace));
}

}  // namespace
}  // namespace pipesim
