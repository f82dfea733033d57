#include "executor/costs/cpu_profile_costs.h"

#include <cmath>

#include "base/errors.h"
#include "executor/model.h"

namespace pipesim {

CpuProfileCosts::CpuProfileCosts(const HardwareProfile& profile, const executor::TrainingSetup& setup,
                                 int stages) {
  const GemmTable& table = profile.gemm_table("fp32");
  const executor::ModelShape& shape = setup.shape;
  struct Map {
    double in, out;
  };
  std::vector<std::vector<Map>> unit_maps;
  std::vector<std::size_t> unit_parameters;
  const double d = shape.width;
  unit_maps.push_back({{double(shape.input_width), d}});
  for (int b = 0; b < shape.blocks; ++b) unit_maps.push_back({{d, 4 * d}, {4 * d, d}});
  unit_maps.push_back({{d, double(shape.classes)}});
  const auto units = executor::build_units<float>(shape);
  if (shape.kind != executor::ModelKind::kResidualMlp || shape.token_input ||
      units.size() != unit_maps.size()) {
    throw InputError(
        "validate: the cost-model prediction covers the residual MLP on dense input only (executor.model: "
        "residual_mlp with the teacher or fashion_mnist data)");
  }
  for (const auto& unit : units) unit_parameters.push_back(unit->parameter_count());
  // The training run's own split (executor/training_setup.cpp): by each unit's forward FLOPs.
  const std::vector<int> first =
      executor::balanced_unit_split(executor::unit_costs(units, setup.samples_per_microbatch), stages);
  const double samples = setup.samples_per_microbatch;
  seconds_.assign(stages, {});
  for (int s = 0; s < stages; ++s) {
    double parameters = 0;
    for (int u = first[s]; u < first[s + 1]; ++u) {
      parameters += static_cast<double>(unit_parameters[u]);
      for (const Map& m : unit_maps[u]) {
        seconds_[s][static_cast<int>(OpKind::F)] += table.seconds(samples, m.out, m.in);
        seconds_[s][static_cast<int>(OpKind::I)] += table.seconds(samples, m.in, m.out);
        seconds_[s][static_cast<int>(OpKind::W)] += table.seconds(m.in, m.out, samples);
      }
    }
    const double bytes_per_s = profile.memory_bandwidth_gb_per_s * 1e9;
    // W fills its microbatch's own gradient buffer (zeroed, then written): the executor keeps one per
    // microbatch so that U sums them in microbatch order.
    seconds_[s][static_cast<int>(OpKind::W)] += 2 * 4 * parameters / bytes_per_s;
    seconds_[s][static_cast<int>(OpKind::B)] =
        seconds_[s][static_cast<int>(OpKind::I)] + seconds_[s][static_cast<int>(OpKind::W)];
    // U copies the weights into a new version (read + write), sums the m gradients into a mean (m reads,
    // one write) and steps (reads the weights and the mean, writes the weights).
    const double m = setup.microbatches_per_batch;
    seconds_[s][static_cast<int>(OpKind::U)] = (m + 6) * 4 * parameters / bytes_per_s;
  }
}

TimeNs CpuProfileCosts::duration(const Action& a) const {
  return static_cast<TimeNs>(std::llround(seconds_[a.stage][static_cast<int>(a.kind)] * 1e9));
}

}  // namespace pipesim
