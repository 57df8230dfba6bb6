# The build's options: each optional part ON where its dependencies are present
# (LeasejudgeDependencies.cmake), the sanitizers, the fuzz targets, the warnings.

option(LEASEJUDGE_TESTS "Build the tests (doctest)" ${_have_tests})
option(LEASEJUDGE_NATS "Build the NATS JetStream store (libnats-dev)" ${_have_nats})
option(LEASEJUDGE_ETCD "Build the etcd store (libcurl4-openssl-dev)" ${CURL_FOUND})
option(LEASEJUDGE_BENCH "Build the benchmarks" ${_have_bench})
option(LEASEJUDGE_GO "Build and test the Go binding (golang-go)" ${_have_go})
option(LEASEJUDGE_BASH "Build the bash loadable builtin (bash-builtins)" ${_have_bash})
option(LEASEJUDGE_NODE "Build the Node package (nodejs and its node_api.h)" ${_have_node})
option(LEASEJUDGE_SANITIZE "Build everything with ASan and UBSan" OFF)
# The wheel carries the library: the plain build's (under the sanitizers, python3
# could load it only with their runtimes preloaded).
set(_python_default OFF)
if(_have_python AND NOT LEASEJUDGE_SANITIZE)
  set(_python_default ON)
endif()
option(LEASEJUDGE_PYTHON "Stage the Python package with the library and build its wheel (python3 3.11+)"
       ${_python_default})

if(LEASEJUDGE_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
endif()

# Fuzz targets (tests/fuzz): clang's libFuzzer, in a build of their own (the `fuzz`
# preset). The whole build then carries the fuzzer's coverage instrumentation.
set(_have_fuzz OFF)
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  include(CheckCXXSourceCompiles)
  set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=fuzzer)
  check_cxx_source_compiles("#include <cstddef>
#include <cstdint>
extern \"C\" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }" LEASEJUDGE_LIBFUZZER_USABLE)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  if(LEASEJUDGE_LIBFUZZER_USABLE)
    set(_have_fuzz ON)
  endif()
endif()
option(LEASEJUDGE_FUZZ "Build the libFuzzer targets (clang with libFuzzer)" ${_have_fuzz})
if(LEASEJUDGE_FUZZ)
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

# The project's own code is warning-free; dependencies' headers come in as SYSTEM.
set(LEASEJUDGE_WARNINGS -Wall -Wextra -Werror)
