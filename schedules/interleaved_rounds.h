#pragma once
// The looped placement's microbatch order shared by interleaved-1f1b and interleaved-zb (PyTorch's
// ScheduleInterleaved1F1B and ScheduleInterleavedZeroBubble): microbatches go through a device's chunks in
// rounds of k = m / (m div N) (k = N when N divides m, Megatron's order), so m must be divisible by m div N.
// Slot s of a device's forward order is (chunk, microbatch); its backward order visits the chunks in reverse.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "base/errors.h"
#include "schedules/schedule.h"

namespace pipesim {

class InterleavedRounds {
 public:
  InterleavedRounds(const PipelineSpec& spec, int chunks)
      : devices_(spec.devices), chunks_(chunks), per_round_(spec.microbatches / rounds(spec)) {}

  // PyTorch's rounds: m div N of them, at least one.
  static int rounds(const PipelineSpec& spec) { return std::max(1, spec.microbatches / spec.devices); }
  static void check(const PipelineSpec& spec, const std::string& label) {
    if (spec.microbatches % rounds(spec) != 0) {
      throw InputError(
          fmt::format("{}: microbatches ({}) must be divisible by m div N = {} (rounds of equal size); e.g. "
                      "a multiple of "
                      "the stages ({}), or fewer than {}",
                      label, spec.microbatches, rounds(spec), spec.devices, 2 * spec.devices));
    }
  }

  int microbatches_per_round() const { return per_round_; }
  // The stage and microbatch of device d's slot s going forward, and of its k-th backward.
  int forward_stage(int device, int slot) const { return chunk_of(slot) * devices_ + device; }
  int backward_stage(int device, int k) const { return (chunks_ - 1 - chunk_of(k)) * devices_ + device; }
  int microbatch(int slot) const { return (slot / (per_round_ * chunks_)) * per_round_ + slot % per_round_; }

 private:
  int chunk_of(int slot) const { return (slot % (per_round_ * chunks_)) / per_round_; }

  int devices_;
  int chunks_;
  int per_round_;
};

}  // namespace pipesim
