# planb_add_plugin(<target> <sources>...): a Plan B plugin module (.so) that exports only its entry point.
# planb_add_conformance_test(<name> TYPE <type> [SCHEME <scheme>] [MAP <map>] [OPTIONS <k=v>...]
#                            DATA <first.xml> <second.xml> EXPECT <rows.csv> [UNORDERED] [PLUGINS <target>...]):
#   a CTest that runs `planb conform` (the installed planb, PLANB_EXECUTABLE) against the plugins built here
#   (PLUGINS, default: every planb_add_plugin target of the project), from their build directory. Relative paths
#   are the current source directory's. UNORDERED (since SDK 7.11): the rows are compared with EXPECT as a set.
#   Needs enable_testing() (or include(CTest)) in the project.
#
# Plugins are built optimised: a single-config generator with no CMAKE_BUILD_TYPE gets Release (a plugin runs
# on every lookup; an unoptimised one is several times slower and its bench figures mislead).
get_property(_planb_multi_config GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
if(NOT _planb_multi_config AND NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type (Plan B plugins default to Release)" FORCE)
  message(STATUS "Plan B: no CMAKE_BUILD_TYPE given; building plugins as Release")
endif()
unset(_planb_multi_config)

function(planb_add_plugin target)
  add_library(${target} MODULE ${ARGN})
  target_link_libraries(${target} PRIVATE PlanB::sdk)
  set_target_properties(${target} PROPERTIES
    PREFIX "libplanb_"
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  if(DEFINED PLANB_PLUGIN_OUTPUT_DIR)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${PLANB_PLUGIN_OUTPUT_DIR}")
  endif()
  set_property(GLOBAL APPEND PROPERTY PLANB_PLUGIN_TARGETS ${target})
endfunction()

function(planb_add_conformance_test name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "UNORDERED" "TYPE;SCHEME;MAP;EXPECT" "DATA;OPTIONS;PLUGINS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "planb_add_conformance_test(${name}): unexpected arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_TYPE)
    message(FATAL_ERROR "planb_add_conformance_test(${name}): TYPE <store type> is required")
  endif()
  list(LENGTH arg_DATA _count)
  if(NOT _count EQUAL 2)
    message(FATAL_ERROR "planb_add_conformance_test(${name}): DATA takes two files (first, second), got ${_count}")
  endif()
  if(NOT arg_EXPECT)
    message(FATAL_ERROR "planb_add_conformance_test(${name}): EXPECT <rows.csv> is required")
  endif()
  if(NOT PLANB_EXECUTABLE)
    message(FATAL_ERROR "planb_add_conformance_test(${name}): PLANB_EXECUTABLE (the planb program) is not set")
  endif()
  set(_command "${PLANB_EXECUTABLE}" conform --type "${arg_TYPE}")
  if(arg_SCHEME)
    list(APPEND _command --scheme "${arg_SCHEME}")
  endif()
  if(arg_MAP)
    list(APPEND _command --map "${arg_MAP}")
  endif()
  foreach(_option IN LISTS arg_OPTIONS)
    list(APPEND _command --option "${_option}")
  endforeach()
  set(_plugins ${arg_PLUGINS})
  if(NOT _plugins)
    get_property(_plugins GLOBAL PROPERTY PLANB_PLUGIN_TARGETS)
  endif()
  foreach(_plugin IN LISTS _plugins)
    list(APPEND _command --plugin-dir "$<TARGET_FILE_DIR:${_plugin}>")
  endforeach()
  list(APPEND _command --data)
  foreach(_file IN LISTS arg_DATA)
    get_filename_component(_file "${_file}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND _command "${_file}")
  endforeach()
  get_filename_component(_expect "${arg_EXPECT}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  list(APPEND _command --expect "${_expect}")
  if(arg_UNORDERED)
    list(APPEND _command --unordered)
  endif()
  add_test(NAME ${name} COMMAND ${_command})
endfunction()
