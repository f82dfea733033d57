#include "sweeps/extrapolate_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "report/format.h"

namespace pipesim {
namespace {

std::string number(const std::optional<double>& v, const char* format = "{:.6g}") {
  return v ? fmt::format(fmt::runtime(format), *v) : "";
}

std::string ratio(const std::optional<double>& predicted, const std::optional<double>& measured) {
  return predicted && measured ? fmt::format("{:.3f}", *predicted / *measured) : "";
}

std::string memory_cell(const Extrapolation& e, const std::optional<double>& gib) {
  if (!gib) return "";
  const bool exceeds = e.memory_capacity_gib > 0 && *gib > e.memory_capacity_gib;
  return fmt::format("{:.1f}{}", *gib, exceeds ? " (!)" : "");
}

std::string drift_cell(const ExtrapolationRow& r) {
  if (!r.drift_max) return r.schedule == kPaciPaperMethod ? "" : "-";
  return fmt::format("{} / {}", *r.drift_max, *r.drift_bound);
}

// Rows of one (model, m) in report order.
std::map<std::pair<std::string, int>, std::vector<const ExtrapolationRow*>> by_setting(
    const Extrapolation& e, std::vector<std::pair<std::string, int>>& order) {
  std::map<std::pair<std::string, int>, std::vector<const ExtrapolationRow*>> groups;
  for (const ExtrapolationRow& r : e.rows) {
    const auto key = std::make_pair(r.model, r.microbatches);
    if (groups.find(key) == groups.end()) order.push_back(key);
    groups[key].push_back(&r);
  }
  return groups;
}

std::vector<std::string> table_row(const Extrapolation& e, const ExtrapolationRow& r) {
  if (!r.error.empty()) return {r.schedule, "cannot run: " + r.error, "", "", "", "", "", "", ""};
  return {r.schedule,
          number(r.throughput_samples_per_gpu_s, "{:.3f}"),
          number(r.measured_throughput_samples_per_gpu_s, "{:.2f}"),
          ratio(r.throughput_samples_per_gpu_s, r.measured_throughput_samples_per_gpu_s),
          memory_cell(e, r.peak_memory_gib),
          number(r.measured_memory_gib, "{:.0f}"),
          ratio(r.peak_memory_gib, r.measured_memory_gib),
          r.bubble_fraction ? fmt::format("{:.1f}", 100 * *r.bubble_fraction) : "",
          drift_cell(r)};
}

std::string comm_sentence(const Extrapolation& e) {
  return e.blocking_comm ? "Comm: the profile's link, blocking (a transfer holds the sender's and the "
                           "receiver's compute streams, as Megatron's p2p does)."
                         : "Comm: the profile's link, overlapped with compute.";
}

const std::vector<std::string> kTableHeader = {"schedule",  "samples/GPU/s", "measured",
                                               "pred/meas", "peak GiB",      "measured GiB",
                                               "pred/meas", "bubble %",      "Δ max / bound"};

}  // namespace

std::string extrapolation_csv(const Extrapolation& e) {
  std::string out =
      "model,stages,microbatch_size,microbatches,schedule,throughput_samples_per_gpu_s,peak_memory_gib,"
      "bubble_fraction,drift_max,measured_throughput_samples_per_gpu_s,measured_memory_gib\n";
  for (const ExtrapolationRow& r : e.rows) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", r.model, r.stages, r.microbatch_size,
                       r.microbatches, r.schedule, number(r.throughput_samples_per_gpu_s),
                       number(r.peak_memory_gib), number(r.bubble_fraction),
                       r.drift_max ? std::to_string(*r.drift_max) : "",
                       number(r.measured_throughput_samples_per_gpu_s), number(r.measured_memory_gib));
  }
  return out;
}

