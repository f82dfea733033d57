#pragma once
// Typed, checked access to a YAML document. Every error names the file, the line and the dotted key, and
// says what was expected; keys set on the command line (--set) are reported as such.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace pipesim {

class YamlReader {
 public:
  YamlReader(std::string source, std::set<std::string> overridden_keys = {})
      : source_(std::move(source)), overridden_(std::move(overridden_keys)) {}

  // Parses a whole document (a scenario, a profile, a study): every YAML file pipesim reads goes through
  // here, so a syntax error reads alike everywhere: "file.yaml:12: not valid YAML: <what yaml-cpp says>".
  static YAML::Node load(const std::string& text, const std::string& source);

  // "file.yaml:12: key 'pipeline.stages'" (or "--set pipeline.stages").
  std::string where(const YAML::Node& node, const std::string& key) const;
  [[noreturn]] void fail(const YAML::Node& node, const std::string& key, const std::string& expected) const;

  // Checks that no key of the map `node` appears twice (yaml-cpp keeps both; lookups see the first).
  void expect_unique_keys(const YAML::Node& node, const std::string& key) const;

  // Checks that `node` is a map whose keys are all in `allowed`, each once.
  void expect_map(const YAML::Node& node, const std::string& key,
                  const std::vector<std::string>& allowed) const;

  int get_int(const YAML::Node& node, const std::string& key, int min_value) const;
  double get_double(const YAML::Node& node, const std::string& key, double min_value) const;
  std::string get_string(const YAML::Node& node, const std::string& key) const;
  // A string among `allowed`; the error lists them (or says `expected`) and suggests the closest name.
  std::string get_choice(const YAML::Node& node, const std::string& key,
                         const std::vector<std::string>& allowed, const std::string& expected = "") const;
  bool get_bool(const YAML::Node& node, const std::string& key) const;  // true or false
  // A scalar or a list with exactly `count` entries, each >= min_value.
  std::vector<double> get_double_list(const YAML::Node& node, const std::string& key, int count,
                                      double min_value) const;

  // Times in ms and byte counts within base/value_ranges.h's limits (NaN and infinities refused), converted
  // to ns and bytes; a scalar or a list of `count` entries, as get_double_list.
  std::int64_t get_ms_as_ns(const YAML::Node& node, const std::string& key) const;
  std::vector<std::int64_t> get_ms_list_as_ns(const YAML::Node& node, const std::string& key,
                                              int count) const;
  std::vector<std::int64_t> get_bytes_list(const YAML::Node& node, const std::string& key, int count) const;

  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::set<std::string> overridden_;
};

// Shows a node's value compactly for error messages.
std::string show_yaml(const YAML::Node& node);

}  // namespace pipesim
