# Building env plugins (envs/plugin.h): installed beside recurConfig.cmake, which includes it, and
# included by recur's own build for the in-tree example (tests/CMakeLists.txt).
#
#   find_package(recur 0.1 REQUIRED)
#   recur_add_env_plugin(tmaze_plugin tmaze.cc)   # -> libtmaze_plugin.so
#
# A plugin is a MODULE library (dlopen'ed, never linked against) that links only
# recur::plugin_api: recur's headers, C++20 and fmt. It links none of recur's libraries: the host
# program (`recur`, or one built with recur_export_for_plugins) exports the Env, Space, Options
# and Canvas symbols it uses, and the loader resolves them at load time. Hidden visibility keeps
# the plugin's own symbols (and its copies of inline functions) from clashing with the host's or
# another plugin's; only the entry point that RECUR_ENV_PLUGIN defines is exported.
function(recur_add_env_plugin name)
  if(ARGC LESS 2)
    message(FATAL_ERROR "recur_add_env_plugin(${name}): give at least one source file")
  endif()
  add_library(${name} MODULE ${ARGN})
  set_target_properties(${name} PROPERTIES
    POSITION_INDEPENDENT_CODE ON
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    CXX_EXTENSIONS OFF)
  target_compile_features(${name} PRIVATE cxx_std_20)
  target_link_libraries(${name} PRIVATE recur::plugin_api)
  # Symbols the host must supply are left undefined here (the default for a MODULE on Linux);
  # a plugin that uses something recur does not export fails at load, naming the symbol.
endfunction()
