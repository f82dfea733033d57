// pipesim import hf CONFIG.json [-o FILE] [--seq-len S] [--profile P] [--stages N] [-m M] [--global-batch B]
//   [--name NAME]
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "api/import_scenario.h"
#include "base/text_file.h"
#include "cli/commands.h"

namespace pipesim {
namespace {

struct ImportHfArgs {
  std::string config_path;
  std::string output = "-";
  int seq_len = 0;
  ImportSettings settings;
};

// The scenario's name: the file's directory (a model repository's name, e.g. Meta-Llama-3-8B) unless given.
std::string default_name(const std::string& config_path) {
  namespace fs = std::filesystem;
  std::string name = fs::absolute(config_path).parent_path().filename().string();
  if (name.empty()) name = "imported";
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') c = '-';
  }
  return name;
}

}  // namespace

void add_import_command(CLI::App& app) {
  CLI::App* import = app.add_subcommand(
      "import", "write a scenario from another tool's description of the model (see pipesim import hf --help)");
  import->require_subcommand(1);
  auto args = std::make_shared<ImportHfArgs>();
  CLI::App* hf = import->add_subcommand(
      "hf", "a Hugging Face config.json as the scenario's model: section, with the hardware and pipeline "
            "given here; what the file has that pipesim does not model is listed in the scenario's comments");
  hf->add_option("CONFIG", args->config_path, "the model's config.json")->required();
  hf->add_option("-o,--output", args->output, "the scenario file to write (default: standard output)");
  hf->add_option("--seq-len", args->seq_len,
                 "tokens per sequence in training (default: the model's longest context, "
                 "max_position_embeddings)")
      ->check(CLI::Range(1, 1 << 24));
  hf->add_option("--profile", args->settings.profile, "hardware profile: a shipped name or a path")
      ->capture_default_str();
  hf->add_option("--stages,-N", args->settings.stages, "pipeline stages (devices)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  hf->add_option("--microbatches,-m", args->settings.microbatches, "microbatches per batch")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  hf->add_option("--global-batch", args->settings.global_batch,
                 "sequences per optimizer step (default: one per microbatch)")
      ->check(CLI::Range(1, 1 << 24));
  hf->add_option("--name", args->settings.name, "the scenario's name (default: the config's directory)");
  hf->callback([args] {
    const std::string text = read_text_file(args->config_path, "Hugging Face config");
    const HfModelImport imported =
        read_hf_config(text, args->config_path,
                       args->seq_len > 0 ? std::optional<int>(args->seq_len) : std::nullopt);
    ImportSettings settings = args->settings;
    if (settings.name.empty()) settings.name = default_name(args->config_path);
    settings.origin = fmt::format("pipesim import hf {}{} --profile {} --stages {} -m {}{} --name {}",
                                  args->config_path,
                                  args->seq_len > 0 ? fmt::format(" --seq-len {}", args->seq_len) : "",
                                  settings.profile, settings.stages, settings.microbatches,
                                  settings.global_batch > 0 ? fmt::format(" --global-batch {}", settings.global_batch)
                                                            : "",
                                  settings.name);
    const std::string scenario = scenario_from_hf(imported, settings);
    write_file(args->output, scenario);
    if (args->output != "-") {
      std::cerr << fmt::format("wrote {}: {} layers, hidden {}, {} heads{}, {}; {} key(s) not supported, {} "
                               "unknown (listed in its comments)\n",
                               args->output, imported.model.layers, imported.model.hidden, imported.model.heads,
                               imported.model.kv_heads > 0 ? fmt::format(" ({} kv)", imported.model.kv_heads)
                                                           : "",
                               imported.model.mlp == MlpKind::kSwiglu ? "gated MLP" : "GELU MLP",
                               imported.unsupported.size(), imported.unknown.size());
    }
    for (const std::string& line : imported.unsupported) std::cerr << "not supported: " << line << "\n";
  });
}

}  // namespace pipesim
