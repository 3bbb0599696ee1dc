# `jager plugins` (src/cmd_plugins.c) searches the folders the core's loader searches:
# the same compile definitions as sdk/CMakeLists.txt gives the loader.
target_compile_definitions(jager_cli PRIVATE
  JAGER_PLUGIN_BUILD_DIR="${JAGER_PLUGIN_BUILD_DIR}"
  JAGER_PLUGIN_INSTALL_DIR="${CMAKE_INSTALL_FULL_LIBDIR}/jager/plugins")
target_link_libraries(jager_cli PRIVATE ${CMAKE_DL_LIBS})
