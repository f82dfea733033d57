// pipesim import hf CONFIG.json [-o FILE] [--seq-len S] [--profile P] [--stages N] [-m M] [--global-batch B]
//   [--name NAME]
// pipesim import torchtitan JOB.toml [--hf-config config.json] [-o FILE] [--profile P] [--name NAME]
// pipesim import megatron [-o FILE] [--data-parallel D] [--vocab V] [--profile P] [--name NAME] -- ARGS...
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "base/errors.h"
#include "base/text_file.h"
#include "cli/commands.h"
#include "import/hf_config.h"
#include "import/import_scenario.h"
#include "import/launch_settings.h"
#include "import/megatron_args.h"
#include "import/torchtitan_config.h"
#include "report/format.h"

namespace pipesim {
namespace {

struct ImportHfArgs {
  std::string config_path;
  std::string output = "-";
  int seq_len = 0;
  ImportSettings settings;
};

// The scenario's name unless given: a model repository's (the file's directory, e.g. Meta-Llama-3-8B; in
// the Hugging Face cache, models--ORG--NAME/snapshots/HASH/config.json, NAME), or the file's own stem when it
// is not called config.json (qwen3-32b.config.json: qwen3-32b).
std::string default_name(const std::string& config_path) {
  namespace fs = std::filesystem;
  const fs::path path = fs::absolute(config_path);
  std::string name = path.parent_path().filename().string();
  const fs::path snapshots = path.parent_path().parent_path();
  const std::string repository = snapshots.parent_path().filename().string();
  if (snapshots.filename() == "snapshots" && repository.rfind("models--", 0) == 0) {
    name = repository.substr(repository.rfind("--") + 2);
  } else if (path.filename() != "config.json") {
    name = path.stem().string();
    if (name.size() > 7 && name.ends_with(".config")) name.resize(name.size() - 7);
  }
  if (name.empty()) name = "imported";
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') c = '-';
  }
  return name;
}

// What the importer reads, from the reader's own key table, under its --help; --keys prints the same as a
// Markdown list, then every key of the table, and exits (docs/import-keys.md is those three outputs).
void add_key_table(CLI::App* cmd, const ImportKeyTable& table) {
  cmd->footer(wrap_lines(import_support_summary(table), kReportColumns, 0));
  cmd->add_flag_callback(
      "--keys",
      [&table] {
        std::string summary = "- " + import_support_summary(table);
        for (size_t at = summary.find('\n'); at != std::string::npos; at = summary.find('\n', at + 1))
          summary.insert(at + 1, "- ");
        std::cout << wrap_lines(summary, kReportColumns, 2) << "\n\n" << import_key_listing(table);
        throw CLI::Success();
      },
      "print every key the importer knows and what it becomes (a Markdown table), then exit");
}

// The options every importer shares: the file to write, the hardware profile, the scenario's name.
void add_shared_options(CLI::App* cmd, std::string& output, ImportSettings& settings,
                        const char* name_default) {
  cmd->add_option("-o,--output", output, "the scenario file to write (default: standard output)");
  cmd->add_option("--profile", settings.profile, "hardware profile: a shipped name or a path")
      ->capture_default_str();
  cmd->add_option("--name", settings.name, fmt::format("the scenario's name (default: {})", name_default))
      ->check([](const std::string& name) {
        return name.empty() ? std::string("an empty name") : std::string();
      });
  cmd->add_option("--reserve-gb", settings.reserve_gb,
                  "GiB of each GPU a run cannot use (CUDA context, NCCL buffers, allocator fragmentation), "
                  "written as hardware.reserve_gb; 0: none")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
}

// What the figures cannot account for, said on standard error as well as in the scenario's comments.
void report_gaps(const ModelImport& imported) {
  for (const UnmodelledFeature& f : unmodelled_in_force(imported.model.unmodelled, imported.model.seq_len)) {
    std::cerr << "not modelled yet (run refuses it without --allow-unmodelled): " << f.key << ": " << f.what
              << ", priced as " << f.stand_in << "\n";
  }
  for (const std::string& line : imported.unsupported) std::cerr << "not supported: " << line << "\n";
  for (const std::string& line : imported.unknown) std::cerr << "unknown: " << line << "\n";
}

struct ImportMegatronArgs {
  std::vector<std::string> megatron_args;
  std::string output = "-";
  int data_parallel = 1;
  int vocab = 0;
  bool lenient = false;
  ImportSettings settings;
};

void add_import_megatron(CLI::App* import) {
  auto args = std::make_shared<ImportMegatronArgs>();
  CLI::App* megatron = import->add_subcommand(
      "megatron",
      "Megatron-LM's arguments (after --) as a scenario: the model, the pipeline and the job (what each "
      "argument becomes is below; --keys lists them all)");
  megatron->add_option("ARGS", args->megatron_args, "pretrain_gpt.py's arguments, after --")->required();
  add_key_table(megatron, megatron_argument_keys());
  add_shared_options(megatron, args->output, args->settings, "megatron-gpt");
  megatron
      ->add_option("--data-parallel", args->data_parallel,
                   "data-parallel replicas of the launch (world size / (tensor x pipeline)): the "
                   "global batch is split over them")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  megatron->add_flag(
      "--lenient", args->lenient,
      "list an unknown argument close to a known one as unknown instead of refusing it as a typo "
      "(Megatron's argparse refuses both)");
  megatron
      ->add_option("--vocab", args->vocab,
                   "the tokenizer's vocabulary when the arguments give no --vocab-size")
      ->check(CLI::Range(1, 1 << 24));
  megatron->callback([args] {
    MegatronImport m = read_megatron_args(
        args->megatron_args, args->vocab > 0 ? std::optional<int>(args->vocab) : std::nullopt, args->lenient);
    ImportSettings settings = megatron_launch_settings(m, args->data_parallel, args->settings);
    std::string joined;
    for (const std::string& a : args->megatron_args) joined += " " + a;
    settings.origin = fmt::format("pipesim import megatron --data-parallel {} --profile {} --{}",
                                  args->data_parallel, settings.profile, joined);
    const std::string scenario = scenario_from_import(m.imported, settings);
    write_file(args->output, scenario);
    report_gaps(m.imported);
  });
}

struct ImportTorchtitanArgs {
  std::string job_path;
  std::string hf_config;
  std::string output = "-";
  ImportSettings settings;
};

void add_import_torchtitan(CLI::App* import) {
  auto args = std::make_shared<ImportTorchtitanArgs>();
  CLI::App* titan = import->add_subcommand(
      "torchtitan",
      "a torchtitan job file (TOML) as a scenario: the model (its llama3 flavor, or --hf-config), the "
      "pipeline and the job (what each key becomes is below; --keys lists them all)");
  titan->add_option("JOB", args->job_path, "the job's .toml file")->required();
  add_key_table(titan, torchtitan_keys());
  titan->add_option(
      "--hf-config", args->hf_config,
      "the model's Hugging Face config.json, for a model that is not one of torchtitan's llama3 "
      "flavors");
  add_shared_options(titan, args->output, args->settings, "the job file's name");
  titan->callback([args] {
    std::optional<ModelImport> model;
    if (!args->hf_config.empty())
      model = read_hf_config(read_text_file(args->hf_config, "Hugging Face config"), args->hf_config);
    const TorchtitanImport t =
        read_torchtitan_config(read_text_file(args->job_path, "torchtitan job file"), args->job_path, model);
    ImportSettings settings = torchtitan_launch_settings(t, args->settings);
    if (settings.name.empty()) settings.name = std::filesystem::path(args->job_path).stem().string();
    settings.origin =
        fmt::format("pipesim import torchtitan {}{} --profile {}", args->job_path,
                    args->hf_config.empty() ? "" : " --hf-config " + args->hf_config, settings.profile);
    write_file(args->output, scenario_from_import(t.imported, settings));
    report_gaps(t.imported);
  });
}

}  // namespace

