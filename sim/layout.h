#pragma once
// Which device holds which (virtual) stage.
#include <vector>

namespace pipesim {

struct PipelineLayout {
  int devices = 0;
  int stages = 0;                    // virtual stages = devices * chunks
  std::vector<int> device_of_stage;  // stage -> device
  std::vector<int> chunk_of_stage;   // stage -> chunk index on its device
  int chunks_per_device = 1;

  // One stage per device.
  static PipelineLayout linear(int devices);
  // Megatron's virtual pipeline: chunk c of device d is stage c*devices + d.
  static PipelineLayout interleaved(int devices, int chunks);

  int device(int stage) const { return device_of_stage[stage]; }
  // The stages a device holds, in chunk order.
  std::vector<int> stages_on(int device) const;
};

}  // namespace pipesim
