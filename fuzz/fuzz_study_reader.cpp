// libFuzzer target: the learning-study reader (studies/*.yaml), full and --quick. InputError is the expected
// answer to bad input; anything else is a finding. Built only with the executor, which studies train on.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/errors.h"
#include "train/study_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const bool quick : {false, true}) {
    try {
      pipesim::parse_study(text, "fuzz-study.yaml", quick);
    } catch (const pipesim::InputError&) {
    }
  }
  return 0;
}
