#pragma once
// The one line `pipesim` prints for an exception that ends a command. pipesim's own errors (base/errors.h)
// already name the file, line and key; anything else reaching the top (a yaml-cpp or JSON-library exception,
// a standard-library failure) is a pipesim bug or a resource failure, and says so instead of passing a
// third-party message on bare. Every message is bounded in length.
#include <exception>
#include <string>

namespace pipesim {

// At most this many characters of an exception's text are shown.
inline constexpr size_t kMaxErrorChars = 2000;

std::string error_message(const std::exception& error);

}  // namespace pipesim
