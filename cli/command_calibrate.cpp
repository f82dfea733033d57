// pipesim calibrate --cpu [-o PROFILE] [--quick] [--repeats N]
// pipesim calibrate --fit MEASURED.csv --profile P [-o FITTED.yaml] [--terms gemm,attention,...]
// Measures this machine's CPU like the CUDA calibration measures a GPU, and writes a hardware profile; or
// fits a profile's efficiency and overhead terms to measured times (sweeps/profile_fit.h).
#include <fmt/format.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "base/errors.h"
#include "base/text_file.h"
#include "calibrate/cpu_calibrate.h"
#include "cli/commands.h"
#include "cli/training.h"
#include "io/hardware_profile_reader.h"
#include "sweeps/profile_fit.h"

namespace pipesim {
namespace {

struct CalibrateArgs {
  bool cpu = false;
  bool quick = false;
  int repeats = 0;
  double flush_mib = -1;
  std::string output;
  std::string fit_csv;
  std::string profile;
  std::vector<std::string> terms;
  bool no_cross_validation = false;
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

std::string today_utc() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d", std::gmtime(&now));
  return text;
}

// The profile's text without a `fit:` section (the top-level key and its indented lines, and the comment
// line this command writes above it): a new fit replaces the old one rather than stacking on it.
std::string without_fit_section(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  bool in_fit = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("fit:", 0) == 0) {
      in_fit = true;
      continue;
    }
    if (in_fit && !line.empty() && (line[0] == ' ' || line[0] == '\t')) continue;
    in_fit = false;
    if (line.rfind("# pipesim calibrate --fit:", 0) == 0) continue;
    out += line + "\n";
  }
  return out;
}

std::string yaml_quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

void run_fit(const CalibrateArgs& args, const Limits& limits) {
  if (args.profile.empty()) {
    throw InputError(
        "pipesim calibrate --fit needs --profile: the profile of the hardware the times were "
        "measured on (a name in share/profiles or a path)");
  }
  const std::string profile_path = resolve_profile_path(args.profile);
  const std::string text = read_text_file(profile_path, "hardware profile");
  const HardwareProfile raw = parse_hardware_profile(text, profile_path, ProfileFitUse::kIgnore);
  FitOptions options;
  for (const std::string& t : args.terms) options.terms.push_back(parse_fit_term(t));
  options.cross_validate = !args.no_cross_validation;
  std::string kind;
  const std::vector<FitObservation> observations = load_fit_observations(args.fit_csv, &kind, limits);
  const FitResult result = fit_profile(raw, observations, kind, options,
                                       [](const std::string& line) { std::cerr << "fit: " << line << "\n"; });
  std::cout << render_fit_result(result, profile_path);
  const std::string output = args.output.empty()
                                 ? std::filesystem::path(profile_path).stem().string() + "-fitted.yaml"
                                 : args.output;
  check_output_path(output);
  std::string source = fmt::format(
      "pipesim calibrate --fit {} --profile {} ({}): {} measured {}; mean |error| "
      "{:.1f}% before, {:.1f}% after",
      args.fit_csv, args.profile, today_utc(), result.rows.size(), result.kind, 100 * result.mape_before,
      100 * result.mape_after);
  if (result.mape_cross_validated >= 0) {
    source += fmt::format(", {:.1f}% cross-validated ({})", 100 * result.mape_cross_validated,
                          result.cross_validation);
  }
  ProfileFit fit = result.fit;
  fit.source = source;
  // Only the fitted terms: the others keep the profile's own figures (or the model's defaults).
  std::string section = "fit: {";
  for (FitTerm term : result.terms) {
    switch (term) {
      case FitTerm::kGemmEfficiency:
        section += fmt::format("gemm_efficiency: {:.6g}, ", fit.gemm_efficiency);
        break;
      case FitTerm::kElementwiseEfficiency:
        section += fmt::format("elementwise_efficiency: {:.6g}, ", fit.elementwise_efficiency);
        break;
      case FitTerm::kAttentionEfficiency:
        section += fmt::format("attention_efficiency: {:.6g}, ", fit.attention_efficiency);
        break;
      case FitTerm::kHostOverhead:
        section += fmt::format("host_overhead_us: {:.6g}, ", fit.host_overhead_us);
        break;
    }
  }
  section += "source: " + yaml_quoted(source) + "}\n";
  write_file(output, without_fit_section(text) +
                         "# pipesim calibrate --fit: terms fitted to measured times, applied on top of the "
                         "measurements above\n" +
                         section);
  // Read it back: the fitted profile must predict what the fit printed.
  const HardwareProfile written = load_hardware_profile(output);
  for (size_t i = 0; i < observations.size(); ++i) {
    const double again = observations[i].predict_s(written);
    if (std::abs(again / result.rows[i].after_s - 1) > 1e-3) {
      throw std::logic_error(fmt::format("{}: reads back predicting {} s for {}, the fit said {} s", output,
                                         again, observations[i].label, result.rows[i].after_s));
    }
  }
  std::cout << fmt::format("wrote {}: {} with the fitted terms in its fit: section\n", output, profile_path);
}

