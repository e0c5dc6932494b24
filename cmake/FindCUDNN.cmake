# FindCUDNN.cmake: find cuDNN 9 (headers, the umbrella library and its version).
#
# Searches, in order: CUDNN_ROOT / CUDNN_PATH (CMake or environment variables), the CUDA
# toolkit, the Debian/Ubuntu multiarch directories, a pip wheel's site-packages/nvidia/cudnn,
# and CUDA_PATH on Windows. Reads the version from cudnn_version.h and fails when it is not 9.x.
#
# Result: CUDNN_FOUND, CUDNN_VERSION, CUDNN_INCLUDE_DIR, CUDNN_LIBRARY, imported target
# CUDNN::cudnn.

set(_cudnn_hints)
foreach(_v CUDNN_ROOT CUDNN_PATH)
  if(DEFINED ${_v})
    list(APPEND _cudnn_hints "${${_v}}")
  endif()
  if(DEFINED ENV{${_v}})
    list(APPEND _cudnn_hints "$ENV{${_v}}")
  endif()
endforeach()
if(CUDAToolkit_LIBRARY_ROOT)
  list(APPEND _cudnn_hints "${CUDAToolkit_LIBRARY_ROOT}")
endif()
if(CUDAToolkit_INCLUDE_DIRS)
  foreach(_d ${CUDAToolkit_INCLUDE_DIRS})
    get_filename_component(_p "${_d}" DIRECTORY)
    list(APPEND _cudnn_hints "${_p}")
  endforeach()
endif()
if(DEFINED ENV{CUDA_PATH})
  list(APPEND _cudnn_hints "$ENV{CUDA_PATH}")
endif()
list(APPEND _cudnn_hints /usr/local/cuda /usr)

# A pip wheel (nvidia-cudnn-cu12/cu13): site-packages/nvidia/cudnn of any Python we can ask.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  execute_process(
    COMMAND "${Python3_EXECUTABLE}" -c
            "import sysconfig,os;p=os.path.join(sysconfig.get_paths()['purelib'],'nvidia','cudnn');print(p if os.path.isdir(p) else '')"
    OUTPUT_VARIABLE _cudnn_wheel OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(_cudnn_wheel)
    list(APPEND _cudnn_hints "${_cudnn_wheel}")
  endif()
endif()

find_path(CUDNN_INCLUDE_DIR cudnn_version.h
  HINTS ${_cudnn_hints}
  PATH_SUFFIXES include include/x86_64-linux-gnu include/aarch64-linux-gnu
  PATHS /usr/include/x86_64-linux-gnu /usr/include/aarch64-linux-gnu)

find_library(CUDNN_LIBRARY
  NAMES cudnn libcudnn.so.9 cudnn64_9
  HINTS ${_cudnn_hints}
  PATH_SUFFIXES lib64 lib lib/x64 lib/x86_64-linux-gnu lib/aarch64-linux-gnu
  PATHS /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu)

set(CUDNN_VERSION "")
if(CUDNN_INCLUDE_DIR AND EXISTS "${CUDNN_INCLUDE_DIR}/cudnn_version.h")
  file(READ "${CUDNN_INCLUDE_DIR}/cudnn_version.h" _cudnn_vh)
  string(REGEX MATCH "define CUDNN_MAJOR +([0-9]+)" _m "${_cudnn_vh}")
  set(_major "${CMAKE_MATCH_1}")
  string(REGEX MATCH "define CUDNN_MINOR +([0-9]+)" _m "${_cudnn_vh}")
  set(_minor "${CMAKE_MATCH_1}")
  string(REGEX MATCH "define CUDNN_PATCHLEVEL +([0-9]+)" _m "${_cudnn_vh}")
  set(_patch "${CMAKE_MATCH_1}")
  set(CUDNN_VERSION "${_major}.${_minor}.${_patch}")
  if(NOT _major STREQUAL "9")
    message(FATAL_ERROR
      "nnop needs cuDNN 9.x, but ${CUDNN_INCLUDE_DIR}/cudnn_version.h is cuDNN ${CUDNN_VERSION}. "
      "Point CUDNN_ROOT at a cuDNN 9 installation.")
  endif()
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CUDNN
  REQUIRED_VARS CUDNN_LIBRARY CUDNN_INCLUDE_DIR
  VERSION_VAR CUDNN_VERSION)

if(CUDNN_FOUND AND NOT TARGET CUDNN::cudnn)
  add_library(CUDNN::cudnn UNKNOWN IMPORTED)
  set_target_properties(CUDNN::cudnn PROPERTIES
    IMPORTED_LOCATION "${CUDNN_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CUDNN_INCLUDE_DIR}")
endif()
mark_as_advanced(CUDNN_INCLUDE_DIR CUDNN_LIBRARY)
