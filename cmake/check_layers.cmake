# The layering rule (docs/design.md, "Architecture"): a layer includes only its own headers and those of the
# layers below it. Run as `cmake -DSOURCE_DIR=... -DLAYER_TABLE=... -P cmake/check_layers.cmake`; every build runs it (target
# pipesim_layer_check) and so does ctest, so an upward include — the start of a cycle — fails both.
#
# The table (PIPESIM_LAYERS, PIPESIM_KNOWN_DIRS) is written by cmake/layers.cmake from the layer declarations in
# CMakeLists.txt: each entry is a directory, then the directories it may include from, separated by ':'.
if(NOT LAYER_TABLE OR NOT EXISTS "${LAYER_TABLE}")
  message(FATAL_ERROR "check_layers: pass -DLAYER_TABLE=<build>/pipesim_layers.cmake (written by configuring)")
endif()
include("${LAYER_TABLE}")

if(NOT SOURCE_DIR)
  message(FATAL_ERROR "check_layers: pass -DSOURCE_DIR=<the source tree>")
endif()
set(violations "")
foreach(layer_line IN LISTS PIPESIM_LAYERS)
  string(REPLACE ":" ";" allowed "${layer_line}")
  list(GET allowed 0 layer)
  file(GLOB_RECURSE files "${SOURCE_DIR}/${layer}/*.h" "${SOURCE_DIR}/${layer}/*.cpp")
  foreach(file IN LISTS files)
    file(STRINGS "${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"[^\"/]+/")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"([^\"/]+)/.*" "\\1" dir "${line}")
      list(FIND PIPESIM_KNOWN_DIRS "${dir}" known)
      list(FIND allowed "${dir}" ok)
      if(known GREATER -1 AND ok EQUAL -1)
        file(RELATIVE_PATH rel "${SOURCE_DIR}" "${file}")
        string(APPEND violations "  ${rel}: ${line}  (${layer}/ may include only: ${allowed})\n")
      endif()
    endforeach()
  endforeach()
endforeach()
if(violations)
  message(FATAL_ERROR "check_layers: upward includes (a layer may include only the layers below it, "
                      "docs/design.md \"Architecture\"):\n${violations}")
endif()
