#pragma once
// The one CSV writer: RFC 4180 cells and lines, for every CSV pipesim writes (run, sweep, extrapolate,
// validate, execute, study curves).
#include <string>
#include <vector>

namespace pipesim {

// The cell as is, or quoted (inner quotes doubled) when it holds a comma, a quote or a newline.
std::string csv_escape(const std::string& text);
// The cells joined by commas, with a newline; each cell already escaped.
std::string csv_line(const std::vector<std::string>& cells);
// The same line of cells as they are (names, reasons): each through csv_escape first.
std::string csv_escaped_line(const std::vector<std::string>& cells);

}  // namespace pipesim