std::string extrapolation_markdown(const Extrapolation& e) {
  std::string out = fmt::format(
      "# pipesim extrapolation: the Zero Bubble paper's models\n\n"
      "Predicted with the transformer cost model on `{}`; memory by the memory model (weights × live "
      "versions, "
      "gradients, AdamW state, activations in flight; GiB = 2^30 bytes, the paper's GB read as 1e9 bytes). "
      "Measured: Zero Bubble paper, Table "
      "4 "
      "(A100 SXM 80GB). `{}`: the PACI paper's method, measured 1F1B-flush throughput × (m+N−1)/m at "
      "1F1B-flush's "
      "memory. PACI runs with a = m, interleaved-1f1b with one transformer layer per chunk as in the Zero "
      "Bubble paper (v = (layers+2)/N chunks per device, the embedding and the loss counted as layers), "
      "zb-1p/zb-2p with optimizer post-validation. {} pred/meas = predicted / measured. {}\n",
      e.profile_source, kPaciPaperMethod, comm_sentence(e),
      e.memory_capacity_gib > 0
          ? fmt::format("(!) marks a peak above the device's {:.0f} GiB.", e.memory_capacity_gib)
          : "");
  std::vector<std::pair<std::string, int>> order;
  const auto groups = by_setting(e, order);
  std::string current_model;
  for (const auto& key : order) {
    const std::vector<const ExtrapolationRow*>& rows = groups.at(key);
    const ExtrapolationRow& first = *rows.front();
    if (first.model != current_model) {
      current_model = first.model;
      out += fmt::format("\n## {} ({} stages, microbatch size {}, interleaved-1f1b with {} chunks)\n",
                         first.model, first.stages, first.microbatch_size, first.interleaved_chunks);
    }
    out += fmt::format("\n### m = {}\n\n| {} |\n|", key.second, fmt::join(kTableHeader, " | "));
    for (size_t i = 0; i < kTableHeader.size(); ++i) out += i == 0 ? "---|" : "---:|";
    out += "\n";
    for (const ExtrapolationRow* r : rows) out += fmt::format("| {} |\n", fmt::join(table_row(e, *r), " | "));
  }
  // Every predicted/measured ratio in one place.
  out +=
      "\n## Predicted / measured\n\n| model | m | 1F1B throughput | 1F1B memory | ZB-2p throughput | ZB-2p "
      "memory | "
      "PACI predicted / paper's method |\n|---|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& key : order) {
    const ExtrapolationRow *flush = nullptr, *zb2p = nullptr, *paci = nullptr, *paper = nullptr;
    for (const ExtrapolationRow* r : groups.at(key)) {
      if (r->schedule == "1f1b-flush") flush = r;
      if (r->schedule == "zb-2p") zb2p = r;
      if (r->schedule == "paci") paci = r;
      if (r->schedule == kPaciPaperMethod) paper = r;
    }
    if (!flush || !zb2p || !paci || !paper) continue;
    out +=
        fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", key.first, key.second,
                    ratio(flush->throughput_samples_per_gpu_s, flush->measured_throughput_samples_per_gpu_s),
                    ratio(flush->peak_memory_gib, flush->measured_memory_gib),
                    ratio(zb2p->throughput_samples_per_gpu_s, zb2p->measured_throughput_samples_per_gpu_s),
                    ratio(zb2p->peak_memory_gib, zb2p->measured_memory_gib),
                    ratio(paci->throughput_samples_per_gpu_s, paper->throughput_samples_per_gpu_s));
  }
  return out;
}

std::string extrapolation_summary(const Extrapolation& e) {
  std::vector<std::vector<std::string>> rows;
  for (const ExtrapolationRow& r : e.rows) {
    std::vector<std::string> cells = {r.model, std::to_string(r.microbatches)};
    for (std::string& cell : table_row(e, r)) cells.push_back(std::move(cell));
    rows.push_back(std::move(cells));
  }
  std::vector<std::string> header = {"model", "m"};
  header.insert(header.end(), kTableHeader.begin(), kTableHeader.end());
  return fmt::format(
             "extrapolation on {}{}\n{}\n\n", e.profile_source,
             e.memory_capacity_gib > 0 ? fmt::format("; (!) = above {:.0f} GiB", e.memory_capacity_gib) : "",
             comm_sentence(e)) +
         render_table(header, rows);
}

}  // namespace pipesim
