# Install rules: headers, the exported target and a package config for find_package(agentcore).

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS agentcore agentcore_testing EXPORT agentcoreTargets FILE_SET HEADERS)
if(TARGET agentcore_sqlite)
    install(TARGETS agentcore_sqlite EXPORT agentcoreTargets FILE_SET HEADERS)
endif()
if(TARGET agentcore_postgres)
    install(TARGETS agentcore_postgres EXPORT agentcoreTargets FILE_SET HEADERS)
endif()
install(EXPORT agentcoreTargets NAMESPACE agentcore:: DESTINATION ${CMAKE_INSTALL_DATADIR}/agentcore/cmake)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/agentcoreConfig.cmake.in
    ${CMAKE_CURRENT_BINARY_DIR}/agentcoreConfig.cmake
    INSTALL_DESTINATION ${CMAKE_INSTALL_DATADIR}/agentcore/cmake)
# Header-only: the package fits any architecture.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/agentcoreConfigVersion.cmake
    COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/agentcoreConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/agentcoreConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_DATADIR}/agentcore/cmake)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/agentcore)
