# Every public header, detail/ included, must compile on its own: a header that only works after
# some other include is a bug a user finds first. Each header gets a generated source that
# includes it and nothing else, compiled against its own target (agentcore, or agentcore_sqlite
# and agentcore_postgres where those were found) in an object library of its own; the custom
# target agentcore_verify_headers, part of `all`, builds them, and tests/consumers runs it as the
# ctest test packaging.headers.
#
# With g++ and clang++ each source is only checked (-fsyntax-only: parsed, its templates
# instantiated, no code generated). A header such as <agentcore/postgres/postgres_repo.hpp>
# registers its URL scheme at static initialisation, so a compile generates the code of the whole
# type-erased repository: 38 s to compile it alone, 17 s to check it (all the headers together:
# 489 s of CPU compiled, 357 s checked). agentcore_check_only (cmake/check-only.cmake) sets that
# up; an unchanged header is not checked again. Other compilers compile the sources.

function(agentcore_verify_headers_of target headers)
    set(_sources)
    foreach(_header IN LISTS headers)
        file(RELATIVE_PATH _rel ${PROJECT_SOURCE_DIR}/include ${_header})
        string(MAKE_C_IDENTIFIER ${_rel} _name)
        set(_source ${PROJECT_BINARY_DIR}/verify_headers/${target}/${_name}.cpp)
        file(CONFIGURE OUTPUT ${_source} CONTENT "#include <${_rel}>\n")
        list(APPEND _sources ${_source})
    endforeach()
    set(_checker ${target}_header_checks)
    add_library(${_checker} OBJECT ${_sources})
    target_link_libraries(${_checker} PRIVATE ${target})
    agentcore_check_only(${_checker})
    add_dependencies(agentcore_verify_headers ${_checker})
endfunction()

add_custom_target(agentcore_verify_headers ALL)
agentcore_verify_headers_of(agentcore "${AGENTCORE_PUBLIC_HEADERS}")
# The SQLite and PostgreSQL headers are checked against their own targets, only where SQLite and
# libpq were found.
if(TARGET agentcore_sqlite)
    agentcore_verify_headers_of(agentcore_sqlite "${AGENTCORE_SQLITE_HEADERS}")
endif()
if(TARGET agentcore_postgres)
    agentcore_verify_headers_of(agentcore_postgres "${AGENTCORE_POSTGRES_HEADERS}")
endif()