void run(const CalibrateArgs& args, const Limits& limits) {
  if (!args.fit_csv.empty()) {
    if (args.cpu) throw InputError("pipesim calibrate: --cpu and --fit are two different commands; give one");
    run_fit(args, limits);
    return;
  }
  if (!args.cpu) {
    throw InputError(
        "pipesim calibrate: give --cpu to measure this CPU, or --fit MEASURED.csv --profile P to fit a "
        "profile "
        "to measured times; a GPU is measured by build/pipesim-gpu-calibrate "
        "(built when nvcc is found; see calibrate/README.md)");
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

void add_calibrate_command(CLI::App& app, const Limits& limits) {
  auto args = std::make_shared<CalibrateArgs>();
  CLI::App* cmd = app.add_subcommand("calibrate", "measure this machine and write a hardware profile");
  cmd->add_flag("--cpu", args->cpu, "measure the CPU (GEMM, memcpy, thread dispatch and handoff)");
  cmd->add_option("-o,--out,--output", args->output, "profile to write (default: cpu-HOSTNAME.yaml)");
  cmd->add_flag("--quick", args->quick, "a tiny grid and few repeats (seconds; for a first look)");
  cmd->add_option("--repeats", args->repeats,
                  "timed runs per measurement (the kernels keep their mean, copy and launch the median)")
      ->check(CLI::PositiveNumber);
  cmd->add_option(
         "--flush-mib", args->flush_mib,
         "MiB written before each timed kernel so that it finds its operands out of the caches (default: "
         "16 x the core's L2; 0: hot loops)")
      ->check(CLI::Range(0.0, 65536.0));
  cmd->add_option(
         "--fit", args->fit_csv,
         "fit --profile's efficiency and overhead terms to the measured times in this CSV: layer times "
         "(calibrate/gpu/torch_layer_times.py) or step times (columns scenario, schedule, "
         "step_time_ms[, set]); writes the profile with a fit: section (-o, default PROFILE-fitted.yaml)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--profile", args->profile, "with --fit: the profile to fit (name or path)");
  cmd->add_option("--terms", args->terms,
                  "with --fit: the terms to fit, of gemm, elementwise, attention, overhead (default: gemm, "
                  "elementwise, attention for layer times; gemm, elementwise, overhead for step times)")
      ->delimiter(',');
  cmd->add_flag("--no-cross-validation", args->no_cross_validation,
                "with --fit: skip the cross-validation fits (each held-out group costs one more fit)");
  cmd->callback([args, &limits] {
    args->argv.clear();
    if (args->flush_mib >= 0) args->argv.push_back(fmt::format("--flush-mib {}", args->flush_mib));
    if (args->quick) args->argv.push_back("--quick");
    if (args->repeats > 0) args->argv.push_back(fmt::format("--repeats {}", args->repeats));
    if (!args->output.empty()) args->argv.push_back("-o " + args->output);
    run(*args, limits);
  });
}

}  // namespace pipesim
