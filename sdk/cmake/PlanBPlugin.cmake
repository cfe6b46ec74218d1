# planb_add_plugin(<target> <sources>...): a Plan B plugin module (.so) that exports only its entry point.
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
endfunction()
