# The nats-server version matrix.
# Every NATS test runs against the system's nats-server (label nats-2.9 on Debian 12)
# and, in the plain build, again against Debian 13's 2.10.27 (label nats-2.10); the
# store's own tests (CURRENT) also against Debian unstable's, 2.11 or later (label
# nats-current). .ci/fetch-nats-server unpacks both under build/. Each directory calls
# this after adding such a test.
set(LEASEJUDGE_NATS_SERVER_2_10 "${PROJECT_SOURCE_DIR}/build/nats-server-2.10.27/usr/sbin/nats-server"
    CACHE FILEPATH "The second nats-server of the test matrix (2.10.27)")
set(LEASEJUDGE_NATS_SERVER_CURRENT "${PROJECT_SOURCE_DIR}/build/nats-server-current/usr/sbin/nats-server"
    CACHE FILEPATH "The third nats-server of the test matrix (Debian unstable's, 2.11 or later)")
function(leasejudge_nats_matrix test)
  set_property(TEST ${test} APPEND PROPERTY LABELS nats nats-2.9)
  if(LEASEJUDGE_SANITIZE)
    return()  # the sanitizers' run keeps to one server version
  endif()
  set(servers "2.10|2.10.27|${LEASEJUDGE_NATS_SERVER_2_10}")
  if("CURRENT" IN_LIST ARGN)
    list(APPEND servers "current|2.11+|${LEASEJUDGE_NATS_SERVER_CURRENT}")
  endif()
  foreach(server ${servers})
    string(REPLACE "|" ";" server "${server}")
    list(GET server 0 label)
    list(GET server 1 version)
    list(GET server 2 exe)
    add_test(NAME ${test}@nats-${label} COMMAND bash ${PROJECT_SOURCE_DIR}/tests/nats_matrix.sh ${test})
    set_tests_properties(${test}@nats-${label} PROPERTIES LABELS "nats;nats-${label}" SKIP_RETURN_CODE 77
      ENVIRONMENT
      "LEASEJUDGE_NATS_SERVER=${exe};LEASEJUDGE_NATS_VERSION=${version};LEASEJUDGE_SOURCE_DIR=${PROJECT_SOURCE_DIR};LEASEJUDGE_BINARY_DIR=${PROJECT_BINARY_DIR}")
  endforeach()
endfunction()
