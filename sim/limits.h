#pragma once
// The ceilings a command puts on the work it does (README.md, "Limits"): a value made by whoever starts the
// work (the command line's --max-* options, the Python module's setters) and passed down to every check, so
// that two callers in one process can run under different ceilings.

namespace pipesim {

struct Limits {
  // Bytes one run may hold: trace, task graph, engine state (--max-memory-gb; 4 GB).
  double memory_bytes = 4e9;
  // Ops one run may simulate (its time: 5-20 M ops/s; --max-ops).
  double ops = 1e8;
  // Ops one command may simulate over all its runs (run, sweep, check, plan; --max-total-ops).
  double total_ops = 1e10;
  // FLOPs the executor may compute for one run or study run (--max-tflop; 100 TFLOP, about an hour at a
  // few tens of GFLOP/s).
  double flops = 1e14;
};

}  // namespace pipesim
