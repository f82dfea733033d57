#include "executor/allocator.h"

#include <malloc.h>

namespace pipesim::executor {

void keep_freed_tensors_for_reuse() {
  // glibc's largest allowed threshold on 64-bit (HEAP_MAX_SIZE / 2); mallopt refuses more.
  constexpr int kMmapThresholdBytes = 32 << 20;  // blocks above this still get their own mapping
  constexpr int kTrimThresholdBytes = 1 << 30;   // free heap top kept before it is given back
  mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes);
  mallopt(M_TRIM_THRESHOLD, kTrimThresholdBytes);
}

}  // namespace pipesim::executor
