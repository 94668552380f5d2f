# hipkfd: enough of ROCm's hip-config.cmake for `find_package(hip)` in host code: the imported
# targets hip::amdhip64 (the library) and hip::host (library + include directory +
# __HIP_PLATFORM_AMD__, as ROCm's). No hip::device: hipkfd has no device compiler.
# Relocatable: the prefix is three levels above this file (PREFIX/lib/cmake/hip).
get_filename_component(_hipkfd_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

if(NOT TARGET hip::amdhip64)
  add_library(hip::amdhip64 SHARED IMPORTED)
  set_target_properties(hip::amdhip64 PROPERTIES
    IMPORTED_LOCATION "${_hipkfd_prefix}/lib/libamdhip64.so.7"
    IMPORTED_SONAME "libamdhip64.so.7"
    INTERFACE_INCLUDE_DIRECTORIES "${_hipkfd_prefix}/include")
endif()
if(NOT TARGET hip::host)
  add_library(hip::host INTERFACE IMPORTED)
  set_target_properties(hip::host PROPERTIES
    INTERFACE_LINK_LIBRARIES "hip::amdhip64"
    INTERFACE_COMPILE_DEFINITIONS "__HIP_PLATFORM_AMD__=1")
endif()

set(hip_FOUND TRUE)
set(HIP_FOUND TRUE)
set(hip_INCLUDE_DIRS "${_hipkfd_prefix}/include")
set(hip_LIBRARIES hip::host)
set(HIP_PLATFORM amd)
set(HIP_RUNTIME hipkfd)
