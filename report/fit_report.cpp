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

std::string render_layer_times_report(const LayerTimesFile& file,
                                      const std::vector<LayerTimesComparison>& rows,
                                      const std::string& profile_source) {
  auto cell = [](double predicted, double measured) {
    return fmt::format("{:.3f} / {:.3f} ({:+.1f}%)", predicted, measured, 100 * (predicted / measured - 1));
  };
  std::vector<std::vector<std::string>> table;
  double sum[4] = {0, 0, 0, 0}, worst[4] = {0, 0, 0, 0};
  for (const LayerTimesComparison& r : rows) {
    const MeasuredLayerTimes& m = r.measured;
    table.push_back({m.config, fmt::format("{}", m.model.seq_len), fmt::format("{}", m.micro_batch),
                     recompute_name(m.model.recompute), cell(r.forward_ms, m.forward_ms),
                     cell(r.backward_input_ms, m.backward_input_ms),
                     cell(r.backward_weight_ms, m.backward_ms - m.backward_input_ms),
                     cell(r.backward_ms(), m.backward_ms)});
    const double errors[4] = {r.forward_error(), r.backward_input_error(), r.weight_gradient_error(),
                              r.backward_error()};
    for (int k = 0; k < 4; ++k) {
      sum[k] += std::abs(errors[k]);
      worst[k] = std::max(worst[k], std::abs(errors[k]));
    }
  }
  std::string out = fmt::format(
      "Layer times: predicted / measured per layer and microbatch (ms), profile {}\n", profile_source);
  out += fmt::format("measured: {}\n", file.path);
  for (const std::string& line : file.provenance) out += "  " + line + "\n";
  out +=
      "predicted: one layer alone on a middle stage (no embedding, no loss), without the profile's per-op "
      "host "
      "overhead (CUDA events time the queued GPU work)\n"
      "W is compared with B - I: autograd's weights-only backward still runs the layer's input-gradient "
      "chain\n\n";
  out += render_table({"config", "seq", "b", "recompute", "F", "I", "W (B - I)", "B = I + W"}, table);
  if (!rows.empty()) {
    const double n = static_cast<double>(rows.size());
    out += fmt::format(
        "\nmean |error|: F {:.1f}%, I {:.1f}%, W {:.1f}%, B {:.1f}%; largest: F {:.1f}%, I {:.1f}%, W "
        "{:.1f}%, "
        "B {:.1f}% ({} rows)\n",
        100 * sum[0] / n, 100 * sum[1] / n, 100 * sum[2] / n, 100 * sum[3] / n, 100 * worst[0],
        100 * worst[1], 100 * worst[2], 100 * worst[3], rows.size());
  }
  return out;
}

}  // namespace pipesim
