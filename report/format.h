#pragma once
// Small text helpers for reports: fixed-width tables and human units.
#include <cstddef>
#include <string>
#include <vector>

#include "base/units.h"

namespace pipesim {

// "512 B", "3.25 GB" (decimal units, as the papers report memory).
std::string format_bytes(Bytes bytes);
// A rate with `decimals` decimals, or three significant digits below 1 where decimals would round it away
// (0.00636 samples/s, not 0.01).
std::string format_rate(double value, int decimals);

// The terminal width every line of a report fits in.
inline constexpr size_t kReportColumns = 120;
// Each line of `text` wider than `width` columns (UTF-8 characters) broken at spaces, its continuation lines
// indented by `indent` spaces; a word wider than the line stays whole. Shorter lines are kept as they are.
std::string wrap_lines(const std::string& text, size_t width = kReportColumns, size_t indent = 2);

// Right-aligns numeric cells, left-aligns text and the first column; a rule under the header.
std::string render_table(const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows);

// The banner above figures that price a stand-in for a model pipesim does not fully describe
// (--allow-unmodelled), one feature a line: "" when `unmodelled` is empty.
std::string unmodelled_banner(const std::vector<std::string>& unmodelled);

}  // namespace pipesim
