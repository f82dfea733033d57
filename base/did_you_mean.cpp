#include "base/did_you_mean.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace pipesim {
namespace {

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

int edit_distance(const std::string& a_given, const std::string& b_given) {
  const std::string a = lower(a_given), b = lower(b_given);
  std::vector<int> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diagonal = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string closest_name(const std::string& given, const std::vector<std::string>& known) {
  if (given.empty()) return "";
  // A known name that the given one begins (at least 3 characters): the shortest such.
  const std::string g = lower(given);
  std::string prefixed;
  for (const std::string& name : known) {
    if (g.size() >= 3 && lower(name).rfind(g, 0) == 0 &&
        (prefixed.empty() || name.size() < prefixed.size())) {
      prefixed = name;
    }
  }
  if (!prefixed.empty()) return prefixed;
  std::string best;
  int best_distance = 0;
  for (const std::string& name : known) {
    const int distance = edit_distance(given, name);
    if (best.empty() || distance < best_distance) {
      best = name;
      best_distance = distance;
    }
  }
  if (best.empty()) return "";
  const std::string b = lower(best);
  const bool prefix = b.size() >= 3 && g.rfind(b, 0) == 0;
  const size_t longer = std::max(given.size(), best.size());
  if (prefix || static_cast<size_t>(best_distance) * 3 <= longer) return best;
  return "";
}

std::string did_you_mean(const std::string& given, const std::vector<std::string>& known) {
  const std::string name = closest_name(given, known);
  return name.empty() ? "" : fmt::format("; did you mean '{}'?", name);
}

std::string near_miss(const std::string& given, const std::vector<std::string>& known, int max_edits,
                      size_t min_length) {
  if (given.size() < min_length) return "";
  for (const std::string& name : known) {
    if (name != given && name.size() >= min_length && edit_distance(given, name) <= max_edits) return name;
  }
  return "";
}

}  // namespace pipesim
