#include "base/output_path.h"

#include <filesystem>

namespace pipesim {

std::string output_target(const std::string& path) {
  namespace fs = std::filesystem;
  // Linux's own limit on links followed in one lookup; a loop ends there and the write fails on it.
  constexpr int kMaxLinks = 40;
  fs::path current = path;
  std::error_code ec;
  for (int hop = 0; hop < kMaxLinks && fs::is_symlink(current, ec); ++hop) {
    const fs::path target = fs::read_symlink(current, ec);
    if (ec) break;
    // Not normalised: ".." after a linked directory is resolved by the system, physically.
    current = target.is_absolute() ? target : current.parent_path() / target;
  }
  return current.string();
}

}  // namespace pipesim
