#include "schedules/schedule_params.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "base/did_you_mean.h"
#include "base/errors.h"

namespace pipesim {
namespace {

bool parse_int(const std::string& text, int& value) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && ptr == text.data() + text.size();
}

}  // namespace

const std::string* ScheduleParams::scalar(const std::string& key, const char* expected) const {
  used_.insert(key);
  auto it = values_.find(key);
  if (it == values_.end()) return nullptr;
  if (it->second.list) {
    throw InputError(fmt::format("{}: parameter '{}': expected {}, got a list", where_, key, expected));
  }
  return &it->second.items.front();
}

int ScheduleParams::get_int(const std::string& key, int fallback, int min_value) const {
  const std::string* text = scalar(key, "an integer");
  int value = fallback;
  if (text && (!parse_int(*text, value) || value < min_value)) {
    throw InputError(fmt::format("{}: parameter '{}': expected an integer >= {}, got '{}'", where_, key,
                                 min_value, *text));
  }
  resolved_[key] = value;
  return value;
}

double ScheduleParams::get_double(const std::string& key, double fallback, double min_value) const {
  const std::string* text = scalar(key, "a number");
  double value = fallback;
  if (text) {
    char* end = nullptr;
    value = std::strtod(text->c_str(), &end);
    if (text->empty() || end != text->c_str() + text->size() || !(value >= min_value) ||
        !std::isfinite(value)) {
      throw InputError(fmt::format("{}: parameter '{}': expected a finite number >= {}, got '{}'", where_,
                                   key, min_value, *text));
    }
  }
  resolved_[key] = value;
  return value;
}

bool ScheduleParams::get_bool(const std::string& key, bool fallback) const {
  const std::string* text = scalar(key, "true or false");
  bool value = fallback;
  if (text) {
    if (*text != "true" && *text != "false") {
      throw InputError(
          fmt::format("{}: parameter '{}': expected true or false, got '{}'", where_, key, *text));
    }
    value = *text == "true";
  }
  resolved_[key] = value;
  return value;
}

std::string ScheduleParams::get_string(const std::string& key, const std::string& fallback) const {
  const std::string* text = scalar(key, "a string");
  const std::string value = text ? *text : fallback;
  resolved_[key] = value;
  return value;
}

std::vector<int> ScheduleParams::get_int_list(const std::string& key, int min_value) const {
  used_.insert(key);
  auto it = values_.find(key);
  if (it == values_.end()) return {};
  std::vector<std::string> items = it->second.items;
  if (!it->second.list) {  // the command line's "5/4/3/2", or one value
    items.clear();
    const std::string& text = it->second.items.front();
    for (size_t begin = 0; begin <= text.size();) {
      const size_t end = std::min(text.find('/', begin), text.size());
      items.push_back(text.substr(begin, end - begin));
      begin = end + 1;
    }
  }
  std::vector<int> values;
  for (const std::string& item : items) {
    int value = 0;
    if (!parse_int(item, value) || value < min_value) {
      throw InputError(
          fmt::format("{}: parameter '{}': expected integers >= {} (a list, or items separated "
                      "by '/' on the command line), got '{}'",
                      where_, key, min_value, item));
    }
    values.push_back(value);
  }
  resolved_[key] = values;
  return values;
}

void ScheduleParams::check_all_used(const std::string& schedule) const {
  for (const auto& [key, value] : values_) {
    if (!used_.count(key)) {
      std::vector<std::string> known(used_.begin(), used_.end());
      std::string list;
      for (const std::string& name : known) list += (list.empty() ? "" : ", ") + name;
      throw InputError(fmt::format("{}: schedule '{}' has no parameter '{}'{}; it takes: {}", where_,
                                   schedule, key, did_you_mean(key, known), list.empty() ? "none" : list));
    }
  }
}

}  // namespace pipesim
