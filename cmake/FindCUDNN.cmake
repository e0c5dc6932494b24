# FindCUDNN.cmake: find cuDNN 9 as ONE installation: its header, its library and its version
# all come from the same root, never a header of one install and a library of another.
#
# Candidate roots, in order; the first root holding both cudnn_version.h and a library wins:
#   1. CUDNN_ROOT, then CUDNN_PATH (CMake variables, then environment variables). When one is
#      given, only the given roots are searched, and configure stops if none holds cuDNN.
#   2. The CUDA toolkit (CUDAToolkit_LIBRARY_ROOT, the parent of its include directory,
#      CUDA_PATH) and /usr/local/cuda.
#   3. The Debian/Ubuntu multiarch directories (/usr/include/<triplet>, /usr/lib/<triplet>).
#   4. A pip wheel (nvidia-cudnn-cu12/cu13): <site-packages>/nvidia/cudnn of the Python found.
#   5. On Windows, the NVIDIA installer's C:/Program Files/NVIDIA/CUDNN/v9.*.
# Within a root: include/, include/<triplet>/, include/<CUDA major>.x (the Windows installer's
# include\12.8) for the header; lib64/, lib/, lib/x64/, lib/<triplet>/, lib/<CUDA major>.x/x64/
# for the library, named libcudnn.so or libcudnn.so.9 (the only name in a wheel), cudnn.lib
# or cudnn64_9.lib on Windows; bin/ or bin/<CUDA major>.x/ for cudnn64_9.dll.
#
# Result: CUDNN_FOUND, CUDNN_VERSION (9.x.y), CUDNN_VERSION_NUMBER (90x0y as in cudnn.h),
# CUDNN_ROOT_DIR, CUDNN_INCLUDE_DIR, CUDNN_LIBRARY, CUDNN_LIBRARY_DIR, CUDNN_DLL_DIR (Windows),
# imported target CUDNN::cudnn. Fails at configure when the found major is not 9, or when the
# version is below CUDNN_MIN_VERSION (a number like 90000) if the caller set it.

# Results of the previous module (cached) must not outlive a change of CUDNN_ROOT.
unset(CUDNN_INCLUDE_DIR CACHE)
unset(CUDNN_LIBRARY CACHE)

set(_cudnn_triplets x86_64-linux-gnu aarch64-linux-gnu sbsa-linux-gnu)
if(CMAKE_LIBRARY_ARCHITECTURE)
  list(PREPEND _cudnn_triplets ${CMAKE_LIBRARY_ARCHITECTURE})
  list(REMOVE_DUPLICATES _cudnn_triplets)
endif()

# The Windows installer's per-CUDA folders (include/12.8, lib/12.8/x64, bin/12.8): those of the
# toolkit's major version first, newest first, then any other.
function(_cudnn_cuda_subdirs root out)
  file(GLOB _dirs RELATIVE "${root}/include" "${root}/include/[0-9]*.[0-9]*")
  list(SORT _dirs COMPARE NATURAL ORDER DESCENDING)
  set(_first)
  set(_rest)
  foreach(_d ${_dirs})
    if(CUDAToolkit_VERSION_MAJOR AND _d MATCHES "^${CUDAToolkit_VERSION_MAJOR}\\.")
      list(APPEND _first ${_d})
    else()
      list(APPEND _rest ${_d})
    endif()
  endforeach()
  set(${out} ${_first} ${_rest} PARENT_SCOPE)
endfunction()

