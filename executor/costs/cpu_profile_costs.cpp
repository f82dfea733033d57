#include "executor/costs/cpu_profile_costs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <set>

#include "base/errors.h"
#include "executor/costs/calibration_kernels.h"
#include "executor/model.h"
#include "spec/optimizer_kind.h"

namespace pipesim {
namespace {

namespace k = executor_kernels;

// An op's kernels, costed from the profile; records the kernels the profile does not have.
class KernelCosts {
 public:
  explicit KernelCosts(const HardwareProfile& profile)
      : profile_(profile),
        nn_(profile.gemm_table("fp32", GemmLayout::kNN)),
        nt_(profile.gemm_table("fp32", GemmLayout::kNT)),
        tn_(profile.gemm_table("fp32", GemmLayout::kTN)) {}

  double nn(double m, double n, double k) const { return nn_.seconds(m, n, k); }
  double nt(double m, double n, double k) const { return nt_.seconds(m, n, k); }
  double tn(double m, double n, double k) const { return tn_.seconds(m, n, k); }
  double elementwise(const char* name, double elements) {
    const auto it = profile_.elementwise_ns_per_element.find(name);
    if (it == profile_.elementwise_ns_per_element.end()) {
      missing_kernels_.insert(name);
      return 0;
    }
    return it->second * elements * 1e-9;
  }
  const std::set<std::string>& missing_kernels() const { return missing_kernels_; }

