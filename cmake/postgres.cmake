# agentcore::postgres: the PostgreSQL storage and repository (include/agentcore/postgres/), an
# INTERFACE target of its own that links PostgreSQL::PostgreSQL (libpq). Defined only when libpq
# is found, so that the core target never needs it; AGENTCORE_WITH_POSTGRES=OFF leaves it out on
# purpose. Debian: libpq-dev.

option(AGENTCORE_WITH_POSTGRES "Define agentcore::postgres when libpq is found" ON)
set(AGENTCORE_HAS_POSTGRES OFF)
if(AGENTCORE_WITH_POSTGRES)
    find_package(PostgreSQL QUIET)
    if(PostgreSQL_FOUND)
        set(AGENTCORE_HAS_POSTGRES ON)
        add_library(agentcore_postgres INTERFACE)
        add_library(agentcore::postgres ALIAS agentcore_postgres)
        set_target_properties(agentcore_postgres PROPERTIES EXPORT_NAME postgres)
        target_link_libraries(agentcore_postgres INTERFACE agentcore PostgreSQL::PostgreSQL)
        target_sources(agentcore_postgres INTERFACE FILE_SET HEADERS BASE_DIRS ${CMAKE_CURRENT_SOURCE_DIR}/include
                       FILES ${AGENTCORE_POSTGRES_HEADERS})
        message(STATUS "agentcore: agentcore::postgres with libpq ${PostgreSQL_VERSION_STRING}")
    else()
        message(STATUS "agentcore: libpq not found (Debian: libpq-dev), agentcore::postgres not defined")
    endif()
endif()
