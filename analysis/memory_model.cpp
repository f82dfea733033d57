#include "analysis/memory_model.h"

#include <algorithm>
#include <cmath>

#include "base/errors.h"

namespace pipesim {
namespace {

// One change of a device's memory: activations become `activation_bytes`, or stage `stage` now holds
// `live_versions` copies of its weights.
struct MemoryChange {
  TimeNs time_ns;
  int stage;  // -1: an activation change
  Bytes activation_bytes;
  int live_versions;
};

}  // namespace

Bytes MemoryReport::peak_bytes() const {
  Bytes peak = 0;
  for (const DeviceMemory& d : devices) peak = std::max(peak, d.peak_bytes);
  return peak;
}

void add_static_memory(DeviceMemory& device, const StageStaticMemory& stage) {
  device.fixed_bytes += stage.gradient_bytes + stage.optimizer_bytes + stage.extra_bytes;
  device.gradient_bytes += stage.gradient_bytes;
  device.optimizer_bytes += stage.optimizer_bytes;
  device.buffer_bytes += stage.extra_bytes;
}

MemoryReport compute_memory(const RunTrace& trace, const DriftReport& drift,
                            const std::vector<StageStaticMemory>& per_stage) {
  const PipelineLayout& layout = trace.layout;
  if (static_cast<int>(per_stage.size()) != layout.stages ||
      static_cast<int>(drift.stages.size()) != layout.stages) {
    throw InputError("memory model: static memory and drift must have one entry per stage of the run");
  }
  MemoryReport report;
  for (int d = 0; d < layout.devices; ++d) {
    DeviceMemory device;
    const std::vector<int> stages = layout.stages_on(d);
    std::vector<MemoryChange> changes;
    for (const MemorySample& s : trace.memory[d]) changes.push_back({s.time_ns, -1, s.activation_bytes, 0});
    std::vector<int> live(layout.stages, 1);
    for (int stage : stages) {
      const StageStaticMemory& m = per_stage[stage];
      add_static_memory(device, m);
      for (const VersionSample& v : drift.stages[stage].versions)
        changes.push_back({v.time_ns, stage, 0, v.live_versions});
      device.weight_versions_max =
          std::max(device.weight_versions_max, drift.stages[stage].weight_versions_max);
    }
    // At one instant the weight versions change first: they follow op ends (a stash dropped at a backward's
    // end, a new version at a step's end), which the engine processes before any op starts.
    std::stable_sort(changes.begin(), changes.end(), [](const MemoryChange& a, const MemoryChange& b) {
      return a.time_ns != b.time_ns ? a.time_ns < b.time_ns : (a.stage >= 0) > (b.stage >= 0);
    });
    Bytes activations = 0;
    auto weights = [&] {
      Bytes total = 0;
      for (int stage : stages) total += per_stage[stage].weight_bytes * live[stage];
      return total;
    };
    device.peak_bytes = -1;
    // The state after every change at one instant is what the device holds then (same-instant semantics).
    for (size_t i = 0; i < changes.size(); ++i) {
      const MemoryChange& c = changes[i];
      if (c.stage < 0) {
        activations = c.activation_bytes;
        // A device runs its ops one after another even when they take 0 ns: what an op allocated before a
        // later op of the same instant freed was held, so every activation state counts towards the peak,
        // with the instant's weights (its version changes sort first).
        const Bytes weight_bytes = weights();
        const Bytes total = weight_bytes + device.fixed_bytes + activations;
        if (total > device.peak_bytes) {
          device.peak_bytes = total;
          device.peak_time_ns = c.time_ns;
          device.peak_weight_bytes = weight_bytes;
          device.peak_activation_bytes = activations;
        }
      } else {
        live[c.stage] = c.live_versions;
      }
      if (i + 1 < changes.size() && changes[i + 1].time_ns == c.time_ns) continue;
      const Bytes weight_bytes = weights();
      const Bytes total = weight_bytes + device.fixed_bytes + activations;
      device.timeline.push_back({c.time_ns, total});
      if (total > device.peak_bytes) {
        device.peak_bytes = total;
        device.peak_time_ns = c.time_ns;
        device.peak_weight_bytes = weight_bytes;
        device.peak_activation_bytes = activations;
      }
    }
    if (device.peak_bytes < 0) {  // nothing ran on it
      device.peak_weight_bytes = weights();
      device.peak_bytes = device.peak_weight_bytes + device.fixed_bytes;
    }
    report.devices.push_back(std::move(device));
  }
  return report;
}

}  // namespace pipesim
