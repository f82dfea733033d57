#include "sim/text_file.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "sim/errors.h"

namespace pipesim {

std::string normalize_text(std::string text) {
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);
  if (text.find('\r') == std::string::npos) return text;
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\r') {
      out.push_back(text[i]);
    } else if (i + 1 >= text.size() || text[i + 1] != '\n') {
      out.push_back('\n');  // a lone CR ends a line; a CR before LF is dropped
    }
  }
  return out;
}

std::string read_text_file(const std::string& path, const std::string& what) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError(fmt::format("{}: cannot open the {}: {}", path, what, std::strerror(errno)));
  std::stringstream text;
  text << file.rdbuf();
  if (file.bad()) throw InputError(fmt::format("{}: cannot read the {}", path, what));
  return normalize_text(text.str());
}

}  // namespace pipesim
