#include "sim/layout.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/errors.h"

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

PipelineLayout PipelineLayout::v_shape(int devices) {
  return wave(devices, 2);
}

PipelineLayout PipelineLayout::wave(int devices, int chunks) {
  std::vector<int> device_of_stage;
  for (int chunk = 0; chunk < chunks; ++chunk) {
    for (int i = 0; i < devices; ++i) device_of_stage.push_back(chunk % 2 == 0 ? i : devices - 1 - i);
  }
  return explicit_placement(devices, device_of_stage);
}

PipelineLayout PipelineLayout::bidirectional(int devices) {
  if (devices < 2) {
    throw InputError(fmt::format("bidirectional placement: {} devices; expected at least 2", devices));
  }
  PipelineLayout layout = v_shape(devices);
  layout.pipelines = 2;
  return layout;
}

PipelineLayout PipelineLayout::first_pipeline() const {
  if (pipelines == 1) return *this;
  std::vector<int> first(device_of_stage.begin(), device_of_stage.begin() + stages_per_pipeline());
  return explicit_placement(devices, first);
}

PipelineLayout PipelineLayout::explicit_placement(int devices, const std::vector<int>& device_of_stage) {
  if (devices < 1) throw InputError(fmt::format("placement: {} devices; expected at least 1", devices));
  PipelineLayout layout;
  layout.devices = devices;
  layout.stages = static_cast<int>(device_of_stage.size());
  layout.device_of_stage = device_of_stage;
  std::vector<int> held(devices, 0);
  for (int stage = 0; stage < layout.stages; ++stage) {
    const int d = device_of_stage[stage];
    if (d < 0 || d >= devices) {
      throw InputError(
          fmt::format("placement: stage {} is on device {}; devices are 1..{}", stage + 1, d + 1, devices));
    }
    layout.chunk_of_stage.push_back(held[d]++);
  }
  for (int d = 0; d < devices; ++d) {
    if (held[d] == 0) throw InputError(fmt::format("placement: device {} holds no stage", d + 1));
    layout.chunks_per_device = std::max(layout.chunks_per_device, held[d]);
  }
  return layout;
}

std::string PipelineLayout::placement_name() const {
  if (pipelines == 2 && device_of_stage == bidirectional(devices).device_of_stage) return "bidirectional";
  const auto same = [&](const PipelineLayout& other) { return other.device_of_stage == device_of_stage; };
  if (stages % devices == 0) {
    if (same(interleaved(devices, stages / devices))) return "loop";
    if (stages / devices == 2 && same(v_shape(devices))) return "v";
    if (same(wave(devices, stages / devices))) return "wave";
  }
  return "explicit";
}

std::vector<int> PipelineLayout::stages_on(int device) const {
  std::vector<int> result;
  for (int stage = 0; stage < stages; ++stage) {
    if (device_of_stage[stage] == device) result.push_back(stage);
  }
  return result;
}

}  // namespace pipesim
