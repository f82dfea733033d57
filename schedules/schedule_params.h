#pragma once
// A schedule's parameters as the user wrote them ("chunks: 2", "max_in_flight: [3, 3, 1]"), with typed,
// checked getters. Unknown parameters are an error: check_all_used() names them. Each getter also records the
// typed value the schedule runs with (given or default), so results report the parameters as numbers,
// booleans, strings and lists, never as a joined label (docs/design.md §8).
#include <map>
#include <set>
#include <string>
#include <variant>
#include <vector>

namespace pipesim {

// One parameter's value as the schedule uses it.
using ScheduleParamValue = std::variant<int, double, bool, std::string, std::vector<int>>;
using ScheduleParamValues = std::map<std::string, ScheduleParamValue>;

class ScheduleParams {
 public:
  ScheduleParams() = default;
  // where: "file.yaml:12" or "--schedules", used in error messages.
  explicit ScheduleParams(std::string where) : where_(std::move(where)) {}

  // A scalar as written.
  void set(const std::string& key, const std::string& value) { values_[key] = {{value}, false}; }
  // A list (a YAML sequence), kept item by item.
  void set_list(const std::string& key, std::vector<std::string> items) {
    values_[key] = {std::move(items), true};
  }
  bool has(const std::string& key) const { return values_.count(key) != 0; }

  int get_int(const std::string& key, int fallback, int min_value) const;
  double get_double(const std::string& key, double fallback, double min_value) const;
  bool get_bool(const std::string& key, bool fallback) const;
  std::string get_string(const std::string& key, const std::string& fallback) const;
  // A list of integers >= min_value: a YAML list, one scalar (a list of one), or on the command line items
  // separated by '/' (',' separates schedules there). Empty when the parameter is absent.
  std::vector<int> get_int_list(const std::string& key, int min_value) const;

  // Throws InputError naming every parameter that no getter asked for.
  void check_all_used(const std::string& schedule) const;

  // The typed values the getters returned, by name (a list parameter left out is absent).
  const ScheduleParamValues& resolved() const { return resolved_; }
  // Every parameter a getter asked for, given or not: the parameters the schedule takes.
  const std::set<std::string>& asked() const { return used_; }
  const std::string& where() const { return where_; }

 private:
  // The scalar text of a parameter; throws when it was given as a list.
  const std::string* scalar(const std::string& key, const char* expected) const;

  std::string where_ = "schedule parameters";
  struct Given {
    std::vector<std::string> items;  // a scalar: one item
    bool list = false;
  };
  std::map<std::string, Given> values_;
  mutable std::set<std::string> used_;
  mutable ScheduleParamValues resolved_;
};

}  // namespace pipesim
