# The layering rule (docs/design.md, "Architecture"): a layer, and its tests under tests/<layer>/, include only
# its own headers and those of the layers below it. Run as `cmake -DSOURCE_DIR=... -DLAYER_TABLE=... -P cmake/check_layers.cmake`; every build runs it (target
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

# The layers a file's include stands for: its directory's, or for a test helper (tests/...) what that helper
# includes in turn (tests/<layer>/x.h is <layer>'s; a top-level tests/x.h stands for whatever it includes).
function(included_layers file out)
  set(result "")
  file(STRINGS "${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"[^\"/]+/")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"([^\"]+)\".*" "\\1" path "${line}")
    string(REGEX REPLACE "/.*" "" dir "${path}")
    if(dir STREQUAL "tests")
      string(REGEX MATCH "^tests/([^/]+)/" sub "${path}")
      if(sub)
        list(APPEND result "${CMAKE_MATCH_1}")
      elseif(EXISTS "${SOURCE_DIR}/${path}")
        included_layers("${SOURCE_DIR}/${path}" helper)
        list(APPEND result ${helper})
      endif()
    else()
      list(APPEND result "${dir}")
    endif()
  endforeach()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

# A layer's files, and its tests (tests/<layer>/): a test includes only its layer and the layers below it.
foreach(layer_line IN LISTS PIPESIM_LAYERS)
  string(REPLACE ":" ";" allowed "${layer_line}")
  list(GET allowed 0 layer)
  file(GLOB_RECURSE files "${SOURCE_DIR}/${layer}/*.h" "${SOURCE_DIR}/${layer}/*.cpp"
       "${SOURCE_DIR}/tests/${layer}/*.h" "${SOURCE_DIR}/tests/${layer}/*.cpp")
  foreach(file IN LISTS files)
    included_layers("${file}" dirs)
    list(REMOVE_DUPLICATES dirs)
    foreach(dir IN LISTS dirs)
      list(FIND PIPESIM_KNOWN_DIRS "${dir}" known)
      list(FIND allowed "${dir}" ok)
      if(known GREATER -1 AND ok EQUAL -1)
        file(RELATIVE_PATH rel "${SOURCE_DIR}" "${file}")
        string(APPEND violations "  ${rel}: includes ${dir}/  (${layer}/ may include only: ${allowed})\n")
      endif()
    endforeach()
  endforeach()
endforeach()
if(violations)
  message(FATAL_ERROR "check_layers: upward includes (a layer and its tests may include only the layers below "
                      "it, docs/design.md \"Architecture\"):\n${violations}")
endif()
