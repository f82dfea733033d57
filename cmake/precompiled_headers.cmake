# Precompiled headers: the standard and third-party headers most files include, parsed once per target instead
# of once per file. On 2 cores this is what keeps a clean build, and the sanitizer build beside it, inside CI's
# budget (README, "Building"). PIPESIM_PCH=OFF checks that every file still includes what it uses.
option(PIPESIM_PCH "precompile the common standard and third-party headers" ON)
set(PIPESIM_PCH_HEADERS
    <algorithm> <array> <chrono> <cmath> <cstddef> <cstdint> <cstdlib> <filesystem> <fstream> <functional>
    <iostream> <limits> <map> <memory> <optional> <set> <span> <sstream> <stdexcept> <string> <string_view>
    <tuple> <unordered_map> <utility> <vector> <fmt/format.h>)

# A target's own list (every library and executable of the project); `extra` adds what only it includes often.
function(pipesim_precompile target)
  if(PIPESIM_PCH)
    target_precompile_headers(${target} PRIVATE ${PIPESIM_PCH_HEADERS} ${ARGN})
  endif()
endfunction()
