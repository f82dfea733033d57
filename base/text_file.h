#pragma once
// Reading the text inputs (scenarios, profiles, CSV schedules) the same way everywhere: a UTF-8 byte-order
// mark is dropped and CR-LF or lone CR line ends become LF, so files saved by any editor parse alike.
#include <cstddef>
#include <string>
#include <string_view>

namespace pipesim {

// The largest input file read: far above any scenario, profile or CSV schedule, low enough that /dev/zero
// fails.
inline constexpr std::size_t kMaxTextFileBytes = std::size_t{256} << 20;

// The file's text, normalised; throws InputError "<path>: cannot open the <what>: <reason>" (also for a
// directory and for a file over kMaxTextFileBytes).
std::string read_text_file(const std::string& path, const std::string& what);

// True when `text` is well-formed UTF-8 (no stray continuation bytes, overlong forms, surrogates or code
// points above U+10FFFF): names read from input end up in JSON, which holds only UTF-8.
bool is_valid_utf8(std::string_view text);

// Drops a leading UTF-8 BOM and turns CR-LF and lone CR into LF.
std::string normalize_text(std::string text);

}  // namespace pipesim
