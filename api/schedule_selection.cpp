#include "api/schedule_selection.h"

#include <fmt/format.h>

#include <sstream>

#include "api/simulation.h"
#include "base/did_you_mean.h"
#include "base/errors.h"
#include "schedules/registry.h"

namespace pipesim {
namespace {

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

std::vector<std::string> comma_items(const std::string& list, const std::string& option) {
  std::vector<std::string> items;
  std::stringstream stream(list);
  for (std::string item; std::getline(stream, item, ',');) {
    item = trimmed(item);
    if (item.empty()) throw InputError(fmt::format("{} '{}': an empty item", option, list));
    items.push_back(item);
  }
  if (!list.empty() && list.back() == ',')
    throw InputError(fmt::format("{} '{}': an empty item", option, list));
  return items;
}

// Fails now, before any run, for a name that names no schedule.
void check_registered(const std::string& name, const std::string& item) {
  if (name.rfind("csv:", 0) == 0) return;
  const std::string canonical = canonical_schedule_name(name);
  std::vector<std::string> names;
  for (const ScheduleInfo& info : registered_schedules()) {
    if (info.name == canonical) return;
    names.push_back(info.name);
  }
  throw InputError(fmt::format("--schedules {}: unknown schedule '{}'{} (`pipesim schedules` lists them)",
                               item, name, did_you_mean(name, names)));
}

}  // namespace

std::vector<ScheduleRequest> select_schedules(const Scenario& scenario, const std::string& list) {
  if (trimmed(list).empty()) return requested_schedules(scenario);
  std::vector<ScheduleRequest> selected;
  for (const std::string& item : comma_items(list, "--schedules")) {
    std::stringstream parts(item);
    std::string name;
    std::getline(parts, name, ':');
    name = trimmed(name);
    if (name == "csv") {
      std::string path;
      std::getline(parts, path, ':');
      if (path.empty()) throw InputError(fmt::format("--schedules {}: expected csv:PATH", item));
      name += ":" + path;
    }
    check_registered(name, item);
    ScheduleRequest request{name, ScheduleParams(fmt::format("--schedules {}", item))};
    for (std::string kv; std::getline(parts, kv, ':');) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos) {
        throw InputError(fmt::format("--schedules {}: expected name:key=value, got '{}'", item, kv));
      }
      request.params.set(trimmed(kv.substr(0, eq)), trimmed(kv.substr(eq + 1)));
    }
    selected.push_back(std::move(request));
  }
  return selected;
}

std::vector<ScheduleRequest> select_entries(const Scenario& scenario, const std::string& list) {
  const std::vector<ScheduleRequest> entries = requested_schedules(scenario);
  std::vector<ScheduleRequest> selected;
  for (const std::string& item : comma_items(list, "--entry")) {
    const auto fail = [&] {
      throw InputError(fmt::format("--entry {}: the scenario {} has schedule entries 1 to {}", item,
                                   scenario.source, entries.size()));
    };
    size_t used = 0;
    long k = 0;
    try {
      k = std::stol(item, &used);
    } catch (const std::exception&) {
      fail();
    }
    if (used != item.size() || k < 1 || k > static_cast<long>(entries.size())) fail();
    selected.push_back(entries[static_cast<size_t>(k - 1)]);
  }
  return selected;
}

std::vector<ScheduleRequest> select_runs(const Scenario& scenario, const std::string& schedules,
                                         const std::string& entries) {
  if (!trimmed(schedules).empty() && !trimmed(entries).empty()) {
    throw InputError("--schedules and --entry: give one of them (--entry K picks the scenario's K-th entry)");
  }
  if (!trimmed(entries).empty()) return select_entries(scenario, entries);
  return select_schedules(scenario, schedules);
}

}  // namespace pipesim
