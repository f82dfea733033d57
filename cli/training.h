#pragma once
// What the CLI takes from the executor: its commands, its process setup and its GEMM. CMake compiles
// cli/train/training.cpp when the executor is built and cli/no_training.cpp otherwise, so that no other file
// needs to know which.
#include <CLI/CLI.hpp>

#include "calibrate/cpu_calibrate.h"
#include "sim/limits.h"

namespace pipesim {

// execute, validate and train; nothing without the executor.
void add_training_commands(CLI::App& app, const Limits& limits);
// OpenBLAS's kernels for this CPU (may run the program again with OPENBLAS_CORETYPE set) and freed tensors
// kept for reuse (executor/blas.h, executor/allocator.h); nothing without the executor.
void prepare_training_process(char** argv);
// `calibrate --cpu` measures the kernels the executor trains with (its GEMM in three layouts, its
// element-wise kernels, its optimizer steps), on one thread as each of its workers runs them; without the
// executor, the calibrator's own GEMM only.
void use_training_kernels(CpuCalibrationOptions& options);

}  // namespace pipesim