# Probe one root: sets _cudnn_inc, _cudnn_lib, _cudnn_dll (may be empty) in the caller.
function(_cudnn_probe root)
  set(_inc "")
  set(_lib "")
  set(_dll "")
  _cudnn_cuda_subdirs("${root}" _cuda_dirs)
  set(_inc_dirs "${root}/include")
  foreach(_t ${_cudnn_triplets})
    list(APPEND _inc_dirs "${root}/include/${_t}")
  endforeach()
  foreach(_c ${_cuda_dirs})
    list(APPEND _inc_dirs "${root}/include/${_c}")
  endforeach()
  foreach(_d ${_inc_dirs})
    if(EXISTS "${_d}/cudnn_version.h" AND EXISTS "${_d}/cudnn.h")
      set(_inc "${_d}")
      break()
    endif()
  endforeach()

  set(_lib_dirs "${root}/lib64" "${root}/lib" "${root}/lib/x64")
  foreach(_t ${_cudnn_triplets})
    list(APPEND _lib_dirs "${root}/lib/${_t}" "${root}/lib64/${_t}")
  endforeach()
  foreach(_c ${_cuda_dirs})
    list(APPEND _lib_dirs "${root}/lib/${_c}/x64" "${root}/lib/${_c}")
  endforeach()
  if(WIN32)
    set(_names cudnn.lib cudnn64_9.lib libcudnn.dll.a)
  elseif(APPLE)
    set(_names libcudnn.dylib libcudnn.9.dylib)
  else()
    set(_names libcudnn.so libcudnn.so.9)
  endif()
  foreach(_d ${_lib_dirs})
    foreach(_n ${_names})
      if(EXISTS "${_d}/${_n}" AND NOT IS_DIRECTORY "${_d}/${_n}")
        set(_lib "${_d}/${_n}")
        break()
      endif()
    endforeach()
    if(_lib)
      break()
    endif()
  endforeach()

  if(WIN32)
    set(_bin_dirs "${root}/bin")
    foreach(_c ${_cuda_dirs})
      list(APPEND _bin_dirs "${root}/bin/${_c}/x64" "${root}/bin/${_c}")
    endforeach()
    foreach(_d ${_bin_dirs})
      if(EXISTS "${_d}/cudnn64_9.dll")
        set(_dll "${_d}")
        break()
      endif()
    endforeach()
  endif()
  set(_cudnn_inc "${_inc}" PARENT_SCOPE)
  set(_cudnn_lib "${_lib}" PARENT_SCOPE)
  set(_cudnn_dll "${_dll}" PARENT_SCOPE)
endfunction()

# ---------------------------------------------------------------- candidate roots
set(_cudnn_explicit)
foreach(_v CUDNN_ROOT CUDNN_PATH)
  if(DEFINED ${_v} AND NOT "${${_v}}" STREQUAL "")
    list(APPEND _cudnn_explicit "${${_v}}")
  endif()
  if(DEFINED ENV{${_v}} AND NOT "$ENV{${_v}}" STREQUAL "")
    list(APPEND _cudnn_explicit "$ENV{${_v}}")
  endif()
endforeach()

set(_cudnn_roots)
if(_cudnn_explicit)
  foreach(_r ${_cudnn_explicit})
    file(TO_CMAKE_PATH "${_r}" _r)
    list(APPEND _cudnn_roots "${_r}")
  endforeach()
