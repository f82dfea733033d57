#include "report/fit_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/format.h"

namespace pipesim {

std::string render_fit_report(const std::vector<FitRow>& rows, const std::string& profile_source) {
  auto cell = [](double predicted, double profiled) {
    return fmt::format("{:.3f} / {:.3f} ({:+.1f}%)", predicted, profiled, 100 * (predicted / profiled - 1));
  };
  std::vector<std::vector<std::string>> table;
  double worst = 0;
  for (const FitRow& r : rows) {
    table.push_back(
        {r.profiled.model, fmt::format("{}", r.profiled.stages), fmt::format("{}", r.profiled.microbatches),
         fmt::format("{} ({} layers)", r.stage + 1, r.layers), cell(r.forward_ms, r.profiled.forward_ms),
         cell(r.backward_input_ms, r.profiled.backward_input_ms),
         cell(r.backward_weight_ms, r.profiled.backward_weight_ms), cell(r.comm_ms, r.profiled.comm_ms)});
    for (double e : {r.forward_error(), r.backward_input_error(), r.backward_weight_error()}) {
      worst = std::max(worst, std::abs(e));
    }
  }
  std::string out = fmt::format(
      "A100 fit: predicted / profiled per microbatch (ms), profile {}\n"
      "against data/zero_bubble/zb_profiled_times.csv (Zero Bubble paper, Appendix D), zb layer split\n\n",
      profile_source);
  out += render_table({"model", "N", "m", "stage", "F", "I (B in the paper)", "W", "comm"}, table);
  out += fmt::format("\nlargest |error| of F, I, W: {:.1f}% (target: within 10%)\n", 100 * worst);
  return out;
}

}  // namespace pipesim
