#include "sim/layout.h"

namespace pipesim {

PipelineLayout PipelineLayout::linear(int devices) {
  return interleaved(devices, 1);
}

PipelineLayout PipelineLayout::interleaved(int devices, int chunks) {
  PipelineLayout layout;
  layout.devices = devices;
  layout.chunks_per_device = chunks;
  layout.stages = devices * chunks;
  for (int stage = 0; stage < layout.stages; ++stage) {
    layout.device_of_stage.push_back(stage % devices);
    layout.chunk_of_stage.push_back(stage / devices);
  }
  return layout;
}

std::vector<int> PipelineLayout::stages_on(int device) const {
  std::vector<int> result;
  for (int stage = 0; stage < stages; ++stage) {
    if (device_of_stage[stage] == device) result.push_back(stage);
  }
  return result;
}

}  // namespace pipesim
