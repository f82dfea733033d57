#pragma once
// Small text helpers for reports: fixed-width tables and human units.
#include <string>
#include <vector>

#include "sim/units.h"

namespace pipesim {

// "512 B", "3.25 GB" (decimal units, as the papers report memory).
std::string format_bytes(Bytes bytes);

// Right-aligns numeric cells, left-aligns text and the first column; a rule under the header.
std::string render_table(const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows);

}  // namespace pipesim
