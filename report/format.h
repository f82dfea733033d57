#pragma once
// Small text helpers for reports: fixed-width tables and human units.
#include <string>
#include <vector>

#include "base/units.h"

namespace pipesim {

// "512 B", "3.25 GB" (decimal units, as the papers report memory).
std::string format_bytes(Bytes bytes);
// A rate with `decimals` decimals, or three significant digits below 1 where decimals would round it away
// (0.00636 samples/s, not 0.01).
std::string format_rate(double value, int decimals);

// Right-aligns numeric cells, left-aligns text and the first column; a rule under the header.
std::string render_table(const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows);

// The banner above figures that price a stand-in for a model pipesim does not fully describe
// (--allow-unmodelled), one feature a line: "" when `unmodelled` is empty.
std::string unmodelled_banner(const std::vector<std::string>& unmodelled);

}  // namespace pipesim
