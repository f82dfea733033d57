#pragma once
// A scenario's explicit `costs:` as plain data (cost_models/explicit_costs.h prices a run from it).
#include <vector>

#include "base/units.h"

namespace pipesim {

// Per-device values, as given in the scenario.
struct ExplicitCostTable {
  std::vector<TimeNs> forward_ns;
  std::vector<TimeNs> backward_input_ns;   // I
  std::vector<TimeNs> backward_weight_ns;  // W
  std::vector<TimeNs> optimizer_ns;        // U
  // One slot of a forward overlapped with a full backward (fused F&B, DualPipe); empty: F + B.
  std::vector<TimeNs> overlap_fb_ns;
  std::vector<Bytes> activation_bytes;              // M_B per microbatch
  std::vector<Bytes> weight_grad_activation_bytes;  // M_W per microbatch
  std::vector<Bytes> transfer_bytes;                // one activation message
  std::vector<Bytes> parameter_bytes;               // one copy of the device's weights (0: not modelled)
};

}  // namespace pipesim
