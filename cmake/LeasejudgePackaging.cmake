# What `cmake --install` installs: headers, libraries, the CMake package and the
# pkg-config file; and the Debian package of it (CPack).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/lib/include/leasejudge DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/capi/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS leasejudge_static leasejudge_shared EXPORT leasejudgeTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT leasejudgeTargets NAMESPACE leasejudge::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/leasejudge)
configure_package_config_file(${PROJECT_SOURCE_DIR}/capi/leasejudgeConfig.cmake.in
  ${PROJECT_BINARY_DIR}/leasejudgeConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/leasejudge)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/leasejudgeConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/leasejudgeConfig.cmake
  ${PROJECT_BINARY_DIR}/leasejudgeConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/leasejudge)
# From <prefix>/<libdir>/pkgconfig back up to <prefix>.
file(RELATIVE_PATH LEASEJUDGE_PC_UP /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
set(LEASEJUDGE_PC_REQUIRES "simdjson fmt libcrypto uuid")
if(LEASEJUDGE_NATS)
  string(APPEND LEASEJUDGE_PC_REQUIRES " libnats")
endif()
# libcurl is not linked (the etcd store loads it when it opens): nothing private to add.
set(LEASEJUDGE_PC_LIBS_PRIVATE "")
configure_file(${PROJECT_SOURCE_DIR}/capi/leasejudge.pc.in ${PROJECT_BINARY_DIR}/leasejudge.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/leasejudge.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
# The Python package for the system's python3, finding the library of the prefix
# (<prefix>/lib): Debian's python3 reads <prefix>/lib/python3/dist-packages when the
# prefix is /usr (the Debian package); under another prefix, that directory goes on
# PYTHONPATH. No bytecode is installed: python3 writes it on first import.
set(LEASEJUDGE_PYTHON_INSTALL_DIR lib/python3/dist-packages CACHE STRING
    "where cmake --install puts the Python package, under the prefix")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/bindings/python/src/leasejudge DESTINATION ${LEASEJUDGE_PYTHON_INSTALL_DIR}
        FILES_MATCHING PATTERN "*.py" PATTERN "py.typed" PATTERN "__pycache__" EXCLUDE)
# The license (Apache-2.0, the top-level LICENSE) the Debian way: a machine-readable
# copyright file that points at the system's copy of the text.
install(FILES ${PROJECT_SOURCE_DIR}/cmake/copyright DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/leasejudge)

# A Debian package of what `cmake --install` installs: `cpack -G DEB` in the build tree
# makes build/leasejudge_<version>_<arch>.deb, its Depends computed by dpkg-shlibdeps
# (tests/deb_package_test.sh installs it into a scratch root and runs the command).
set(CPACK_PACKAGE_NAME leasejudge)
set(CPACK_PACKAGE_VENDOR leasejudge)
set(CPACK_PACKAGE_CONTACT "leasejudge <leasejudge@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "judge whether the holder of a lock, lease or running step is alive, and reclaim what a dead one left")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Staged with DESTDIR, the install seeing its real prefix (/usr): the unit's ExecStart
# is written with the path the command has once the package is installed.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
# The Python package is for Debian's python3; the unit runs step watch under systemd.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3, systemd")
# The bytecode python3 writes beside the Python package is no file of the package:
# removed with it (as Debian's py3clean does for the modules it packages).
set(LEASEJUDGE_DEB_PYTHON_DIR ${CPACK_PACKAGING_INSTALL_PREFIX}/${LEASEJUDGE_PYTHON_INSTALL_DIR}/leasejudge)
configure_file(${PROJECT_SOURCE_DIR}/cmake/prerm.in ${PROJECT_BINARY_DIR}/deb/prerm @ONLY
               FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/deb/prerm)
include(CPack)
