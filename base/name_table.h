#pragma once
// Each choice's name as scenarios and studies spell it, in one table per kind: the readers parse through them
// and the reports print through them.
#include <string>
#include <utility>
#include <vector>

namespace pipesim {

template <typename Enum>
using NameTable = std::vector<std::pair<std::string, Enum>>;

// The value's name in the table ("?" for a value the table lacks, which a test of each table rules out).
template <typename Enum>
std::string name_in(const NameTable<Enum>& table, Enum value) {
  for (const auto& [name, entry] : table) {
    if (entry == value) return name;
  }
  return "?";
}

// The names in table order, for "expected one of" messages.
template <typename Enum>
std::vector<std::string> names_of(const NameTable<Enum>& table) {
  std::vector<std::string> names;
  for (const auto& entry : table) names.push_back(entry.first);
  return names;
}

}  // namespace pipesim
