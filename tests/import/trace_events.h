#pragma once
// Chrome traces written here in the format PyTorch's pipelining runtime profiles, for the trace reader's
// tests and for the api's test that an imported scenario runs.
#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

namespace pipesim::test {

// One rank's trace of `steps` steps of m microbatches through `stages` (stage s on this rank): each action a
// complete event with its duration in microseconds, the F's alternating `f_us` +- 100, plus a SEND, an
// UNSHARD and a profiler range of another kind.
inline std::string rank_trace(int rank, const std::vector<int>& stages, int steps, int m, double f_us,
                              const std::map<char, double>& backward_us) {
  std::string events = R"({"ph": "X", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 5})";
  double ts = 10;
  auto add = [&](const std::string& name, double dur) {
    events += fmt::format(
        R"(, {{"ph": "X", "cat": "user_annotation", "name": "{}", "pid": {}, "tid": 7, "ts": {}, "dur": {}}})",
        name, rank, ts, dur);
    ts += dur + 1;
  };
  add(fmt::format("PP:{}UNSHARD", stages.front()), 3);
  for (int step = 0; step < steps; ++step) {
    for (int stage : stages) {
      for (int mb = 0; mb < m; ++mb) {
        add(fmt::format("PP:{}F{}", stage, mb), f_us + (mb % 2 == 0 ? 100 : -100));
        add(fmt::format("PP:{}SEND_F{}", stage, mb), 4);
        for (const auto& [kind, us] : backward_us) add(fmt::format("PP:{}{}{}", stage, kind, mb), us);
      }
    }
  }
  return fmt::format(R"({{"schemaVersion": 1, "traceEvents": [{}]}})", events);
}

}  // namespace pipesim::test
