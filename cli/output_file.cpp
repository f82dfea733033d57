#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "cli/commands.h"
#include "sim/errors.h"

namespace pipesim {

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw InputError(fmt::format("{}: cannot open for writing: {}", path, std::strerror(errno)));
  out << text;
  out.close();
  if (!out) throw InputError(fmt::format("{}: write failed", path));
}

}  // namespace pipesim
