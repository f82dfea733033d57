#include "base/error_message.h"

#include <cxxabi.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <new>
#include <system_error>
#include <typeinfo>

#include "base/errors.h"

namespace pipesim {
namespace {

std::string bounded(const char* text) {
  std::string message = text;
  if (message.size() > kMaxErrorChars) {
    message = fmt::format("{}... ({} characters)", message.substr(0, kMaxErrorChars), message.size());
  }
  return message;
}

std::string type_name(const std::exception& error) {
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> name(
      abi::__cxa_demangle(typeid(error).name(), nullptr, nullptr, &status), &std::free);
  return status == 0 && name ? name.get() : typeid(error).name();
}

}  // namespace

std::string error_message(const std::exception& error) {
  if (dynamic_cast<const InputError*>(&error) || dynamic_cast<const DeadlockError*>(&error) ||
      dynamic_cast<const ScheduleError*>(&error) || dynamic_cast<const InternalError*>(&error)) {
    return bounded(error.what());
  }
  if (dynamic_cast<const std::bad_alloc*>(&error)) {
    return "out of memory: the system refused an allocation; lower N, m or the batches, or the ceiling "
           "(--max-memory-gb)";
  }
  // A filesystem error names its paths: say which path and why.
  if (const auto* fs_error = dynamic_cast<const std::filesystem::filesystem_error*>(&error)) {
    std::string paths;
    for (const auto* p : {&fs_error->path1(), &fs_error->path2()}) {
      if (!p->empty()) paths += fmt::format("{}{}", paths.empty() ? "" : " and ", p->string());
    }
    return bounded(
        fmt::format("{}: {}", paths.empty() ? "a file operation" : paths, fs_error->code().message())
            .c_str());
  }
  if (const auto* system = dynamic_cast<const std::system_error*>(&error)) {
    return bounded(fmt::format("the system refused a request: {}", system->code().message()).c_str());
  }
  // typeid names the library (YAML::..., nlohmann::...) so that the report can be traced to its source.
  return bounded(fmt::format("internal error: an unexpected exception ({}) reached the top: {}; this is a "
                             "pipesim bug, please report it with the input",
                             type_name(error), error.what())
                     .c_str());
}

}  // namespace pipesim
