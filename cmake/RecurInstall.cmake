# recur as a CMake package. `cmake --install build [--prefix P]` puts
#   P/lib/librecur_{core,envs,policy,agent}.a (+ librecur_kernels.a in CUDA builds)  the libraries
#   P/include/recur/{core,envs,policy,agent}/...  the public headers and what they include
#   P/lib/cmake/recur/recur{Config,ConfigVersion,Targets}.cmake
#   P/bin/recur                              the command-line tool (tools/CMakeLists.txt)
# and a program uses it with find_package(recur) and target_link_libraries(app PRIVATE
# recur::recur); includes keep the source tree's form ("envs/registry.h"). docs/LIBRARY.md says
# which headers are public. The training API, recur_agent, is the component recur::agent
# (find_package(recur COMPONENTS agent); section "recur::agent" below).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(RECUR_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/recur)
set(RECUR_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/recur)

# recur::recur: the one target a program links, in an installed package and in a build that adds
# recur as a subdirectory alike. The component libraries are exported as recur::core,
# recur::envs, recur::policy and recur::kernels (an empty interface in CPU-only builds).
add_library(recur_library INTERFACE)
target_link_libraries(recur_library INTERFACE recur_envs recur_policy)
target_compile_features(recur_library INTERFACE cxx_std_20)  # the public headers are C++20
add_library(recur::recur ALIAS recur_library)
set_target_properties(recur_library PROPERTIES EXPORT_NAME recur)
set_target_properties(recur_core PROPERTIES EXPORT_NAME core)
set_target_properties(recur_kernels PROPERTIES EXPORT_NAME kernels)
set_target_properties(recur_envs PROPERTIES EXPORT_NAME envs)
set_target_properties(recur_policy PROPERTIES EXPORT_NAME policy)
install(TARGETS recur_core recur_kernels recur_envs recur_policy recur_library EXPORT recurTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${RECUR_INSTALL_INCLUDEDIR})
if(RECUR_WITH_CUDA)
  # The cuDNN that this build found (cmake/RecurCuda.cmake), by absolute path: cuDNN ships no CMake
  # package, and a consumer must link the same library that recur was compiled against.
  set_target_properties(recur_cudnn PROPERTIES EXPORT_NAME cudnn)
  install(TARGETS recur_cudnn EXPORT recurTargets)
endif()
if(RECUR_WITH_NCCL)
  # NCCL beside cuDNN, by absolute path as cuDNN (the GPU learners' all-reduce, agent/dist).
  set_target_properties(recur_nccl PROPERTIES EXPORT_NAME nccl)
  install(TARGETS recur_nccl EXPORT recurTargets)
endif()
if(RECUR_WITH_MUJOCO)
  # MuJoCo by absolute path, as cuDNN (cmake/RecurMuJoCo.cmake: the wheel has no CMake package);
  # an installed `recur` finds it through its run path (tools/CMakeLists.txt).
  set_target_properties(recur_mujoco PROPERTIES EXPORT_NAME mujoco)
  install(TARGETS recur_mujoco EXPORT recurTargets)
endif()
if(RECUR_WITH_XSMM)
  # LIBXSMM's static archives by absolute path (Debian's libxsmm-dev has no CMake package):
  # recur_policy is static, so a program that links it links them too.
  set_target_properties(recur_xsmm PROPERTIES EXPORT_NAME xsmm)
  install(TARGETS recur_xsmm EXPORT recurTargets)
endif()
install(EXPORT recurTargets NAMESPACE recur:: DESTINATION ${RECUR_INSTALL_CMAKEDIR})

# The public headers (docs/LIBRARY.md): envs, the registry and VectorEnv; the policy actor and
# checkpoints; errors, options, RNG and logging.
set(RECUR_PUBLIC_HEADERS
    core/error.h core/logging.h core/options.h core/rng.h
    envs/space.h envs/env.h envs/registry.h envs/vector_env.h
    envs/render/canvas.h envs/render/frame.h envs/render/renderer.h
    policy/policy_spec.h policy/policy_actor.h policy/policy_checkpoint.h policy/checkpoint.h
    policy/tensor.h policy/device_choice.h)
# What the public headers include: installed so that they compile, not part of the API. The
# install test (tests/CMakeLists.txt, install.example) compiles every installed header against
# the installed tree alone, so a header missing here fails there.
set(RECUR_SUPPORT_HEADERS
    core/worker_pool.h envs/batch_env.h
    policy/aligned.h policy/canonical_weights.h policy/convert/flat_layout.h policy/core_spec.h
    policy/devices.h policy/eigen.h policy/executor.h policy/gpu_executors.h policy/mlp.h
    policy/obs_normalizer.h policy/squashed_action.h)
