#include "api/quick_scenario.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <sstream>

#include "api/schedule_selection.h"
#include "base/errors.h"
#include "base/value_ranges.h"

namespace pipesim {
namespace {

// A time in ms from the command line, within base/value_ranges.h's limits (NaN and infinities refused).
TimeNs parse_ms(const std::string& option, const std::string& text, const std::string& item) {
  char* end = nullptr;
  const double value = std::strtod(item.c_str(), &end);
  const std::optional<TimeNs> ns = checked_ms_to_ns(value);
  if (item.empty() || end != item.c_str() + item.size() || !ns) {
    throw InputError(fmt::format("{} '{}': '{}' is not {}", option, text, item, time_range_text()));
  }
  return *ns;
}

std::vector<TimeNs> parse_costs(const std::string& text) {
  std::vector<TimeNs> values;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) values.push_back(parse_ms("--costs", text, item));
  if (values.size() != 2 && values.size() != 3) {
    throw InputError(fmt::format("--costs '{}': expected F,B or F,I,W in ms, e.g. 1,2 or 1,1,1", text));
  }
  if (std::all_of(values.begin(), values.end(), [](TimeNs v) { return v == 0; })) {
    throw InputError(
        fmt::format("--costs '{}': every op would take 0 ms, so a batch takes no time and "
                    "throughput is undefined; give F or B a positive time",
                    text));
  }
  return values;
}

}  // namespace

Scenario quick_scenario(const QuickScenarioArgs& args) {
  const std::vector<TimeNs> costs = parse_costs(args.costs);
  const TimeNs comm_ns = parse_ms("--comm", args.comm_ms, args.comm_ms);
  const int n = args.stages;
  Scenario s;
  s.name = "command line";
  s.source = "command line";
  s.stages = n;
  s.microbatches = args.microbatches;
  s.batches = args.batches;
  ExplicitCostTable& c = s.costs;
  c.forward_ns.assign(n, costs[0]);
  c.backward_input_ns.assign(n, costs[1]);
  c.backward_weight_ns.assign(n, costs.size() == 3 ? costs[2] : 0);
  s.backward_split_given = costs.size() == 3;
  c.optimizer_ns.assign(n, 0);
  c.activation_bytes.assign(n, 1'000'000);
  c.weight_grad_activation_bytes.assign(n, 0);
  c.transfer_bytes.assign(n, 0);
  s.comm.latency_ns.assign(n, comm_ns);
  return s;
}

ScheduleRequest quick_request(const QuickScenarioArgs& args) {
  std::vector<ScheduleRequest> requests = select_schedules(Scenario{}, args.schedule);
  if (requests.size() != 1) throw InputError(fmt::format("'{}': expected one schedule", args.schedule));
  ScheduleRequest request = std::move(requests.front());
  if (args.chunks > 0) request.params.set("chunks", std::to_string(args.chunks));
  return request;
}

}  // namespace pipesim
