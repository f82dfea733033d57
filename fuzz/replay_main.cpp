// Replays inputs through a fuzz target without libFuzzer, so that every build (gcc Release included) runs the
// fuzz regressions as a ctest: each argument is a file or a directory of files, each file one input. A crash,
// a sanitizer report or an exception the target lets through fails the run, naming the input.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <set>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

int replay(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in && !in.eof()) {
    std::cerr << file.string() << ": cannot read\n";
    return 1;
  }
  try {
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  } catch (const std::exception& e) {
    std::cerr << file.string() << ": the target let an exception through: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int failures = 0;
  int inputs = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg = argv[i];
    std::set<std::filesystem::path> files;  // sorted: the same order on every machine
    if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::directory_iterator(arg)) {
        if (entry.is_regular_file()) files.insert(entry.path());
      }
    } else {
      files.insert(arg);
    }
    for (const std::filesystem::path& file : files) {
      ++inputs;
      failures += replay(file);
    }
  }
  std::cout << inputs << " inputs replayed, " << failures << " failed\n";
  return failures == 0 && inputs > 0 ? 0 : 1;
}
