// libFuzzer target: Megatron-LM's arguments (the input split at white space, as a launch script's line is)
// read by `pipesim import megatron`, its launch settings, and the scenario the importer writes, which must
// read back. InputError (UsageError for a typo) is the expected answer; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "base/errors.h"
#include "import/import_scenario.h"
#include "import/launch_settings.h"
#include "import/megatron_args.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // The first byte picks pipesim's own options: the data-parallel size, --vocab and --lenient.
  const int data_parallel = 1 + data[0] % 4;
  const bool lenient = (data[0] & 0x10) != 0;
  const bool vocab = (data[0] & 0x20) != 0;
  std::istringstream words(std::string(reinterpret_cast<const char*>(data) + 1, size - 1));
  std::vector<std::string> args;
  for (std::string word; words >> word;) args.push_back(word);
  try {
    pipesim::MegatronImport launch =
        pipesim::read_megatron_args(args, vocab ? std::optional<int>(50257) : std::nullopt, lenient);
    pipesim::ImportSettings settings = pipesim::megatron_launch_settings(launch, data_parallel, {});
    pipesim::scenario_from_import(launch.imported, settings);
  } catch (const pipesim::InputError&) {
  }
  return 0;
}
