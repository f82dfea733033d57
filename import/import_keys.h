#pragma once
// The key table of an importer: every key (Hugging Face config key, Megatron argument, torchtitan
// section.key) the reader looks up or sorts, with what it becomes. The reader consults it for every lookup
// (a lookup the table lacks is a pipesim bug, caught by the tests that run each branch) and sorts the keys it
// does not read by it; `pipesim import KIND --help` and `--keys` print what the table says, so the help, the
// README's listings and the reader cannot disagree.
#include <string>
#include <string_view>
#include <vector>

namespace pipesim {

enum class KeyUse {
  kModel,        // read into the scenario's model: section
  kPipeline,     // read into the pipeline: stages, chunks, microbatches, uneven stages
  kJob,          // read into the parallel: section (tensor, context, data parallelism, ZeRO)
  kUnmodelled,   // read into a model key `run` refuses until it is modelled (model.moe, model.fp8, ...)
  kUnsupported,  // listed as not supported where it is in force (with why)
  kIgnored,      // changes no figure pipesim computes
};

struct ImportKey {
  std::string name;  // as the file writes it; "section.*" any key of a section, "*text*" any key holding text
  KeyUse use = KeyUse::kIgnored;
  std::string what;   // the field it sets, or why it is not supported; "" for an ignored key
  bool flag = false;  // Megatron: an argument that takes no value
};

class ImportKeyTable {
 public:
  ImportKeyTable(std::string importer, std::string prefix, std::vector<ImportKey> keys);

  // The entry whose name (or pattern) matches `name`; nullptr for a key the importer does not know.
  const ImportKey* find(std::string_view name) const;
  // The entry of a key the reader looks up: std::logic_error where the table lacks it (the reader and its
  // table disagree: a pipesim bug).
  const ImportKey& consulted(std::string_view name) const;
  // Every exact (non-pattern) name, for did-you-mean suggestions.
  std::vector<std::string> names() const;
  const std::vector<ImportKey>& keys() const { return keys_; }
  const std::string& importer() const { return importer_; }
  const std::string& prefix() const { return prefix_; }

 private:
  std::string importer_;  // "Hugging Face config.json", ...
  std::string prefix_;    // how a key is written in prose: "--" for Megatron's arguments, "" otherwise
  std::vector<ImportKey> keys_;
};

// One paragraph for the importer's --help: what it reads into the model, the pipeline and the job, which
// keys become refused model keys, what it lists as not supported, how many keys it ignores.
std::string import_support_summary(const ImportKeyTable& table);

// Every key of the table as a Markdown table (key, what pipesim does with it): `pipesim import KIND --keys`.
std::string import_key_listing(const ImportKeyTable& table);

}  // namespace pipesim
