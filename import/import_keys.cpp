#include "import/import_keys.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <stdexcept>

namespace pipesim {
namespace {

bool is_pattern(const std::string& name) {
  return name.ends_with(".*") || name.starts_with("*");
}

bool matches(const std::string& entry, std::string_view name) {
  if (entry.ends_with(".*")) return name.starts_with(std::string_view(entry).substr(0, entry.size() - 1));
  if (entry.size() > 2 && entry.starts_with("*") && entry.ends_with("*"))
    return name.find(std::string_view(entry).substr(1, entry.size() - 2)) != std::string_view::npos;
  return entry == name;
}

const char* use_text(KeyUse use) {
  switch (use) {
    case KeyUse::kModel:
      return "model";
    case KeyUse::kPipeline:
      return "pipeline";
    case KeyUse::kJob:
      return "job (parallel:)";
    case KeyUse::kUnmodelled:
      return "refused model key";
    case KeyUse::kUnsupported:
      return "not supported";
    case KeyUse::kIgnored:
      return "ignored";
  }
  return "";
}

// "a, b -> what" per distinct `what`, in the table's order: the names that set one field together.
std::string grouped(const ImportKeyTable& table, KeyUse use) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::string>> names;
  for (const ImportKey& k : table.keys()) {
    if (k.use != use) continue;
    if (!names.count(k.what)) order.push_back(k.what);
    names[k.what].push_back(table.prefix() + k.name);
  }
  std::vector<std::string> parts;
  for (const std::string& what : order)
    parts.push_back(fmt::format("{} -> {}", fmt::join(names[what], ", "), what));
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace

ImportKeyTable::ImportKeyTable(std::string importer, std::string prefix, std::vector<ImportKey> keys)
    : importer_(std::move(importer)), prefix_(std::move(prefix)), keys_(std::move(keys)) {}

const ImportKey* ImportKeyTable::find(std::string_view name) const {
  for (const ImportKey& k : keys_) {
    if (!is_pattern(k.name) && k.name == name) return &k;
  }
  for (const ImportKey& k : keys_) {
    if (is_pattern(k.name) && matches(k.name, name)) return &k;
  }
  return nullptr;
}

const ImportKey& ImportKeyTable::consulted(std::string_view name) const {
  const ImportKey* key = find(name);
  if (!key) {
    throw std::logic_error(fmt::format("the {} reader looks up '{}{}', which its key table does not list",
                                       importer_, prefix_, name));
  }
  return *key;
}

std::vector<std::string> ImportKeyTable::names() const {
  std::vector<std::string> result;
  for (const ImportKey& k : keys_) {
    if (!is_pattern(k.name)) result.push_back(k.name);
  }
  return result;
}

std::string import_support_summary(const ImportKeyTable& table) {
  std::vector<std::string> parts;
  for (const auto& [use, label] :
       {std::pair{KeyUse::kModel, "The model"},
        {KeyUse::kPipeline, "The pipeline"},
        {KeyUse::kJob, "The job (parallel:)"},
        {KeyUse::kUnmodelled, "Written as model keys that `run` refuses until they are modelled"},
        {KeyUse::kUnsupported, "Listed as not supported where in force"}}) {
    if (const std::string text = grouped(table, use); !text.empty())
      parts.push_back(fmt::format("{}: {}.", label, text));
  }
  int ignored = 0;
  for (const ImportKey& k : table.keys()) ignored += k.use == KeyUse::kIgnored ? 1 : 0;
  parts.push_back(
      fmt::format("Ignored (no figure depends on them): {} keys, listed by --keys. Anything else is listed "
                  "as unknown in the "
                  "scenario's comments.",
                  ignored));
  return fmt::format("{}", fmt::join(parts, "\n"));
}

std::string import_key_listing(const ImportKeyTable& table) {
  std::string text = fmt::format("| {} key | read as | what |\n|---|---|---|\n", table.importer());
  for (const ImportKey& k : table.keys()) {
    text += fmt::format("| `{}{}` | {} | {} |\n", table.prefix(), k.name, use_text(k.use), k.what);
  }
  return text;
}

}  // namespace pipesim