 private:
  const HardwareProfile& profile_;
  const GemmTable& nn_;
  const GemmTable& nt_;
  const GemmTable& tn_;
  std::set<std::string> missing_kernels_;
};

using OpSeconds = std::array<double, kOpKinds>;

void add(OpSeconds& to, OpKind kind, double seconds) {
  to[static_cast<int>(kind)] += seconds;
}

// A linear map in -> out on b rows (executor LinearUnit).
OpSeconds linear(KernelCosts& c, double b, double in, double out) {
  OpSeconds s{};
  add(s, OpKind::F,
      c.elementwise(k::kCopy, b * in) + c.elementwise(k::kBiasFill, b * out) + c.nn(b, out, in));
  add(s, OpKind::I, c.elementwise(k::kCopy, b * out) + c.nt(b, in, out));
  add(s, OpKind::W, c.tn(in, out, b) + c.elementwise(k::kBiasGrad, b * out));
  return s;
}

// The residual MLP block d -> h -> d on b rows (executor ResidualMlpUnit).
OpSeconds residual_mlp(KernelCosts& c, double b, double d, double h) {
  OpSeconds s{};
  add(s, OpKind::F,
      c.elementwise(k::kLayerNormForward, b * d) + c.elementwise(k::kBiasFill, b * h) + c.nn(b, h, d) +
          c.elementwise(k::kGeluForward, b * h) + c.elementwise(k::kBiasFill, b * d) + c.nn(b, d, h) +
          c.elementwise(k::kAdd, b * d));
  add(s, OpKind::I,
      c.nt(b, h, d) + c.elementwise(k::kGeluInputGrad, b * h) + c.nt(b, d, h) +
          c.elementwise(k::kLayerNormInputGrad, b * d) + c.elementwise(k::kAdd, b * d) +
          c.elementwise(k::kCopy, b * d));
  add(s, OpKind::W,
      c.tn(h, d, b) + c.elementwise(k::kBiasGrad, b * d) + c.tn(d, h, b) +
          c.elementwise(k::kBiasGrad, b * h) + c.elementwise(k::kLayerNormWeightGrad, b * d));
  return s;
}

}  // namespace

CpuProfileCosts::CpuProfileCosts(const HardwareProfile& profile, const executor::TrainingSetup& setup,
                                 int stages, std::vector<double> gradients_per_update, bool dispatch,
                                 double time_scale) {
  const executor::ModelShape& shape = setup.shape;
  const auto units = executor::build_units<float>(shape);
  if (shape.kind != executor::ModelKind::kResidualMlp || shape.token_input ||
      units.size() != static_cast<std::size_t>(shape.blocks) + 2) {
    throw InputError(
        "validate: the cost-model prediction covers the residual MLP on dense input only (executor.model: "
        "residual_mlp with the teacher or fashion_mnist data)");
  }
  KernelCosts c(profile);
  const double b = setup.samples_per_microbatch, d = shape.width;
  // Units in order: the input projection, the blocks, the head (executor/model.h).
  std::vector<OpSeconds> unit_seconds;
  unit_seconds.push_back(linear(c, b, shape.input_width, d));
  for (int i = 0; i < shape.blocks; ++i) unit_seconds.push_back(residual_mlp(c, b, d, 4 * d));
  unit_seconds.push_back(linear(c, b, d, shape.classes));
  // The training run's own split (executor/training_setup.cpp): by each unit's forward FLOPs.
  const std::vector<int> first =
      executor::balanced_unit_split(executor::unit_costs(units, setup.samples_per_microbatch), stages);
  if (gradients_per_update.empty()) gradients_per_update.assign(stages, setup.microbatches_per_batch);
  const std::string optimizer = optimizer_name(setup.optimizer.kind);
  const auto update = profile.update_ns_per_parameter.find(optimizer);
  const double bytes_per_s = profile.memory_bandwidth_gb_per_s * 1e9;
  const double dispatch_s = dispatch ? profile.launch_overhead_us * 1e-6 : 0;
  seconds_.assign(stages, {});
  for (int s = 0; s < stages; ++s) {
    OpSeconds& t = seconds_[s];
    double parameters = 0;
    for (int u = first[s]; u < first[s + 1]; ++u) {
      parameters += static_cast<double>(units[u]->parameter_count());
      for (int kind = 0; kind < kOpKinds; ++kind) t[kind] += unit_seconds[u][kind];
    }
    add(t, OpKind::F, c.elementwise(k::kTeacherData, b * shape.input_width * (shape.classes + 1)));
    if (s == stages - 1) add(t, OpKind::F, c.elementwise(k::kSoftmaxCrossEntropy, b * shape.classes));
    // W's gradient buffer: the executor keeps one per microbatch, so that U sums them in microbatch order.
    const bool has_zero_fill = profile.elementwise_ns_per_element.count(k::kZeroFill) > 0;
    add(t, OpKind::W,
        has_zero_fill ? c.elementwise(k::kZeroFill, parameters) : 2 * 4 * parameters / bytes_per_s);
    t[static_cast<int>(OpKind::B)] = t[static_cast<int>(OpKind::I)] + t[static_cast<int>(OpKind::W)];
    const double g = gradients_per_update[s];
    // Without a measured step: a new version copied (read + write), g gradients summed into a mean (g reads,
    // one write), the step (reads the weights and the mean, writes the weights).
    t[static_cast<int>(OpKind::U)] =
        update != profile.update_ns_per_parameter.end()
            ? parameters * (update->second.step_ns + update->second.per_gradient_ns * g) * 1e-9
            : (g + 6) * 4 * parameters / bytes_per_s;
    for (double& seconds : t) seconds = (seconds + dispatch_s) * time_scale;
  }
  if (!c.missing_kernels().empty())
    missing_.push_back(fmt::format("element-wise kernels ({})", fmt::join(c.missing_kernels(), ", ")));
  if (update == profile.update_ns_per_parameter.end())
    missing_.push_back(fmt::format("the {} update (charged at the copy bandwidth)", optimizer));
  if (profile.gemm_nt.empty() || profile.gemm_tn.empty())
    missing_.push_back("transposed GEMMs (gemm_nt, gemm_tn; the plain grid stands in)");
}

TimeNs CpuProfileCosts::duration(const Action& a) const {
  return static_cast<TimeNs>(std::llround(seconds_[a.stage][static_cast<int>(a.kind)] * 1e9));
}

}  // namespace pipesim
