// libFuzzer target: the hardware profile reader (share/profiles/*.yaml). InputError is the expected
// answer to bad input; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/errors.h"
#include "io/hardware_profile_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    pipesim::parse_hardware_profile(text, "fuzz-profile.yaml");
  } catch (const pipesim::InputError&) {
  }
  return 0;
}
