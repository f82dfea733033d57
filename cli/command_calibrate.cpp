// pipesim calibrate --cpu [-o PROFILE] [--quick] [--repeats N]
// Measures this machine's CPU like the CUDA calibration measures a GPU, and writes a hardware profile.
#include <fmt/format.h>
#include <unistd.h>

#include <iostream>

#include "base/errors.h"
#include "cli/commands.h"
#include "cli/training.h"
#include "gpu_calibration/cpu_calibrate.h"
#include "io/hardware_profile_reader.h"

namespace pipesim {
namespace {

struct CalibrateArgs {
  bool cpu = false;
  bool quick = false;
  int repeats = 0;
  double flush_mib = -1;
  std::string output;
  std::vector<std::string> argv;
};

}  // namespace

std::string default_cpu_profile_path() {
  char host[256] = "host";
  gethostname(host, sizeof host - 1);
  std::string name;
  for (const char* c = host; *c; ++c) name += std::isalnum(static_cast<unsigned char>(*c)) ? *c : '-';
  return fmt::format("cpu-{}.yaml", name);
}

namespace {

void run(const CalibrateArgs& args) {
  if (!args.cpu) {
    throw InputError(
        "pipesim calibrate: give --cpu to measure this CPU; a GPU is measured by build/pipesim-gpu-calibrate "
        "(built when nvcc is found; see gpu_calibration/README.md)");
  }
  CpuCalibrationOptions options = args.quick ? quick_cpu_calibration() : CpuCalibrationOptions{};
  if (args.repeats > 0) options.repeats = args.repeats;
  if (args.flush_mib >= 0) options.flush_bytes = args.flush_mib * (1 << 20);
  std::string command = "pipesim calibrate --cpu";
  for (const std::string& a : args.argv) command += " " + a;
  const std::string path = args.output.empty() ? default_cpu_profile_path() : args.output;
  check_output_path(path);
  calibrate_cpu_into(path, options, command);
  // Read it back: what was written is what pipesim will use.
  const HardwareProfile profile = load_hardware_profile(path);
  const GemmTable& gemm = profile.gemm_table("fp32");
  const double largest = gemm.m_sizes().back();
  std::cout << fmt::format(
      "wrote {} ({})\n  memcpy bandwidth {:.2f} GB/s (read + write), launch overhead {:.2f} us, "
      "link {:.2f} GB/s + {:.2f} us\n  fp32 GEMM: {:.2f} GFLOP/s at {}^3, {:.2f} GFLOP/s at {}^3\n",
      path, profile.device_name, profile.memory_bandwidth_gb_per_s, profile.launch_overhead_us,
      profile.link->bandwidth_gb_per_s, profile.link->latency_us,
      1e3 * gemm.tflops_at(largest, largest, largest), largest,
      1e3 * gemm.tflops_at(gemm.m_sizes()[0], gemm.m_sizes()[0], gemm.m_sizes()[0]), gemm.m_sizes()[0]);
}

}  // namespace

void calibrate_cpu_into(const std::string& path, CpuCalibrationOptions options, const std::string& command) {
  use_training_kernels(options);
  options.command = command;
  const pipesim_profile::ProfileData data =
      calibrate_cpu(options, [](const std::string& step) { std::cerr << "calibrate: " << step << "\n"; });
  write_file(path, pipesim_profile::profile_yaml(data));
}

void add_calibrate_command(CLI::App& app) {
  auto args = std::make_shared<CalibrateArgs>();
  CLI::App* cmd = app.add_subcommand("calibrate", "measure this machine and write a hardware profile");
  cmd->add_flag("--cpu", args->cpu, "measure the CPU (GEMM, memcpy, thread dispatch and handoff)");
  cmd->add_option("-o,--out,--output", args->output, "profile to write (default: cpu-HOSTNAME.yaml)");
  cmd->add_flag("--quick", args->quick, "a tiny grid and few repeats (seconds; for a first look)");
  cmd->add_option("--repeats", args->repeats, "timed runs per measurement (median kept)")
      ->check(CLI::PositiveNumber);
  cmd->add_option(
         "--flush-mib", args->flush_mib,
         "MiB written before each timed kernel so that it finds its operands out of the caches (default: "
         "16 x the core's L2; 0: hot loops)")
      ->check(CLI::Range(0.0, 65536.0));
  cmd->callback([args] {
    args->argv.clear();
    if (args->flush_mib >= 0) args->argv.push_back(fmt::format("--flush-mib {}", args->flush_mib));
    if (args->quick) args->argv.push_back("--quick");
    if (args->repeats > 0) args->argv.push_back(fmt::format("--repeats {}", args->repeats));
    if (!args->output.empty()) args->argv.push_back("-o " + args->output);
    run(*args);
  });
}

}  // namespace pipesim
