#include "io/yaml_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/did_you_mean.h"
#include "base/errors.h"
#include "base/text_file.h"
#include "base/value_ranges.h"

namespace pipesim {

namespace {

// A key missing from a map read through a const node is yaml-cpp's "zombie" node, whose Type() throws
// InvalidNode: these ask IsDefined() first, so that a missing key fails as "expected ..., got nothing".
bool is_scalar(const YAML::Node& node) {
  return node.IsDefined() && node.IsScalar();
}
bool is_sequence(const YAML::Node& node) {
  return node.IsDefined() && node.IsSequence();
}
bool is_map(const YAML::Node& node) {
  return node.IsDefined() && node.IsMap();
}

}  // namespace

std::string show_yaml(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  // Long values (a list of a million entries) are echoed as a short prefix, not megabytes of error.
  constexpr size_t kMaxShown = 120;
  std::string text;
  if (node.IsScalar()) {
    text = node.Scalar();
  } else {
    YAML::Emitter out;
    out << YAML::Flow << node;
    text = out.c_str();
  }
  if (text.size() > kMaxShown)
    text = text.substr(0, kMaxShown) + fmt::format("... ({} characters)", text.size());
  return node.IsScalar() ? "'" + text + "'" : text;
}

std::string YamlReader::where(const YAML::Node& node, const std::string& key) const {
  for (const std::string& set_key : overridden_) {
    if (key == set_key || key.rfind(set_key + ".", 0) == 0 || key.rfind(set_key + "[", 0) == 0) {
      return fmt::format("--set {}: key '{}'", set_key, key);
    }
  }
  if (node.IsDefined() && !node.Mark().is_null()) {
    return fmt::format("{}:{}: key '{}'", source_, node.Mark().line + 1, key);
  }
  return fmt::format("{}: key '{}'", source_, key);
}

YAML::Node YamlReader::load(const std::string& text, const std::string& source) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}:{}: not valid YAML: {}", source, e.mark.line + 1, e.msg));
  }
}

void YamlReader::fail(const YAML::Node& node, const std::string& key, const std::string& expected) const {
  throw InputError(fmt::format("{}: expected {}, got {}", where(node, key), expected, show_yaml(node)));
}

void YamlReader::expect_unique_keys(const YAML::Node& node, const std::string& key) const {
  std::set<std::string> seen;
  for (const auto& entry : node) {
    const std::string name = entry.first.Scalar();
    if (!seen.insert(name).second) {
      // yaml-cpp keeps the first of two equal keys; a silently ignored setting is worse than an error.
      throw InputError(fmt::format("{}: duplicate key (each key may appear once in a map)",
                                   where(entry.first, key.empty() ? name : key + "." + name)));
    }
  }
}

void YamlReader::expect_map(const YAML::Node& node, const std::string& key,
                            const std::vector<std::string>& allowed) const {
  if (!is_map(node)) fail(node, key, "a map");
  expect_unique_keys(node, key);
  for (const auto& entry : node) {
    const std::string name = entry.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      const std::string full = key.empty() ? name : key + "." + name;
      throw InputError(fmt::format("{}: unknown key{}; allowed here: {}", where(entry.first, full),
                                   did_you_mean(name, allowed), list));
    }
  }
}

bool YamlReader::get_bool(const YAML::Node& node, const std::string& key) const {
  if (!is_scalar(node) || (node.Scalar() != "true" && node.Scalar() != "false"))
    fail(node, key, "true or false");
  return node.Scalar() == "true";
}

int YamlReader::get_int(const YAML::Node& node, const std::string& key, int min_value) const {
  const std::string expected = fmt::format("an integer >= {}", min_value);
  if (!is_scalar(node)) fail(node, key, expected);
  int value = 0;
  try {
    value = node.as<int>();
  } catch (const YAML::Exception&) {
    fail(node, key, expected);
  }
  if (value < min_value) fail(node, key, expected);
  return value;
}

