// libFuzzer target: a Hugging Face config.json read by `pipesim import hf`, then the scenario the importer
// writes from it, which must read back as a scenario (scenario_from_import checks it and says so otherwise).
// InputError is the expected answer to bad input; anything else (a crash, a sanitizer report, a
// std::logic_error of a key table the reader disagrees with) is a finding. scripts/fuzz.sh runs it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/errors.h"
#include "import/hf_config.h"
#include "import/import_scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const pipesim::ModelImport imported = pipesim::read_hf_config(text, "fuzz.json");
    pipesim::ImportSettings settings;
    settings.name = "fuzz";
    settings.stages = 2;
    settings.microbatches = 4;
    pipesim::scenario_from_import(imported, settings);
  } catch (const pipesim::InputError&) {
  }
  return 0;
}
