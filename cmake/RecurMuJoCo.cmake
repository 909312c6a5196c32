# Decides whether recur's MuJoCo envs (envs/mujoco) are built (RECUR_WITH_MUJOCO) from RECUR_MUJOCO:
#   AUTO  build them when the library is found in RECUR_MUJOCO_DIR
#   ON    require it; fail at configure time when it is missing
#   OFF   leave them out (their ids stay registered and say how to get MuJoCo)
# The library is PyPI's mujoco 3.3.7 wheel, unpacked by tools/install-deps.sh into RECUR_MUJOCO_DIR
# together with gymnasium 1.4.0's model XMLs: the same build that Gymnasium's Python envs run in
# recur's test venv, which is what makes exact parity possible. The wheel ships
# mujoco/libmujoco.so.3.3.7 (SONAME libmujoco.so.3.3.7, no unversioned link) and
# mujoco/include/mujoco/*.h, and no CMake package: recur_mujoco links the file by its full path,
# and the run path of recur's programs (build tree and, through INSTALL_RPATH_USE_LINK_PATH,
# installed) points at its directory.
set(RECUR_MUJOCO AUTO CACHE STRING "Build the MuJoCo envs: AUTO (when RECUR_MUJOCO_DIR has MuJoCo), ON, OFF")
set_property(CACHE RECUR_MUJOCO PROPERTY STRINGS AUTO ON OFF)
set(RECUR_MUJOCO_DIR /usr/local/lib/recur/mujoco-3.3.7 CACHE PATH
    "Where tools/install-deps.sh put the mujoco 3.3.7 and gymnasium 1.4.0 wheels (pip --target)")

string(TOUPPER "${RECUR_MUJOCO}" _recur_mujoco)
if(NOT _recur_mujoco MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "RECUR_MUJOCO='${RECUR_MUJOCO}': expected AUTO, ON or OFF")
endif()

set(RECUR_WITH_MUJOCO OFF)
if(NOT _recur_mujoco STREQUAL "OFF")
  set(_recur_mujoco_header ${RECUR_MUJOCO_DIR}/mujoco/include/mujoco/mujoco.h)
  set(_recur_mujoco_library ${RECUR_MUJOCO_DIR}/mujoco/libmujoco.so.3.3.7)
  if(EXISTS ${_recur_mujoco_header} AND EXISTS ${_recur_mujoco_library})
    add_library(recur_mujoco INTERFACE)
    # SYSTEM: MuJoCo's headers are not held to recur's warnings.
    target_include_directories(recur_mujoco SYSTEM INTERFACE
                               $<BUILD_INTERFACE:${RECUR_MUJOCO_DIR}/mujoco/include>)
    target_link_libraries(recur_mujoco INTERFACE ${_recur_mujoco_library})
    set(RECUR_WITH_MUJOCO ON)
  elseif(_recur_mujoco STREQUAL "ON")
    message(FATAL_ERROR "RECUR_MUJOCO=ON but MuJoCo 3.3.7 was not found: no ${_recur_mujoco_header} "
                        "or no ${_recur_mujoco_library}. Run tools/install-deps.sh (it installs it "
                        "there), set RECUR_MUJOCO_DIR, or configure with -DRECUR_MUJOCO=OFF")
  else()
    message(STATUS "recur: no MuJoCo in ${RECUR_MUJOCO_DIR} (tools/install-deps.sh installs it); "
                   "the MuJoCo envs say so when made")
  endif()
endif()
