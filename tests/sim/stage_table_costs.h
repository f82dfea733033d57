#pragma once
// Per-stage costs built directly for the engine's and the analyses' tests (tests/sim/plans.h has the uniform
// ones): a table of F, I, W, U and bytes per (virtual) stage, random tables and comm set-ups for the property
// tests that compare two ways of computing the same figures, and seeded jitter. Nothing above sim/.
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "sim/comm_model.h"
#include "sim/cost_model.h"
#include "sim/layout.h"

namespace pipesim::test {

// One value per (virtual) stage of each figure; a B is I + W. An explicit `costs:` of a scenario without
// chunks, stage for device.
struct StageCostTable {
  std::vector<TimeNs> forward_ns, input_ns, weight_ns, optimizer_ns;
  std::vector<Bytes> activation_bytes, weight_grad_activation_bytes, transfer_bytes;
  std::vector<TimeNs> backward_ns;  // a whole B per stage; empty: I + W
};

class StageTableCosts final : public CostModel {
 public:
  explicit StageTableCosts(StageCostTable table) : t_(std::move(table)) {}
  TimeNs duration(const Action& a) const override {
    const auto s = static_cast<std::size_t>(a.stage);
    switch (a.kind) {
      case OpKind::F:
        return t_.forward_ns[s];
      case OpKind::B:
        return t_.backward_ns.empty() ? t_.input_ns[s] + t_.weight_ns[s] : t_.backward_ns[s];
      case OpKind::I:
        return t_.input_ns[s];
      case OpKind::W:
        return t_.weight_ns[s];
      case OpKind::U:
        return t_.optimizer_ns[s];
    }
    return 0;
  }
  bool durations_by_kind_and_stage() const override { return true; }
  Bytes activation_bytes(int stage) const override { return t_.activation_bytes[stage]; }
  Bytes weight_grad_activation_bytes(int stage) const override {
    return t_.weight_grad_activation_bytes[stage];
  }
  Bytes transfer_bytes(int stage) const override { return t_.transfer_bytes[stage]; }
  const StageCostTable& table() const { return t_; }

