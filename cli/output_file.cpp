// Outputs are never half-written and never destroy anything:
// - a regular file (or a missing one) gets a temporary file beside it, renamed over it only once complete,
//   so a failed run leaves an existing file as it was; a symlink is followed and its target replaced (or
//   created, for a dangling link) the same way;
// - anything else (a character device such as /dev/null, a FIFO, a socket, /dev/stdout and /dev/fd/N) is
//   written through, never replaced by a regular file;
// - a write error (a full disk, /dev/full) is an error, never exit 0;
// - the temporary files of this process are removed on SIGINT and SIGTERM, and those a dead process left
//   beside a target are removed when that target is written again.
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>

#include "base/errors.h"
#include "base/output_path.h"
#include "cli/commands.h"

namespace pipesim {
namespace {

namespace fs = std::filesystem;

// Temporary files in use, for the signal handler: fixed slots of C strings it can read without locking.
constexpr size_t kMaxTemporaries = 16;
constexpr size_t kMaxPathChars = 4096;
std::array<std::array<char, kMaxPathChars>, kMaxTemporaries> g_temporaries{};
std::array<std::atomic<bool>, kMaxTemporaries> g_in_use{};
std::mutex g_slots;

extern "C" void remove_temporaries_and_reraise(int signal_number) {
  for (size_t i = 0; i < kMaxTemporaries; ++i) {
    if (g_in_use[i].load()) ::unlink(g_temporaries[i].data());  // async-signal-safe
  }
  std::signal(signal_number, SIG_DFL);
  ::raise(signal_number);
}

void install_handlers_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int s : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction action {};
      action.sa_handler = remove_temporaries_and_reraise;
      sigemptyset(&action.sa_mask);
      struct sigaction previous {};
      // Leave a signal the caller chose to ignore ignored.
      if (::sigaction(s, nullptr, &previous) == 0 && previous.sa_handler == SIG_IGN) continue;
      ::sigaction(s, &action, nullptr);
    }
  });
}

int register_temporary(const std::string& path) {
  install_handlers_once();
  if (path.size() >= kMaxPathChars) return -1;
  const std::lock_guard<std::mutex> lock(g_slots);
  for (size_t i = 0; i < kMaxTemporaries; ++i) {
    if (!g_in_use[i].load()) {
      std::memcpy(g_temporaries[i].data(), path.c_str(), path.size() + 1);
      g_in_use[i].store(true);
      return static_cast<int>(i);
    }
  }
  return -1;  // more outputs at once than slots: this one is not cleaned on a signal
}

void unregister_temporary(int slot) {
  if (slot >= 0) g_in_use[static_cast<size_t>(slot)].store(false);
}

// /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N name an open descriptor: write through it.
bool names_a_descriptor(const std::string& path) {
  return path == "/dev/stdout" || path == "/dev/stderr" || path.rfind("/dev/fd/", 0) == 0 ||
         path.rfind("/proc/self/fd/", 0) == 0;
}

// A path that exists and is not a regular file (after following symlinks).
bool is_special_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  return !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

// Where a regular output really lives: a symlink's final target, dangling or not (so that the link is
// kept), else the path.
std::string replaced_path(const std::string& path) {
  return output_target(path);
}

// PATH.tmp.PID files beside the target whose process is gone: left by a killed run, never an output.
void remove_stale_temporaries(const std::string& target) {
  const fs::path p(target);
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  const std::string prefix = p.filename().string() + ".tmp.";
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string pid_text = name.substr(prefix.size());
    if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos) continue;
    const long pid = std::strtol(pid_text.c_str(), nullptr, 10);
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      std::error_code ignored;
      fs::remove(it->path(), ignored);
    }
  }
}

}  // namespace

void check_output_path(const std::string& path) {
  if (path.empty() || path == "-" || names_a_descriptor(path) || is_special_file(path)) return;
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw InputError(fmt::format("{}: is a directory, not an output file", path));
  const std::string real = replaced_path(path);
  const fs::path parent = fs::path(real).parent_path();
  const fs::path dir = parent.empty() ? fs::path(".") : parent;
  if (!fs::is_directory(dir, ec)) {
    throw InputError(fmt::format("{}: cannot write here: directory '{}' does not exist", path, dir.string()));
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    throw InputError(
        fmt::format("{}: cannot write in directory '{}': {}", path, dir.string(), std::strerror(errno)));
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
  if (names_a_descriptor(path) || is_special_file(path)) {
    // Written through: a device or a pipe is never replaced by a regular file.
    file_ = std::fopen(path.c_str(), "wb");
    if (!file_) throw InputError(fmt::format("{}: cannot open for writing: {}", path, std::strerror(errno)));
    return;
  }
  const std::string real = replaced_path(path);
  remove_stale_temporaries(real);
  temporary_ = fmt::format("{}.tmp.{}", real, ::getpid());
  slot_ = register_temporary(temporary_);
  file_ = std::fopen(temporary_.c_str(), "wb");
  if (!file_) {
    unregister_temporary(slot_);
    throw InputError(fmt::format("{}: cannot create the temporary file {} beside it: {}", path, temporary_,
                                 std::strerror(errno)));
  }
}

StreamedOutputFile::~StreamedOutputFile() {
  if (file_ && file_ != stdout) {
    std::fclose(file_);
    if (!temporary_.empty()) std::remove(temporary_.c_str());
  }
  unregister_temporary(slot_);
}

void StreamedOutputFile::write(const std::string& text) {
  if (!file_) throw InputError(fmt::format("{}: written after it was closed", path_));
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) {
    throw InputError(
        fmt::format("{}: write failed: {}", path_ == "-" ? "standard output" : path_, std::strerror(errno)));
  }
}

void StreamedOutputFile::commit() {
  if (!file_) return;
  if (file_ == stdout) {
    file_ = nullptr;
    if (std::fflush(stdout) != 0) throw InputError("standard output: write failed");
    return;
  }
  errno = 0;
  const bool written = std::fflush(file_) == 0 && std::ferror(file_) == 0;
  const int write_error = errno;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (temporary_.empty()) {
    if (!written || !closed) {
      throw InputError(
          fmt::format("{}: write failed: {}", path_, std::strerror(write_error != 0 ? write_error : EIO)));
    }
    return;
  }
  if (!written || !closed) {
    std::remove(temporary_.c_str());
    unregister_temporary(slot_);
    throw InputError(fmt::format("{}: write failed: {} (the existing file, if any, is unchanged)", path_,
                                 std::strerror(write_error != 0 ? write_error : EIO)));
  }
  const std::string real = replaced_path(path_);
  if (std::rename(temporary_.c_str(), real.c_str()) != 0) {
    const int error = errno;
    std::remove(temporary_.c_str());
    unregister_temporary(slot_);
    throw InputError(fmt::format("{}: cannot replace the file: {}", path_, std::strerror(error)));
  }
  unregister_temporary(slot_);
}

}  // namespace pipesim
