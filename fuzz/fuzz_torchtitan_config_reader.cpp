// libFuzzer target: a torchtitan job file (TOML) read by `pipesim import torchtitan`, its launch settings,
// and the scenario the importer writes, which must read back. InputError is the expected answer; anything
// else is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/errors.h"
#include "import/import_scenario.h"
#include "import/launch_settings.h"
#include "import/torchtitan_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const pipesim::TorchtitanImport job = pipesim::read_torchtitan_config(text, "fuzz.toml");
    pipesim::ImportSettings settings = pipesim::torchtitan_launch_settings(job, {});
    settings.name = "fuzz";
    pipesim::scenario_from_import(job.imported, settings);
  } catch (const pipesim::InputError&) {
  }
  return 0;
}
