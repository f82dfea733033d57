#pragma once
// Which device holds which (virtual) stage.
#include <string>
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
  // Megatron's virtual pipeline ("loop"): chunk c of device d is stage c*devices + d.
  static PipelineLayout interleaved(int devices, int chunks);
  // "v": device d holds stages d and 2*devices-1-d, so the last device holds the middle two stages and the
  // first device both ends (ZB-V, DualPipeV).
  static PipelineLayout v_shape(int devices);
  // "wave": chunks zig-zag over the devices, down on even chunks and back up on odd ones (v_shape is 2
  // chunks).
  static PipelineLayout wave(int devices, int chunks);
  // Any placement: device_of_stage[s] for every stage. Each device must hold at least one stage; a device's
  // chunks are its stages in increasing order. Throws InputError naming the first problem.
  static PipelineLayout explicit_placement(int devices, const std::vector<int>& device_of_stage);

  int device(int stage) const { return device_of_stage[stage]; }
  // Which placement this is: "loop" (interleaved, linear included), "v", "wave" or "explicit".
  std::string placement_name() const;
  // The stages a device holds, in chunk order.
  std::vector<int> stages_on(int device) const;
};

}  // namespace pipesim