void add_import_command(CLI::App& app, const Limits& limits) {
  CLI::App* import = app.add_subcommand(
      "import",
      "write a scenario from another tool's description of the model: hf (config.json), megatron "
      "(its arguments), torchtitan (its job file), trace (a PyTorch pipelining run's profile)");
  import->require_subcommand(1);
  add_import_trace_command(import, limits);
  auto args = std::make_shared<ImportHfArgs>();
  CLI::App* hf = import->add_subcommand(
      "hf",
      "a Hugging Face config.json as the scenario's model: section, with the hardware and pipeline given "
      "here (what each key becomes is below; --keys lists them all)");
  hf->add_option("CONFIG", args->config_path, "the model's config.json")->required();
  add_key_table(hf, hf_config_keys());
  add_shared_options(hf, args->output, args->settings,
                     "the config's directory, the model's in a Hugging Face cache, or the file's stem");
  hf->add_option("--seq-len", args->seq_len,
                 fmt::format("tokens per sequence in training (default: {}, or the model's longest context "
                             "max_position_embeddings where that is shorter)",
                             kDefaultImportSeqLen))
      ->check(CLI::Range(1, 1 << 24));
  hf->add_option("--stages,-N", args->settings.stages, "pipeline stages (devices)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  hf->add_option("--microbatches,-m", args->settings.microbatches, "microbatches per batch")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  hf->add_option("--global-batch", args->settings.global_batch,
                 "sequences per optimizer step (default: one per microbatch)")
      ->check(CLI::Range(1, 1 << 24));
  hf->callback([args] {
    const std::string text = read_text_file(args->config_path, "Hugging Face config");
    const ModelImport imported = read_hf_config(
        text, args->config_path, args->seq_len > 0 ? std::optional<int>(args->seq_len) : std::nullopt);
    ImportSettings settings = args->settings;
    if (settings.name.empty()) settings.name = default_name(args->config_path);
    settings.origin =
        fmt::format("pipesim import hf {}{} --profile {} --stages {} -m {}{} --name {}", args->config_path,
                    args->seq_len > 0 ? fmt::format(" --seq-len {}", args->seq_len) : "", settings.profile,
                    settings.stages, settings.microbatches,
                    settings.global_batch > 0 ? fmt::format(" --global-batch {}", settings.global_batch) : "",
                    settings.name);
    const std::string scenario = scenario_from_import(imported, settings);
    write_file(args->output, scenario);
    if (args->output != "-") {
      std::cerr << fmt::format(
          "wrote {}: {} layers, hidden {}, {} heads{}, {}; {} key(s) not supported, {} "
          "unknown (listed in its comments)\n",
          args->output, imported.model.layers, imported.model.hidden, imported.model.heads,
          imported.model.kv_heads > 0 ? fmt::format(" ({} kv)", imported.model.kv_heads) : "",
          imported.model.mlp == MlpKind::kSwiglu ? "gated MLP" : "GELU MLP", imported.unsupported.size(),
          imported.unknown.size());
    }
    report_gaps(imported);
  });
  add_import_megatron(import);
  add_import_torchtitan(import);
}

}  // namespace pipesim
