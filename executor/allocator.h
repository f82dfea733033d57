#pragma once
// Training allocates and frees the same large tensors on every op (activations, gradients, GEMM outputs of
// hundreds of KB). glibc serves blocks above its mmap threshold with fresh pages and returns them on free, so
// each op paid page faults and the kernel's zeroing: 55 % of a real run's time at width 256 (perf, 1F1B,
// 2026-12-02), where the GEMMs were 13 %. Raising the mmap and trim thresholds keeps freed blocks in the heap
// for the next op: GPipe at width 256, N = 2, 4 batches, went from 722 to about 360 ms.
namespace pipesim::executor {

// Process-wide (mallopt); call before training. Harmless to call again.
void keep_freed_tensors_for_reuse();

}  // namespace pipesim::executor
