#pragma once
// The V-Half and V-Min schedules of "Pipeline Parallelism with Controllable Memory" (Qi et al., NeurIPS
// 2024), as the authors' scheduler builds them (sail-sg/zero-bubble-pipeline-parallelism, zbv_greedy.py):
// on the V placement, one building block of four ops per device and microbatch (F of chunk 0, F of chunk 1,
// I of chunk 1, I of chunk 0) at fixed slot offsets, repeated every 6 slots; Ws fill the empty slots; then
// the warm-up and the cool-down are pulled earlier, op by op, into free slots that keep the device's peak
// activation count, and the grid is squeezed. The per-device order is the final grid's slot order.
#include "schedules/schedule.h"

namespace pipesim {

enum class VMemory {
  kHalf,  // about half of 1F1B's activations: (N+2)/2 microbatches (integer division)
  kMin,   // about a third: (N+4)/3
};

DeviceActionLists v_building_block_lists(VMemory variant, int devices, int microbatches);

}  // namespace pipesim
