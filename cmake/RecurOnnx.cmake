# Decides whether `recur convert export --to onnx` is built (RECUR_WITH_ONNX) from RECUR_ONNX:
#   AUTO  build it when Debian's libonnx-dev (ONNX's CMake package) is found
#   ON    require it; fail at configure time when it is missing
#   OFF   leave it out: the export then says how to get a build that has it
string(TOUPPER "${RECUR_ONNX}" _recur_onnx)
if(NOT _recur_onnx MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "RECUR_ONNX='${RECUR_ONNX}': expected AUTO, ON or OFF")
endif()

set(RECUR_WITH_ONNX OFF)
if(NOT _recur_onnx STREQUAL "OFF")
  # ONNX's config (1.12) links protobuf::libprotobuf without finding Protobuf itself.
  find_package(Protobuf QUIET)
  if(Protobuf_FOUND)
    find_package(ONNX QUIET CONFIG)
  endif()
  if(TARGET onnx)
    set(RECUR_WITH_ONNX ON)
  elseif(_recur_onnx STREQUAL "ON")
    message(FATAL_ERROR "RECUR_ONNX=ON but ONNX's CMake package was not found (Debian: apt-get "
                        "install libonnx-dev libprotobuf-dev, or tools/install-deps.sh); or "
                        "configure with -DRECUR_ONNX=OFF")
  endif()
endif()
