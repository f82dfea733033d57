// libFuzzer target: the YAML scenario reader, then a run of every schedule the scenario asks for when the run
// is small, and the writers of what it ran: the JSON document (which must parse back), the CSV rows, the
// table. InputError is the expected answer to bad input; anything else (a crash, a sanitizer report, another
// exception) is a finding. scripts/fuzz.sh runs it with seeds from scenarios/ and fuzz/scenario.dict.
#include <cstddef>
#include <cstdint>
#include <string>

#include "api/simulation.h"
#include "base/errors.h"
#include "io/scenario.h"
#include "report/report.h"
#include "report/result_record.h"
#include "report/table_columns.h"
#include "sim/limits.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const pipesim::Scenario scenario = pipesim::parse_scenario(text, "fuzz.yaml");
    // Keep each input fast: the engine's own limits are tested elsewhere.
    if (static_cast<double>(scenario.stages) * scenario.microbatches * scenario.batches > 2000) return 0;
    pipesim::SimulationOptions options;
    options.limits.memory_bytes = 0.05e9;
    std::vector<pipesim::SimulationResult> results;
    for (const pipesim::ScheduleRequest& request : pipesim::requested_schedules(scenario)) {
      try {
        results.push_back(pipesim::simulate_schedule(scenario, request, options));
      } catch (const pipesim::InputError&) {
      }
    }
    const std::string json = pipesim::results_json_text({scenario.name, "fuzz.yaml"}, results);
    if (nlohmann::json::parse(json).at("results").size() != results.size()) __builtin_trap();
    pipesim::results_to_csv(results);
    pipesim::render_result_table(scenario.name, results);
  } catch (const pipesim::InputError&) {
  }
  return 0;
}