 private:
  StageCostTable t_;
};

// Per-device values (a StageCostTable indexed by device, as a scenario's explicit `costs:` gives them) on
// `layout`'s stages as cost_models/explicit_costs.h prices them: a device's times and activation bytes split
// evenly over its chunks (a B as ⌊(I + W) / chunks⌋), and with copies of the model (pipelines > 1) every
// copy's stage k priced as the first copy's (cost_models/pipeline_copies_costs.h).
inline StageTableCosts device_costs_on(const PipelineLayout& layout, const StageCostTable& device) {
  const PipelineLayout first = layout.pipelines > 1 ? layout.first_pipeline() : layout;
  StageCostTable t;
  for (int stage = 0; stage < layout.stages; ++stage) {
    const int s = layout.pipelines > 1 ? layout.model_stage(stage) : stage;
    const auto d = static_cast<std::size_t>(first.device(s));
    const int chunks = first.chunks_per_device;
    t.forward_ns.push_back(device.forward_ns[d] / chunks);
    t.input_ns.push_back(device.input_ns[d] / chunks);
    t.weight_ns.push_back(device.weight_ns[d] / chunks);
    t.backward_ns.push_back((device.input_ns[d] + device.weight_ns[d]) / chunks);
    t.optimizer_ns.push_back(device.optimizer_ns[d] / chunks);
    t.activation_bytes.push_back(device.activation_bytes[d] / chunks);
    t.weight_grad_activation_bytes.push_back(device.weight_grad_activation_bytes[d] / chunks);
    t.transfer_bytes.push_back(device.transfer_bytes[d]);
  }
  return StageTableCosts(std::move(t));
}

// Per-device times in ms (one list per figure, N entries; an empty list: 0), bytes as given.
inline StageCostTable device_table_ms(int devices, const std::vector<double>& forward_ms,
                                      const std::vector<double>& input_ms,
                                      const std::vector<double>& weight_ms,
                                      Bytes activation_bytes = 1'000'000,
                                      Bytes weight_grad_activation_bytes = 0, Bytes transfer_bytes = 0) {
  const auto times = [devices](const std::vector<double>& ms) {
    std::vector<TimeNs> ns;
    for (int d = 0; d < devices; ++d) ns.push_back(ms.empty() ? 0 : ms_to_ns(ms[ms.size() == 1 ? 0 : d]));
    return ns;
  };
  StageCostTable t;
  t.forward_ns = times(forward_ms);
  t.input_ns = times(input_ms);
  t.weight_ns = times(weight_ms);
  t.optimizer_ns = times({});
  t.activation_bytes.assign(devices, activation_bytes);
  t.weight_grad_activation_bytes.assign(devices, weight_grad_activation_bytes);
  t.transfer_bytes.assign(devices, transfer_bytes);
  return t;
}

// `stages` stages of F, I, W in [0.5, 3) ms, activation bytes in [0.5, 3) MB, 0.4 MB held for W, no U and
// no transfer bytes (tests/random_scenarios.h's `costs:` line, stated directly).
inline StageTableCosts random_stage_costs(std::mt19937& rng, int stages) {
  std::uniform_real_distribution<double> ms(0.5, 3.0);
  StageCostTable t;
  for (int s = 0; s < stages; ++s) t.forward_ns.push_back(ms_to_ns(ms(rng)));
  for (int s = 0; s < stages; ++s) t.input_ns.push_back(ms_to_ns(ms(rng)));
  for (int s = 0; s < stages; ++s) t.weight_ns.push_back(ms_to_ns(ms(rng)));
  for (int s = 0; s < stages; ++s) t.activation_bytes.push_back(static_cast<Bytes>(1e6 * ms(rng)));
  t.optimizer_ns.assign(stages, 0);
  t.weight_grad_activation_bytes.assign(stages, 400'000);
  t.transfer_bytes.assign(stages, 0);
  return StageTableCosts(std::move(t));
}

// A value as a scenario's text writes it, with `decimals` places ("{:.3f}"), read back.
inline double as_written(double value, int decimals = 3) {
  return std::stod(fmt::format("{:.{}f}", value, decimals));
}

// tests/random_scenarios.h's random_costs(rng, stages, link) stated directly, value for value: per-device F,
// I, W in [0.5, 3) ms and activation bytes in [0.5, 3) MB, each written with 3 decimals, 0.4 MB held for W,
// no U and no transfer bytes, and unless the link model carries the comm, one fixed latency of 0, 0.15 or
// 0.3 ms for every device. Drawn in the order that helper's arguments are evaluated by GCC (the last
// first), so that a seed gives the property tests the configurations they had through YAML; its
// parameter_bytes are drawn and dropped (only the api's static memory reads them).
struct RandomDeviceCosts {
  StageCostTable table;  // per device (device_costs_on prices it on a layout)
  TimeNs latency_ns = 0;
};

inline RandomDeviceCosts random_device_costs(std::mt19937& rng, int stages, bool link) {
  std::uniform_real_distribution<double> ms(0.5, 3.0);
  const auto list = [&](double scale) {
    std::vector<double> values;
    for (int s = 0; s < stages; ++s) values.push_back(as_written(scale * ms(rng)));
    return values;
  };
  const auto times = [](const std::vector<double>& values) {
    std::vector<TimeNs> ns;
    for (double v : values) ns.push_back(ms_to_ns(v));
    return ns;
  };
  RandomDeviceCosts c;
  list(3e6);  // parameter_bytes
  for (double b : list(1e6)) c.table.activation_bytes.push_back(static_cast<Bytes>(std::llround(b)));
  if (!link) c.latency_ns = ms_to_ns(as_written(std::uniform_int_distribution<int>(0, 2)(rng) * 0.15, 2));
  c.table.weight_ns = times(list(1));
  c.table.input_ns = times(list(1));
  c.table.forward_ns = times(list(1));
  c.table.optimizer_ns.assign(stages, 0);
  c.table.weight_grad_activation_bytes.assign(stages, 400'000);
  c.table.transfer_bytes.assign(stages, 0);
  return c;
}

// The three comm set-ups of the property tests, indexed 0..2: a fixed latency of 0, 0.15 or 0.3 ms (drawn
// from rng), the link model (2 GB/s, 0.1 ms), blocking comm without latency.
inline std::unique_ptr<CommModel> random_comm(std::mt19937& rng, int which, int devices) {
  switch (which) {
    case 0: {
      const TimeNs latency = ms_to_ns(0.15 * std::uniform_int_distribution<int>(0, 2)(rng));
      return std::make_unique<FixedLatencyComm>(std::vector<TimeNs>(devices, latency));
    }
    case 1:
      return std::make_unique<LinkComm>(devices, 2.0, ms_to_ns(0.1));
    default:
      return std::make_unique<BlockingComm>(
          std::make_unique<FixedLatencyComm>(std::vector<TimeNs>(devices, 0)));
  }
}

inline const char* const kRandomCommNames[] = {"fixed latency", "link", "blocking"};

// A base cost model with 20 % lognormal jitter and 5 % stragglers at 4x, the same duration for the same
// seed and action whatever order the engine asks in (the noise that never lets a run repeat).
class JitteredStageCosts final : public CostModel {
 public:
  JitteredStageCosts(const CostModel& base, std::uint64_t seed) : base_(base), seed_(seed) {}
  TimeNs duration(const Action& a) const override {
    const std::uint64_t key = (static_cast<std::uint64_t>(a.kind) << 56) ^
                              (static_cast<std::uint64_t>(a.stage) << 32) ^
                              static_cast<std::uint32_t>(a.microbatch);
    const double z =
        std::sqrt(-2.0 * std::log(uniform(key, 1))) * std::cos(2.0 * std::numbers::pi * uniform(key, 2));
    double factor = std::exp(0.2 * z);
    if (uniform(key, 3) < 0.05) factor *= 4;
    return static_cast<TimeNs>(std::llround(static_cast<double>(base_.duration(a)) * factor));
  }
  Bytes activation_bytes(int stage) const override { return base_.activation_bytes(stage); }
  Bytes weight_grad_activation_bytes(int stage) const override {
    return base_.weight_grad_activation_bytes(stage);
  }
  Bytes transfer_bytes(int stage) const override { return base_.transfer_bytes(stage); }

 private:
  static std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }
  // In (0, 1), a function of the seed, the action and the draw.
  double uniform(std::uint64_t key, std::uint64_t draw) const {
    return (static_cast<double>(mix(mix(seed_ ^ draw) ^ key) >> 11) + 0.5) * 0x1.0p-53;
  }
  const CostModel& base_;
  std::uint64_t seed_;
};

}  // namespace pipesim::test
