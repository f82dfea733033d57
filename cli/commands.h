#pragma once
// Each subcommand registers itself on the CLI11 app; main.cpp lists them.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "calibrate/cpu_calibrate.h"
#include "sim/limits.h"

namespace pipesim {

// `limits`: the --max-* options main.cpp reads (sim/limits.h); each command passes them down to its runs.
void add_run_command(CLI::App& app, const Limits& limits);
void add_schedules_command(CLI::App& app);
void add_costs_command(CLI::App& app, const Limits& limits);
void add_calibrate_command(CLI::App& app, const Limits& limits);
// Where `pipesim calibrate --cpu` writes by default (cpu-HOSTNAME.yaml in the current directory), and so
// where `pipesim validate` looks first.
std::string default_cpu_profile_path();
// Measures this CPU (with the executor's kernels when pipesim has the executor) and writes the profile.
void calibrate_cpu_into(const std::string& path, CpuCalibrationOptions options, const std::string& command);
void add_extrapolate_command(CLI::App& app, const Limits& limits);
void add_fidelity_command(CLI::App& app, const Limits& limits);
void add_check_command(CLI::App& app, const Limits& limits);
void add_export_command(CLI::App& app, const Limits& limits);
void add_import_command(CLI::App& app, const Limits& limits);
// `pipesim import trace` (cli/command_import_trace.cpp), under `import`.
void add_import_trace_command(CLI::App* import, const Limits& limits);
void add_show_command(CLI::App& app, const Limits& limits);
void add_sweep_command(CLI::App& app, const Limits& limits);
void add_plan_command(CLI::App& app, const Limits& limits);
// Executor builds only (cli/train/): cli/training.h registers them.
void add_execute_command(CLI::App& app, const Limits& limits);
void add_validate_command(CLI::App& app, const Limits& limits);
void add_train_command(CLI::App& app, const Limits& limits);

// --allow-unmodelled: a model with features the costs do not represent yet (model.moe, model.fp8, ...) runs
// as its dense stand-in, every header and JSON document listing what the figures leave out
// (api/unmodelled_check.h); without it such a scenario is refused, naming the key.
inline void add_allow_unmodelled_flag(CLI::App* cmd, bool& allow) {
  cmd->add_flag("--allow-unmodelled", allow,
                "price a model whose features pipesim does not model yet (experts, latent attention, sliding "
                "windows, multi-token prediction, FP8) as its dense stand-in, every figure bannered; "
                "refused without it");
}

// Writes text to a file atomically (a temporary file renamed over it; a symlink's target is replaced, the
// link kept), or to standard output for "-"; a device, FIFO or /dev/stdout is written through, never replaced
// (cli/output_file.cpp). Throws InputError naming the file; a failed write leaves an existing file unchanged.
void write_file(const std::string& path, const std::string& text);
// Throws InputError unless `path` could be written: call before the work, so a bad path fails at once.
void check_output_path(const std::string& path);

// A file written piece by piece as work finishes (a sweep's rows), with write_file's guarantee: the pieces go
// to a temporary file beside the target, renamed over it by commit(); destroyed uncommitted, it removes the
// temporary file and leaves an existing target as it was. "-" streams to standard output.
class StreamedOutputFile {
 public:
  explicit StreamedOutputFile(const std::string& path);
  ~StreamedOutputFile();
  StreamedOutputFile(const StreamedOutputFile&) = delete;
  StreamedOutputFile& operator=(const StreamedOutputFile&) = delete;
  void write(const std::string& text);
  void commit();

 private:
  std::string path_;
  std::string temporary_;  // empty when written through (a device, a FIFO, a descriptor)
  std::FILE* file_ = nullptr;
  int slot_ = -1;  // its place among the temporaries removed on a signal
};

}  // namespace pipesim
