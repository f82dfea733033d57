#include "report/format.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

namespace pipesim {

// Binary units, as device capacities are stated.
std::string format_bytes(Bytes bytes) {
  constexpr double kKiB = 1024.0, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
  const double b = static_cast<double>(bytes);
  if (b < 10 * kKiB) return fmt::format("{} B", bytes);
  if (b < 10 * kMiB) return fmt::format("{:.2f} KiB", b / kKiB);
  if (b < 10 * kGiB) return fmt::format("{:.2f} MiB", b / kMiB);
  return fmt::format("{:.2f} GiB", b / kGiB);
}

std::string format_rate(double value, int decimals) {
  if (value > 0 && value < 1) return fmt::format("{:.3g}", value);
  return fmt::format("{:.{}f}", value, decimals);
}

namespace {

// Columns on a terminal: UTF-8 continuation bytes take none (τ, Δ are one column each).
size_t text_columns(std::string_view text) {
  return static_cast<size_t>(std::count_if(
      text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

void append_wrapped(std::string_view line, size_t width, size_t indent, std::string& out) {
  if (text_columns(line) <= width) {
    out += line;
    return;
  }
  size_t used = 0;
  bool line_start = true;
  size_t pos = 0;
  while (pos < line.size()) {
    const size_t space = std::min(line.find(' ', pos), line.size());
    const std::string_view word = line.substr(pos, space - pos);
    const size_t word_columns = text_columns(word);
    if (!line_start && used + 1 + word_columns > width) {
      out += '\n';
      out.append(indent, ' ');
      used = indent;
    } else if (!line_start) {
      out += ' ';
      ++used;
    }
    out += word;
    used += word_columns;
    line_start = false;
    pos = space + 1;
  }
}

}  // namespace

std::string wrap_lines(const std::string& text, size_t width, size_t indent) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    append_wrapped(std::string_view(text).substr(start, end - start), width, indent, out);
    if (end < text.size()) out += '\n';
    start = end + 1;
  }
  return out;
}

namespace {

// Numbers line up on the right; names and text on the left.
bool right_aligned(size_t column, const std::string& cell) {
  if (column == 0 || cell.empty()) return false;
  const char c = cell.front();
  return (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '+';
}

// Columns on a terminal: one per UTF-8 code point ("Δ" is two bytes, one column).
size_t display_width(const std::string& text) {
  size_t width = 0;
  for (const unsigned char c : text) width += (c & 0xC0) != 0x80;
  return width;
}

}  // namespace

std::string render_table(const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size(), 0);
  for (size_t c = 0; c < header.size(); ++c) width[c] = display_width(header[c]);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) {
      width[c] = std::max(width[c], display_width(row[c]));
    }
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c > 0) out += "  ";
      out += right_aligned(c, cells[c]) ? fmt::format("{:>{}}", cells[c], width[c])
                                        : fmt::format("{:<{}}", cells[c], width[c]);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(header);
  size_t total = 0;
  for (size_t w : width) total += w;
  out += std::string(total + 2 * (width.size() - 1), '-') + "\n";
  for (const auto& row : rows) out += line(row);
  return out;
}

std::string unmodelled_banner(const std::vector<std::string>& unmodelled) {
  if (unmodelled.empty()) return "";
  std::string out = "UNMODELLED (--allow-unmodelled): every figure below prices a stand-in without\n";
  for (const std::string& line : unmodelled) out += "  " + line + "\n";
  return out;
}

}  // namespace pipesim
