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
