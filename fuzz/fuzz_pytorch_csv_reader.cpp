// libFuzzer target: the PyTorch CSV schedule reader with its checks (ops per microbatch, index bounds,
// deadlock). InputError is the expected answer to bad input; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/errors.h"
#include "schedules/pytorch_csv.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const pipesim::PytorchCsvSchedule csv = pipesim::parse_pytorch_csv(text, "fuzz.csv");
    // What the reader accepts, the writer writes back and the reader accepts again, unchanged.
    const pipesim::PytorchCsvSchedule again =
        pipesim::parse_pytorch_csv(pipesim::format_pytorch_csv(csv.actions), "fuzz-again.csv");
    if (again.actions != csv.actions) __builtin_trap();
  } catch (const pipesim::InputError&) {
  }
  return 0;
}
