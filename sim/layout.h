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
  // Copies of the model run side by side (DualPipe, Chimera: 2). The stages split into `pipelines` runs of
  // consecutive stages, each a whole model of stages_per_pipeline() pieces; microbatch mb flows through
  // pipeline mb % pipelines only, and the copies' weights are kept equal by an all-reduce before each step.
  int pipelines = 1;

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
  // Two copies of a linear pipeline over the same devices in opposite directions: device d holds stage d of
  // the first copy and stage N-1-d of the second (DualPipe, Chimera). N >= 2.
  static PipelineLayout bidirectional(int devices);
  // Any placement: device_of_stage[s] for every stage. Each device must hold at least one stage; a device's
  // chunks are its stages in increasing order. Throws InputError naming the first problem.
  static PipelineLayout explicit_placement(int devices, const std::vector<int>& device_of_stage);

  int device(int stage) const { return device_of_stage[stage]; }
  int stages_per_pipeline() const { return stages / pipelines; }
  int pipeline_of_stage(int stage) const { return stage / stages_per_pipeline(); }
  int pipeline_of_microbatch(int microbatch) const { return microbatch % pipelines; }
  // Which piece of the model a stage runs: its position in its pipeline.
  int model_stage(int stage) const { return stage % stages_per_pipeline(); }
  // A stage's ends of its own pipeline: where a microbatch enters (no activation to wait for) and where its
  // loss is (no gradient to wait for).
  // The engine asks these for every op: one pipeline (nearly every run) needs no division.
  bool is_first_stage(int stage) const { return pipelines == 1 ? stage == 0 : model_stage(stage) == 0; }
  bool is_last_stage(int stage) const {
    return pipelines == 1 ? stage == stages - 1 : model_stage(stage) == stages_per_pipeline() - 1;
  }
  // Whether a microbatch has ops on a stage (every stage of its own pipeline, no other).
  bool visits(int stage, int microbatch) const {
    return pipelines == 1 || pipeline_of_stage(stage) == pipeline_of_microbatch(microbatch);
  }
  // The first copy of the model alone: the layout cost models and static memory are worked out on.
  PipelineLayout first_pipeline() const;
  // Which placement this is: "loop" (interleaved, linear included), "v", "wave", "bidirectional" or
  // "explicit".
  std::string placement_name() const;
  // The stages a device holds, in chunk order.
  std::vector<int> stages_on(int device) const;
};

}  // namespace pipesim
