#pragma once
// A schedule's parameters as the user wrote them ("chunks: 2"), with typed, checked getters.
// Unknown parameters are an error: check_all_used() names them.
#include <map>
#include <set>
#include <string>

namespace pipesim {

class ScheduleParams {
 public:
  ScheduleParams() = default;
  // where: "file.yaml:12" or "--schedules", used in error messages.
  explicit ScheduleParams(std::string where) : where_(std::move(where)) {}

  void set(const std::string& key, const std::string& value) { values_[key] = value; }
  bool has(const std::string& key) const { return values_.count(key) != 0; }

  int get_int(const std::string& key, int fallback, int min_value) const;
  double get_double(const std::string& key, double fallback, double min_value) const;
  bool get_bool(const std::string& key, bool fallback) const;
  std::string get_string(const std::string& key, const std::string& fallback) const;

  // Throws InputError naming every parameter that no getter asked for.
  void check_all_used(const std::string& schedule) const;

  const std::map<std::string, std::string>& values() const { return values_; }
  const std::string& where() const { return where_; }

 private:
  std::string where_ = "schedule parameters";
  std::map<std::string, std::string> values_;
  mutable std::set<std::string> used_;
};

}  // namespace pipesim
