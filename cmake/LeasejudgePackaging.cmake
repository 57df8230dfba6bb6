# What `cmake --install` installs: headers, libraries, the CMake package and the
# pkg-config file.
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
configure_file(${PROJECT_SOURCE_DIR}/capi/leasejudge.pc.in ${PROJECT_BINARY_DIR}/leasejudge.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/leasejudge.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