else()
  if(CUDAToolkit_LIBRARY_ROOT)
    list(APPEND _cudnn_roots "${CUDAToolkit_LIBRARY_ROOT}")
  endif()
  foreach(_d ${CUDAToolkit_INCLUDE_DIRS})
    get_filename_component(_p "${_d}" DIRECTORY)
    list(APPEND _cudnn_roots "${_p}")
  endforeach()
  if(DEFINED ENV{CUDA_PATH})
    file(TO_CMAKE_PATH "$ENV{CUDA_PATH}" _p)
    list(APPEND _cudnn_roots "${_p}")
  endif()
  if(NOT WIN32)
    list(APPEND _cudnn_roots /usr/local/cuda /usr)
  endif()
  # A pip wheel: site-packages/nvidia/cudnn of the Python found (a virtual environment's first).
  find_package(Python3 COMPONENTS Interpreter QUIET)
  if(Python3_Interpreter_FOUND)
    execute_process(
      COMMAND "${Python3_EXECUTABLE}" -c
              "import os,site,sysconfig\nps=[sysconfig.get_paths()['purelib']]\ntry: ps+=site.getsitepackages()+[site.getusersitepackages()]\nexcept Exception: pass\nfor p in ps:\n  d=os.path.join(p,'nvidia','cudnn')\n  if os.path.isdir(d): print(d)"
      OUTPUT_VARIABLE _cudnn_wheels OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(_cudnn_wheels)
      string(REPLACE "\n" ";" _cudnn_wheels "${_cudnn_wheels}")
      foreach(_w ${_cudnn_wheels})
        file(TO_CMAKE_PATH "${_w}" _w)
        list(APPEND _cudnn_roots "${_w}")
      endforeach()
    endif()
  endif()
  if(WIN32)
    file(GLOB _cudnn_win "C:/Program Files/NVIDIA/CUDNN/v9.*")
    list(SORT _cudnn_win COMPARE NATURAL ORDER DESCENDING)
    list(APPEND _cudnn_roots ${_cudnn_win})
  endif()
endif()
list(REMOVE_DUPLICATES _cudnn_roots)

# ---------------------------------------------------------------- the first complete root
set(CUDNN_ROOT_DIR "")
set(CUDNN_INCLUDE_DIR "")
set(CUDNN_LIBRARY "")
set(CUDNN_DLL_DIR "")
set(_cudnn_tried "")
foreach(_r ${_cudnn_roots})
  _cudnn_probe("${_r}")
  if(_cudnn_inc AND _cudnn_lib)
    set(CUDNN_ROOT_DIR "${_r}")
    set(CUDNN_INCLUDE_DIR "${_cudnn_inc}")
    set(CUDNN_LIBRARY "${_cudnn_lib}")
    set(CUDNN_DLL_DIR "${_cudnn_dll}")
    break()
  endif()
  string(APPEND _cudnn_tried "\n  ${_r}: header ${_cudnn_inc}, library ${_cudnn_lib}")
endforeach()

if(_cudnn_explicit AND NOT CUDNN_ROOT_DIR)
  message(FATAL_ERROR
    "nnop: no complete cuDNN installation (cudnn.h + cudnn_version.h and the libcudnn library) "
    "under the given CUDNN_ROOT/CUDNN_PATH:${_cudnn_tried}\n"
    "Point CUDNN_ROOT at the folder holding include/ and lib/ (a pip wheel's "
    "site-packages/nvidia/cudnn, a tarball, or C:/Program Files/NVIDIA/CUDNN/v9.x).")
endif()

set(CUDNN_VERSION "")
set(CUDNN_VERSION_NUMBER "")
if(CUDNN_INCLUDE_DIR)
  file(READ "${CUDNN_INCLUDE_DIR}/cudnn_version.h" _cudnn_vh)
  string(REGEX MATCH "define CUDNN_MAJOR +([0-9]+)" _m "${_cudnn_vh}")
  set(_major "${CMAKE_MATCH_1}")
  string(REGEX MATCH "define CUDNN_MINOR +([0-9]+)" _m "${_cudnn_vh}")
  set(_minor "${CMAKE_MATCH_1}")
  string(REGEX MATCH "define CUDNN_PATCHLEVEL +([0-9]+)" _m "${_cudnn_vh}")
  set(_patch "${CMAKE_MATCH_1}")
  set(CUDNN_VERSION "${_major}.${_minor}.${_patch}")
  math(EXPR CUDNN_VERSION_NUMBER "${_major} * 10000 + ${_minor} * 100 + ${_patch}")
  if(NOT _major STREQUAL "9")
    message(FATAL_ERROR
      "nnop needs cuDNN 9.x, but ${CUDNN_INCLUDE_DIR}/cudnn_version.h is cuDNN ${CUDNN_VERSION}. "
      "Point CUDNN_ROOT at a cuDNN 9 installation.")
  endif()
  if(CUDNN_MIN_VERSION AND CUDNN_VERSION_NUMBER LESS CUDNN_MIN_VERSION)
    math(EXPR _min_major "${CUDNN_MIN_VERSION} / 10000")
    math(EXPR _min_minor "(${CUDNN_MIN_VERSION} % 10000) / 100")
    math(EXPR _min_patch "${CUDNN_MIN_VERSION} % 100")
    message(FATAL_ERROR
      "nnop needs cuDNN >= ${_min_major}.${_min_minor}.${_min_patch} (the run-time floor, "
      "NNOP_CUDNN_MIN_VERSION ${CUDNN_MIN_VERSION}), but the cuDNN found at ${CUDNN_ROOT_DIR} "
      "is ${CUDNN_VERSION} (${CUDNN_INCLUDE_DIR}/cudnn_version.h): every GPU context would be "
      "refused at run time. Install a newer cuDNN 9 (pip install nvidia-cudnn-cu12, or the "
      "tarball) and point CUDNN_ROOT at it, or configure with -DNNOP_WITH_CUDA=OFF.")
  endif()
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CUDNN
  REQUIRED_VARS CUDNN_LIBRARY CUDNN_INCLUDE_DIR CUDNN_ROOT_DIR
  VERSION_VAR CUDNN_VERSION)

if(CUDNN_FOUND)
  get_filename_component(CUDNN_LIBRARY_DIR "${CUDNN_LIBRARY}" DIRECTORY)
  if(NOT TARGET CUDNN::cudnn)
    add_library(CUDNN::cudnn UNKNOWN IMPORTED)
    set_target_properties(CUDNN::cudnn PROPERTIES
      IMPORTED_LOCATION "${CUDNN_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${CUDNN_INCLUDE_DIR}")
  endif()
  if(NOT CUDNN_FIND_QUIETLY)
    message(STATUS "cuDNN ${CUDNN_VERSION} at ${CUDNN_ROOT_DIR}")
    message(STATUS "  header:  ${CUDNN_INCLUDE_DIR}/cudnn.h")
    message(STATUS "  library: ${CUDNN_LIBRARY}")
    if(CUDNN_DLL_DIR)
      message(STATUS "  DLLs:    ${CUDNN_DLL_DIR}")
    endif()
  endif()
endif()
