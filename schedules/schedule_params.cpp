#include "schedules/schedule_params.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "sim/errors.h"

namespace pipesim {

int ScheduleParams::get_int(const std::string& key, int fallback, int min_value) const {
  used_.insert(key);
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  int value = 0;
  const std::string& text = it->second;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value < min_value) {
    throw InputError(
        fmt::format("{}: parameter '{}': expected an integer >= {}, got '{}'", where_, key, min_value, text));
  }
  return value;
}

double ScheduleParams::get_double(const std::string& key, double fallback, double min_value) const {
  used_.insert(key);
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  const std::string& text = it->second;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(value >= min_value) || !std::isfinite(value)) {
    throw InputError(fmt::format("{}: parameter '{}': expected a finite number >= {}, got '{}'", where_, key,
                                 min_value, text));
  }
  return value;
}

bool ScheduleParams::get_bool(const std::string& key, bool fallback) const {
  used_.insert(key);
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  if (it->second == "true") return true;
  if (it->second == "false") return false;
  throw InputError(
      fmt::format("{}: parameter '{}': expected true or false, got '{}'", where_, key, it->second));
}

std::string ScheduleParams::get_string(const std::string& key, const std::string& fallback) const {
  used_.insert(key);
  auto it = values_.find(key);
  return it == values_.end() ? fallback : it->second;
}

void ScheduleParams::check_all_used(const std::string& schedule) const {
  for (const auto& [key, value] : values_) {
    if (!used_.count(key)) {
      throw InputError(fmt::format("{}: schedule '{}' has no parameter '{}'", where_, schedule, key));
    }
  }
}

}  // namespace pipesim
