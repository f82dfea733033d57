#pragma once
// Where an output written beside its target and renamed over it must go, so that a symlink named as the
// output is kept: every writer (cli/output_file.cpp, the study's curves, the numerics dumps) uses it.
#include <string>

namespace pipesim {

// The final target of `path` when it is a symlink (a chain followed link by link, a relative target read
// against its link's directory), also when that target does not exist yet (a dangling link); else `path`.
std::string output_target(const std::string& path);

}  // namespace pipesim
