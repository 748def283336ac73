# Cross-compiles native/cpu for linux-arm64 on another Linux host with Debian's GNU cross toolchain
# (`apt-get install g++-aarch64-linux-gnu`: aarch64-linux-gnu-g++ and the arm64 glibc and libstdc++
# under /usr/aarch64-linux-gnu). Used by packages/backend-cpu/scripts/build-native.mjs; the
# compiler can be named by AARCH64_CXX (default aarch64-linux-gnu-g++).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
if(DEFINED ENV{AARCH64_CXX})
  set(CMAKE_CXX_COMPILER $ENV{AARCH64_CXX})
else()
  set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
endif()
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
