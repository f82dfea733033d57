# The layering rule (docs/design.md, "Architecture"): a layer includes only its own headers and those of the
# layers below it. Run as `cmake -DSOURCE_DIR=... -P cmake/check_layers.cmake`; every build runs it (target
# pipesim_layer_check) and so does ctest, so an upward include — the start of a cycle — fails both.
#
# Each entry: a directory, then the directories it may include from, separated by ':'.
set(PIPESIM_LAYERS
  "base"
  "sim:base"
  "schedules:base:sim"
  "cost_models:base:sim:schedules"
  "analysis:base:sim:schedules:cost_models"
  "io:base:sim:schedules:cost_models:analysis"
  "report:base:sim:schedules:cost_models:analysis:io"
  "executor:base:sim:schedules:cost_models:analysis:io"
  "api:base:sim:schedules:cost_models:analysis:io:report:executor"
  "cli:base:sim:schedules:cost_models:analysis:io:report:executor:api:gpu_calibration")
set(PIPESIM_KNOWN_DIRS base sim schedules cost_models analysis io report executor api cli gpu_calibration)

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
