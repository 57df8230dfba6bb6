# The dependencies, all Debian 12 packages: the required ones, and those whose
# presence turns an optional part on by default (LeasejudgeOptions.cmake).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
find_package(PkgConfig REQUIRED)

# --- required dependencies (Debian 12 packages) --------------------------------
find_package(simdjson REQUIRED)          # libsimdjson-dev
find_package(fmt REQUIRED)               # libfmt-dev
find_package(OpenSSL REQUIRED COMPONENTS Crypto)  # libssl-dev: SHA-256
pkg_check_modules(UUID REQUIRED IMPORTED_TARGET uuid)  # uuid-dev
find_package(Threads REQUIRED)

# --- optional parts: ON by default where their dependencies are present ----------
find_package(doctest QUIET)
# Debian's cnats CMake package names a static library it does not ship: use pkg-config.
pkg_check_modules(NATS QUIET IMPORTED_TARGET libnats)
find_package(benchmark QUIET)
# The etcd store: etcd's v3 JSON gateway over libcurl (libcurl4-openssl-dev).
pkg_check_modules(CURL QUIET IMPORTED_TARGET libcurl)
find_program(LEASEJUDGE_GO_EXECUTABLE go)
find_path(LEASEJUDGE_BASH_INCLUDE_DIR builtins.h PATHS /usr/include/bash NO_DEFAULT_PATH)
find_path(LEASEJUDGE_NODE_INCLUDE_DIR node_api.h PATHS /usr/include/node /usr/local/include/node NO_DEFAULT_PATH)
find_program(LEASEJUDGE_NODE_EXECUTABLE node)
# The Python package's wheel is built by its own backend, which reads pyproject.toml
# with tomllib (3.11).
find_package(Python3 3.11 QUIET COMPONENTS Interpreter)

set(_have_tests OFF)
if(doctest_FOUND)
  set(_have_tests ON)
endif()
set(_have_nats OFF)
if(NATS_FOUND)
  set(_have_nats ON)
endif()
set(_have_bench OFF)
if(benchmark_FOUND)
  set(_have_bench ON)
endif()
set(_have_go OFF)
if(LEASEJUDGE_GO_EXECUTABLE)
  set(_have_go ON)
endif()
set(_have_bash OFF)
if(LEASEJUDGE_BASH_INCLUDE_DIR)
  set(_have_bash ON)
endif()

set(_have_python OFF)
if(Python3_Interpreter_FOUND)
  set(_have_python ON)
endif()

set(_have_node OFF)
if(LEASEJUDGE_NODE_INCLUDE_DIR AND LEASEJUDGE_NODE_EXECUTABLE)
  set(_have_node ON)
endif()
