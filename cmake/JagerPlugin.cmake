# jager_plugin_require(<name> <found> "<what is missing, and the package that has it>")
# In plugins/<name>/CMakeLists.txt, after looking for a dependency: when <found> is false,
# one warning says why the plugin is not built and how to get it (or to turn it off),
# and the rest of the plugin's CMakeLists.txt is skipped. A macro, so that return() leaves
# the plugin's directory.
macro(jager_plugin_require name found why)
  if(NOT ${found})
    string(TOUPPER "${name}" _jpr_upper)
    message(WARNING "plugin ${name}: not built: ${why}. "
      "Install it, or configure with -DJAGER_PLUGIN_${_jpr_upper}=OFF to leave the plugin out quietly.")
    return()
  endif()
endmacro()

# jager_add_plugin(<name> SOURCES ... [LIBS ...])
# Builds libjager-<name>.so as a MODULE into the build tree's plugin folder, exporting only
# the entry symbol (version script), and installs it into the plugin folder.
function(jager_add_plugin name)
  cmake_parse_arguments(P "" "" "SOURCES;LIBS" ${ARGN})
  set(t jager-${name})
  add_library(${t} MODULE ${P_SOURCES})
  set_target_properties(${t} PROPERTIES PREFIX "lib" OUTPUT_NAME "jager-${name}"
    LIBRARY_OUTPUT_DIRECTORY "${JAGER_PLUGIN_BUILD_DIR}")
  target_include_directories(${t} PRIVATE "${PROJECT_SOURCE_DIR}/sdk/include")
  target_link_options(${t} PRIVATE "-Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/plugin.version" "-Wl,-z,defs")
  target_link_libraries(${t} PRIVATE ${P_LIBS})
  install(TARGETS ${t} LIBRARY DESTINATION "${JAGER_PLUGIN_INSTALL_DIR}")
endfunction()
