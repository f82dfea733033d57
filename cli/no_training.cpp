// The executor is not built (OpenBLAS or zlib missing): no training commands, no process setup, and
// `calibrate --cpu` measures its own GEMM.
#include "cli/training.h"

namespace pipesim {

void add_training_commands(CLI::App&, const Limits&) {}
void prepare_training_process(char**) {}
void use_training_kernels(CpuCalibrationOptions&) {}

}  // namespace pipesim
