# pipesim_layer(NAME DIRS dir... [EXCLUDE file...] [USES layer...] [LINKS target...] [PCH_FROM layer]
#               [ABOUT "what it holds"])
# Declares a layer: the static library pipesim_NAME from the .cpp files of its directories (minus the EXCLUDE
# file names), linked PUBLIC to the layers it USES and to the LINKS targets, with the project's precompiled
# headers and sanitizer flags. It also records the layer in the table that cmake/check_layers.cmake enforces:
# the files of its directories may include headers of the layer itself and of every layer it uses, directly
# or through another (the transitive closure). One declaration gives both the link graph and the rule, so they
# cannot drift apart. PCH_FROM reuses another layer's precompiled header instead of building one: only for a
# layer compiled with exactly that layer's flags and definitions (GCC refuses a header built otherwise).
# ABOUT says what the layer holds, for the maps drawn from the declarations (build/pipesim_layer_map.tsv).
set_property(GLOBAL PROPERTY PIPESIM_LAYER_LINES "")
set(PIPESIM_LAYER_TABLE ${CMAKE_BINARY_DIR}/pipesim_layers.cmake)

function(pipesim_layer name)
  cmake_parse_arguments(L "" "PCH_FROM;ABOUT" "DIRS;EXCLUDE;USES;LINKS" ${ARGN})
  set(sources "")
  foreach(dir IN LISTS L_DIRS)
    file(GLOB dir_sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${dir}/*.cpp)
    list(APPEND sources ${dir_sources})
  endforeach()
  foreach(excluded IN LISTS L_EXCLUDE)
    list(FILTER sources EXCLUDE REGEX ".*/${excluded}$")
  endforeach()
  add_library(pipesim_${name} STATIC ${sources})
  target_include_directories(pipesim_${name} PUBLIC ${CMAKE_SOURCE_DIR})
  # The directories this layer's files may include from: its own and those of every layer below it.
  list(GET L_DIRS 0 own_dir)
  string(REGEX REPLACE "/.*" "" own_dir "${own_dir}")
  set(allowed ${own_dir})
  foreach(used IN LISTS L_USES)
    target_link_libraries(pipesim_${name} PUBLIC pipesim_${used})
    get_property(used_allowed GLOBAL PROPERTY PIPESIM_LAYER_ALLOWED_${used})
    list(APPEND allowed ${used_allowed})
  endforeach()
  list(REMOVE_DUPLICATES allowed)
  set_property(GLOBAL PROPERTY PIPESIM_LAYER_ALLOWED_${name} "${allowed}")
  string(REPLACE ";" ":" line "${allowed}")
  set_property(GLOBAL APPEND PROPERTY PIPESIM_LAYER_LINES "${line}")
  # The map (scripts/layer_map.py draws docs/design.md's floors and the README's directory list from it).
  string(REPLACE ";" " " uses_text "${L_USES}")
  set_property(GLOBAL APPEND_STRING PROPERTY PIPESIM_LAYER_MAP "${name}\t${own_dir}\t${uses_text}\t${L_ABOUT}\n")
  if(L_LINKS)
    target_link_libraries(pipesim_${name} PUBLIC ${L_LINKS})
  endif()
  if(sources AND PIPESIM_PCH AND L_PCH_FROM)
    target_precompile_headers(pipesim_${name} REUSE_FROM pipesim_${L_PCH_FROM})
  elseif(sources)
    pipesim_precompile(pipesim_${name})
  endif()
  pipesim_instrument(pipesim_${name} COVERAGE)
endfunction()

# Writes the table of the layers declared so far for cmake/check_layers.cmake: one line per layer, its
# directory first, then every directory it may include from.
function(pipesim_write_layer_table)
  get_property(lines GLOBAL PROPERTY PIPESIM_LAYER_LINES)
  set(known "")
  set(text "# Written by cmake/layers.cmake from the pipesim_layer() declarations in CMakeLists.txt.\n")
  string(APPEND text "set(PIPESIM_LAYERS\n")
  foreach(line IN LISTS lines)
    string(APPEND text "  \"${line}\"\n")
    string(REGEX REPLACE ":.*" "" dir "${line}")
    list(APPEND known ${dir})
  endforeach()
  string(APPEND text ")\n")
  list(REMOVE_DUPLICATES known)
  string(REPLACE ";" " " known "${known}")
  string(APPEND text "set(PIPESIM_KNOWN_DIRS ${known})\n")
  file(WRITE ${PIPESIM_LAYER_TABLE} "${text}")
  get_property(map GLOBAL PROPERTY PIPESIM_LAYER_MAP)
  file(WRITE ${CMAKE_BINARY_DIR}/pipesim_layer_map.tsv "${map}")
endfunction()