double YamlReader::get_double(const YAML::Node& node, const std::string& key, double min_value) const {
  const std::string expected = fmt::format("a number >= {}", min_value);
  if (!is_scalar(node)) fail(node, key, expected);
  double value = 0;
  try {
    value = node.as<double>();
  } catch (const YAML::Exception&) {
    fail(node, key, expected);
  }
  if (!std::isfinite(value) || value < min_value) fail(node, key, expected);
  return value;
}

namespace {

// Reads a number, or fails saying `expected` (NaN and infinities fail: get_double takes finite values).
template <typename Convert>
auto get_checked(const YamlReader& r, const YAML::Node& node, const std::string& key,
                 const std::string& expected, Convert convert) {
  double value = 0;
  if (!is_scalar(node)) r.fail(node, key, expected);
  try {
    value = node.as<double>();
  } catch (const YAML::Exception&) {
    r.fail(node, key, expected);
  }
  const auto converted = convert(value);
  if (!converted) r.fail(node, key, expected);
  return *converted;
}

template <typename Convert>
std::vector<std::int64_t> get_checked_list(const YamlReader& r, const YAML::Node& node,
                                           const std::string& key, int count, const std::string& expected,
                                           Convert convert) {
  if (is_scalar(node)) return std::vector<std::int64_t>(count, get_checked(r, node, key, expected, convert));
  if (!is_sequence(node) || static_cast<int>(node.size()) != count) {
    r.fail(node, key, fmt::format("{}, or a list of {} such values (one per stage)", expected, count));
  }
  std::vector<std::int64_t> values;
  for (size_t i = 0; i < node.size(); ++i) {
    values.push_back(get_checked(r, node[i], fmt::format("{}[{}]", key, i), expected, convert));
  }
  return values;
}

}  // namespace

std::int64_t YamlReader::get_ms_as_ns(const YAML::Node& node, const std::string& key) const {
  return get_checked(*this, node, key, time_range_text(), checked_ms_to_ns);
}

std::vector<std::int64_t> YamlReader::get_ms_list_as_ns(const YAML::Node& node, const std::string& key,
                                                        int count) const {
  return get_checked_list(*this, node, key, count, time_range_text(), checked_ms_to_ns);
}

std::vector<std::int64_t> YamlReader::get_bytes_list(const YAML::Node& node, const std::string& key,
                                                     int count) const {
  return get_checked_list(*this, node, key, count, bytes_range_text(), checked_bytes);
}

std::string YamlReader::get_string(const YAML::Node& node, const std::string& key) const {
  if (!is_scalar(node)) fail(node, key, "a string");
  // Names reach JSON reports, which hold only UTF-8: refuse other bytes here, where the key is known.
  if (!is_valid_utf8(node.Scalar())) fail(node, key, "a string of valid UTF-8 text");
  return node.Scalar();
}

std::string YamlReader::get_choice(const YAML::Node& node, const std::string& key,
                                   const std::vector<std::string>& allowed,
                                   const std::string& expected) const {
  const std::string value = get_string(node, key);
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return value;
  std::string list;
  for (const std::string& name : allowed) list += (list.empty() ? "'" : ", '") + name + "'";
  throw InputError(fmt::format("{}: expected {}, got {}{}", where(node, key),
                               expected.empty() ? "one of " + list : expected, show_yaml(node),
                               did_you_mean(value, allowed)));
}

std::vector<double> YamlReader::get_double_list(const YAML::Node& node, const std::string& key, int count,
                                                double min_value) const {
  if (is_scalar(node)) return std::vector<double>(count, get_double(node, key, min_value));
  const std::string expected =
      fmt::format("a number >= {} or a list of {} such numbers (one per stage)", min_value, count);
  if (!is_sequence(node) || static_cast<int>(node.size()) != count) fail(node, key, expected);
  std::vector<double> values;
  for (size_t i = 0; i < node.size(); ++i) {
    values.push_back(get_double(node[i], fmt::format("{}[{}]", key, i), min_value));
  }
  return values;
}

}  // namespace pipesim
