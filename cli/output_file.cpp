// Outputs are never half-written: text goes to a temporary file beside the target, renamed over it only once
// it is complete, so a failed run leaves an existing file as it was.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "sim/errors.h"

namespace pipesim {

void check_output_path(const std::string& path) {
  if (path.empty() || path == "-") return;
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw InputError(fmt::format("{}: is a directory, not an output file", path));
  const fs::path parent = fs::path(path).parent_path();
  const fs::path dir = parent.empty() ? fs::path(".") : parent;
  if (!fs::is_directory(dir, ec)) {
    throw InputError(fmt::format("{}: cannot write here: directory '{}' does not exist", path, dir.string()));
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    throw InputError(fmt::format("{}: cannot write here: {}", path, std::strerror(errno)));
  }
}

void write_file(const std::string& path, const std::string& text) {
  StreamedOutputFile out(path);
  out.write(text);
  out.commit();
}

StreamedOutputFile::StreamedOutputFile(const std::string& path) : path_(path) {
  if (path == "-") {
    file_ = stdout;
    return;
  }
  check_output_path(path);
  temporary_ = fmt::format("{}.tmp.{}", path, ::getpid());
  file_ = std::fopen(temporary_.c_str(), "wb");
  if (!file_)
    throw InputError(fmt::format("{}: cannot open for writing: {}", temporary_, std::strerror(errno)));
}

StreamedOutputFile::~StreamedOutputFile() {
  if (file_ && file_ != stdout) {
    std::fclose(file_);
    std::remove(temporary_.c_str());
  }
}

void StreamedOutputFile::write(const std::string& text) {
  if (!file_) throw InputError(fmt::format("{}: written after it was closed", path_));
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) {
    throw InputError(fmt::format("{}: write failed: {}", path_ == "-" ? "standard output" : temporary_,
                                 std::strerror(errno)));
  }
}

void StreamedOutputFile::commit() {
  if (!file_) return;
  if (file_ == stdout) {
    file_ = nullptr;
    if (std::fflush(stdout) != 0) throw InputError("standard output: write failed");
    return;
  }
  const bool written = std::fflush(file_) == 0 && std::ferror(file_) == 0;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!written || !closed) {
    std::remove(temporary_.c_str());
    throw InputError(fmt::format("{}: write failed (the existing file, if any, is unchanged)", path_));
  }
  if (std::rename(temporary_.c_str(), path_.c_str()) != 0) {
    const int error = errno;
    std::remove(temporary_.c_str());
    throw InputError(fmt::format("{}: cannot replace the file: {}", path_, std::strerror(error)));
  }
}

}  // namespace pipesim