foreach(_recur_header IN LISTS RECUR_PUBLIC_HEADERS RECUR_SUPPORT_HEADERS)
  get_filename_component(_recur_dir ${_recur_header} DIRECTORY)
  install(FILES ${PROJECT_SOURCE_DIR}/${_recur_header}
          DESTINATION ${RECUR_INSTALL_INCLUDEDIR}/${_recur_dir})
endforeach()

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/recurConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/recurConfig.cmake
                              INSTALL_DESTINATION ${RECUR_INSTALL_CMAKEDIR}
                              PATH_VARS RECUR_INSTALL_INCLUDEDIR)
# 0.x: a minor version may break the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/recurConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/recurConfig.cmake ${PROJECT_BINARY_DIR}/recurConfigVersion.cmake
        DESTINATION ${RECUR_INSTALL_CMAKEDIR})

# ---- Env plugins: recur::plugin_api and recur_add_env_plugin ---------------------------------
# What a plugin (envs/plugin.h) compiles against: recur's headers, C++20 and fmt, and no recur
# library (the host program supplies those symbols at load time). recur_add_env_plugin()
# (cmake/recurPluginHelpers.cmake, installed beside recurConfig.cmake and included by it) builds
# a plugin that links only this target. tools/examples/tmaze is the example; tests/CMakeLists.txt
# builds it in-tree and, in install.plugin, against the installed tree alone.
add_library(recur_plugin_api INTERFACE)
add_library(recur::plugin_api ALIAS recur_plugin_api)
set_target_properties(recur_plugin_api PROPERTIES EXPORT_NAME plugin_api)
target_include_directories(recur_plugin_api INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
  $<INSTALL_INTERFACE:${RECUR_INSTALL_INCLUDEDIR}>)
target_compile_features(recur_plugin_api INTERFACE cxx_std_20)
target_link_libraries(recur_plugin_api INTERFACE fmt::fmt)
install(TARGETS recur_plugin_api EXPORT recurTargets)
# The plugin ABI header and what it includes beyond RECUR_PUBLIC_HEADERS/RECUR_SUPPORT_HEADERS.
foreach(_recur_header IN ITEMS envs/plugin.h core/version.h)
  if(NOT _recur_header IN_LIST RECUR_PUBLIC_HEADERS AND NOT _recur_header IN_LIST RECUR_SUPPORT_HEADERS)
    get_filename_component(_recur_dir ${_recur_header} DIRECTORY)
    install(FILES ${PROJECT_SOURCE_DIR}/${_recur_header}
            DESTINATION ${RECUR_INSTALL_INCLUDEDIR}/${_recur_dir})
  endif()
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/cmake/recurPluginHelpers.cmake
        DESTINATION ${RECUR_INSTALL_CMAKEDIR})
# The same function in this build (for a project that adds recur as a subdirectory); the
# in-tree example is built by tests/CMakeLists.txt, which includes the file itself because it
# is read before this one.
include(${PROJECT_SOURCE_DIR}/cmake/recurPluginHelpers.cmake)

# ---- recur::agent: training, evaluation and recording as calls -------------------------------
# find_package(recur COMPONENTS agent) and target_link_libraries(app PRIVATE recur::agent): the
# training API (agent/training.h, docs/LIBRARY.md) for a program that registers envs of its own.
# recur_agent is static, so what it links privately (yaml-cpp, protobuf, nlohmann_json, OpenSSL's
# libcrypto, and HDF5/FFmpeg in builds with recording) is found by recurConfig.cmake when the
# component is asked for. tools/examples/own_env is the example; install.agent_example in
# tests/CMakeLists.txt builds it against the installed tree alone.
add_library(recur::agent ALIAS recur_agent)  # the same name in a build that adds recur as a subdirectory
set_target_properties(recur_agent PROPERTIES EXPORT_NAME agent)
target_compile_features(recur_agent PUBLIC cxx_std_20)  # agent/training.h is C++20, as recur::recur
install(TARGETS recur_agent EXPORT recurTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${RECUR_INSTALL_INCLUDEDIR})
# The public header, then what it includes beyond the headers installed above (not an API of
# their own; install.example compiles every installed header against the installed tree).
set(RECUR_AGENT_PUBLIC_HEADERS agent/training.h)
set(RECUR_AGENT_SUPPORT_HEADERS
    agent/config/config.h agent/evaluator.h agent/record/episode.h agent/record/recorder.h)
foreach(_recur_header IN LISTS RECUR_AGENT_PUBLIC_HEADERS RECUR_AGENT_SUPPORT_HEADERS)
  get_filename_component(_recur_dir ${_recur_header} DIRECTORY)
  install(FILES ${PROJECT_SOURCE_DIR}/${_recur_header}
          DESTINATION ${RECUR_INSTALL_INCLUDEDIR}/${_recur_dir})
endforeach()
