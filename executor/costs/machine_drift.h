#pragma once
// How fast this machine runs now against its CPU profile: a short GEMM probe with the calibration's own
// kernel and cache treatment, at grid points the profile measured. A VM's speed drifts by 15-30 % over
// minutes (2026-12-04, this 2-core VM: 85.5, 99.3 and 90.5 GFLOP/s at 1024³ in calibrations minutes apart),
// which alone can exceed a cost model's error: `pipesim validate` probes before and after its runs and says
// so, and can rescale its a-priori prediction to the machine's speed at the start (never to the runs).
#include <string>
#include <vector>

#include "calibrate/profile_writer.h"
#include "spec/hardware_profile.h"

namespace pipesim {

struct MachineSpeed {
  double ratio = 1;  // geometric mean over the probed GEMMs of calibrated time / time now (> 1: faster now)
  int gemms = 0;     // probed grid points the profile also holds
  std::string describe() const;  // "GEMMs run at 0.87x the profile's rate (8 shapes, 256-512)"
};

// The ratio for timings `now` of fp32 GEMMs (nn) against `calibrated`; only points on its grid count.
// Throws InputError when none is.
MachineSpeed speed_against(const GemmTable& calibrated, const std::vector<pipesim_profile::GemmTiming>& now);

// Measures fp32 nn GEMMs at m, n, k in {256, 512} with the executor's BLAS (about a second) and compares
// them with the profile's grid.
MachineSpeed probe_machine_speed(const HardwareProfile& profile);

}  // namespace pipesim
