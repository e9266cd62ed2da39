# agentcore::sqlite: the SQLite storage and repository (include/agentcore/sqlite/), an INTERFACE
# target of its own that links SQLite::SQLite3. Defined only when SQLite is found, so that the
# core target never needs it; AGENTCORE_WITH_SQLITE=OFF leaves it out on purpose.

option(AGENTCORE_WITH_SQLITE "Define agentcore::sqlite when SQLite 3 is found" ON)
set(AGENTCORE_HAS_SQLITE OFF)
if(AGENTCORE_WITH_SQLITE)
    find_package(SQLite3 3.37 QUIET)
    if(SQLite3_FOUND)
        set(AGENTCORE_HAS_SQLITE ON)
        add_library(agentcore_sqlite INTERFACE)
        add_library(agentcore::sqlite ALIAS agentcore_sqlite)
        set_target_properties(agentcore_sqlite PROPERTIES EXPORT_NAME sqlite)
        target_link_libraries(agentcore_sqlite INTERFACE agentcore SQLite::SQLite3)
        target_sources(agentcore_sqlite INTERFACE FILE_SET HEADERS BASE_DIRS ${CMAKE_CURRENT_SOURCE_DIR}/include
                       FILES ${AGENTCORE_SQLITE_HEADERS})
        message(STATUS "agentcore: agentcore::sqlite with SQLite ${SQLite3_VERSION}")
    else()
        message(STATUS "agentcore: SQLite 3.37+ not found, agentcore::sqlite not defined")
    endif()
endif()
