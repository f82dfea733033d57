#include "base/text_file.h"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/errors.h"

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
  std::error_code error;
  // A directory opens as a stream that reads nothing: say what it is rather than parse an empty document.
  if (std::filesystem::is_directory(path, error))
    throw InputError(fmt::format("{}: cannot read the {}: it is a directory", path, what));
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError(fmt::format("{}: cannot open the {}: {}", path, what, std::strerror(errno)));
  // Read in blocks up to a bound, so that /dev/zero or a mistaken multi-gigabyte file fails fast.
  std::string text;
  std::array<char, 1 << 16> block{};
  while (file) {
    file.read(block.data(), block.size());
    text.append(block.data(), static_cast<std::size_t>(file.gcount()));
    if (text.size() > kMaxTextFileBytes) {
      throw InputError(
          fmt::format("{}: the {} is larger than {} MiB, the most pipesim reads from one input file", path,
                      what, kMaxTextFileBytes >> 20));
    }
  }
  if (file.bad())
    throw InputError(fmt::format("{}: cannot read the {}: {}", path, what, std::strerror(errno)));
  return normalize_text(std::move(text));
}

bool is_valid_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    size_t length = 0;
    char32_t code = 0;
    char32_t smallest = 0;  // below this the encoding is overlong
    if (lead < 0x80) {
      ++i;
      continue;
    } else if ((lead & 0xE0) == 0xC0) {
      length = 2, code = lead & 0x1F, smallest = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
      length = 3, code = lead & 0x0F, smallest = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
      length = 4, code = lead & 0x07, smallest = 0x10000;
    } else {
      return false;
    }
    if (i + length > text.size()) return false;
    for (size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code = (code << 6) | (next & 0x3F);
    }
    if (code < smallest || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    i += length;
  }
  return true;
}

}  // namespace pipesim
