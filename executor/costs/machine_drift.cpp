#include "executor/costs/machine_drift.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/errors.h"
#include "calibrate/cpu_calibrate.h"
#include "executor/costs/calibration_kernels.h"

namespace pipesim {

std::string MachineSpeed::describe() const {
  return fmt::format("GEMMs run at {:.2f}x the profile's rate ({:+.1f} %, {} shapes of m, n, k in 256-512)",
                     ratio, 100 * (ratio - 1), gemms);
}

MachineSpeed speed_against(const GemmTable& calibrated, const std::vector<pipesim_profile::GemmTiming>& now) {
  const auto on_grid = [](const std::vector<double>& sizes, long value) {
    return std::find(sizes.begin(), sizes.end(), static_cast<double>(value)) != sizes.end();
  };
  MachineSpeed speed;
  double log_sum = 0;
  for (const pipesim_profile::GemmTiming& t : now) {
    if (t.layout != "nn" || t.seconds <= 0 || !on_grid(calibrated.m_sizes(), t.m) ||
        !on_grid(calibrated.n_sizes(), t.n) || !on_grid(calibrated.k_sizes(), t.k))
      continue;
    log_sum += std::log(calibrated.seconds(t.m, t.n, t.k) / t.seconds);
    ++speed.gemms;
  }
  if (speed.gemms == 0) throw InputError("the machine-speed probe's GEMMs are not on the profile's grid");
  speed.ratio = std::exp(log_sum / speed.gemms);
  return speed;
}

MachineSpeed probe_machine_speed(const HardwareProfile& profile) {
  CpuCalibrationOptions probe;
  use_executor_kernels(probe);
  probe.sizes = {256, 512};
  probe.gemm_layouts = {"nn"};
  probe.elementwise.clear();
  probe.updates.clear();
  probe.copy_bytes = 8.0 * (1 << 20);
  const pipesim_profile::ProfileData now = calibrate_cpu(probe, [](const std::string&) {});
  return speed_against(profile.gemm_table("fp32"), now.gemm);
}

}  // namespace pipesim
