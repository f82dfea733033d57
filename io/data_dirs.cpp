#include "io/data_dirs.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "base/errors.h"
#include "pipesim_source_dir.h"

namespace pipesim {
namespace {

namespace fs = std::filesystem;

std::mutex& data_dir_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::string& data_dir_flag() {
  static std::string directory;
  return directory;
}

// The running binary's share/pipesim, so that an installed tree can be moved; empty when unknown.
std::string beside_binary() {
  std::error_code error;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  if (error || exe.empty()) return "";
  return (exe.parent_path().parent_path() / "share" / "pipesim").string();
}

// A directory the user named must be one: a typo would otherwise fall through to the shipped data unnoticed.
// `named` is how the user gave it: "--data-dir DIR" or "PIPESIM_DATA_DIR=DIR".
void expect_directory(const std::string& directory, const std::string& named) {
  std::error_code error;
  if (fs::is_directory(directory, error)) return;
  throw InputError(
      fmt::format("{}: {}; expected a directory holding scenarios/, studies/, profiles/, data/ "
                  "and corpus/, as share/ does",
                  named, fs::exists(directory, error) ? "not a directory" : "no such directory"));
}

}  // namespace

void set_data_dir(const std::string& directory) {
  if (!directory.empty()) expect_directory(directory, "--data-dir " + directory);
  std::lock_guard<std::mutex> lock(data_dir_mutex());
  data_dir_flag() = directory;
}

std::vector<DataDirCandidate> data_dir_candidates() {
  std::vector<DataDirCandidate> candidates;
  {
    std::lock_guard<std::mutex> lock(data_dir_mutex());
    if (!data_dir_flag().empty()) candidates.push_back({data_dir_flag(), "--data-dir"});
  }
  if (const char* env = std::getenv("PIPESIM_DATA_DIR"); env && *env) {
    expect_directory(env, fmt::format("PIPESIM_DATA_DIR={}", env));
    candidates.push_back({env, "PIPESIM_DATA_DIR"});
  }
  if (const std::string dir = beside_binary(); !dir.empty()) candidates.push_back({dir, "beside the binary"});
  candidates.push_back({PIPESIM_INSTALL_DATA_DIR, "install prefix"});
  candidates.push_back({std::string(PIPESIM_SOURCE_DIR) + "/share", "source tree"});
  return candidates;
}

std::string find_data_path(const std::string& relative, const std::string& what) {
  std::string looked;
  for (const DataDirCandidate& candidate : data_dir_candidates()) {
    const fs::path path = fs::path(candidate.directory) / relative;
    std::error_code error;
    if (fs::exists(path, error)) return path.string();
    looked += fmt::format("\n  {} ({})", path.string(), candidate.origin);
  }
  throw InputError(fmt::format(
      "{} ({}) not found; looked in:{}\n(pass --data-dir DIR or set PIPESIM_DATA_DIR to a directory holding "
      "scenarios/, studies/, profiles/, data/ and corpus/, as share/ does)",
      what, relative, looked));
}

std::string input_or_data_path(const std::string& path) {
  std::error_code error;
  if (path.empty() || fs::path(path).is_absolute() || fs::exists(path, error)) return path;
  for (const DataDirCandidate& candidate : data_dir_candidates()) {
    const fs::path shipped = fs::path(candidate.directory) / path;
    if (fs::exists(shipped, error)) return shipped.string();
  }
  return path;
}

}  // namespace pipesim
