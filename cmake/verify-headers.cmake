# Every public header, detail/ included, must compile on its own: a header that only works after
# some other include is a bug a user finds first. CMake (3.24+) builds one translation unit per
# header of the HEADERS file set in the target agentcore_verify_interface_header_sets, which is
# part of `all`; tests/CMakeLists.txt also runs it as a ctest test.

if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.24)
    set_property(TARGET agentcore PROPERTY VERIFY_INTERFACE_HEADER_SETS ON)
    add_custom_target(agentcore_verify_headers ALL)
    add_dependencies(agentcore_verify_headers agentcore_verify_interface_header_sets)
    # The SQLite headers are checked against their own target, only where SQLite was found.
    if(TARGET agentcore_sqlite)
        set_property(TARGET agentcore_sqlite PROPERTY VERIFY_INTERFACE_HEADER_SETS ON)
        add_dependencies(agentcore_verify_headers agentcore_sqlite_verify_interface_header_sets)
    endif()
    # The PostgreSQL headers likewise, only where libpq was found.
    if(TARGET agentcore_postgres)
        set_property(TARGET agentcore_postgres PROPERTY VERIFY_INTERFACE_HEADER_SETS ON)
        add_dependencies(agentcore_verify_headers agentcore_postgres_verify_interface_header_sets)
    endif()
else()
    # Older CMake: the same check by hand, one generated source per header.
    set(_agentcore_verify_sources)
    foreach(_header IN LISTS AGENTCORE_PUBLIC_HEADERS)
        file(RELATIVE_PATH _rel ${CMAKE_CURRENT_SOURCE_DIR}/include ${_header})
        string(MAKE_C_IDENTIFIER ${_rel} _name)
        set(_source ${CMAKE_CURRENT_BINARY_DIR}/verify_headers/${_name}.cpp)
        file(CONFIGURE OUTPUT ${_source} CONTENT "#include <${_rel}>\n")
        list(APPEND _agentcore_verify_sources ${_source})
    endforeach()
    add_library(agentcore_verify_interface_header_sets OBJECT ${_agentcore_verify_sources})
    target_link_libraries(agentcore_verify_interface_header_sets PRIVATE agentcore)
    add_custom_target(agentcore_verify_headers ALL)
    add_dependencies(agentcore_verify_headers agentcore_verify_interface_header_sets)
endif()
