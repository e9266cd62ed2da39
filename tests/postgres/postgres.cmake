# The PostgreSQL storage's tests, in a runner of their own that links agentcore::postgres;
# defined only where libpq was found. They run against real servers: the fixture test "start
# the server" makes a throwaway cluster (initdb, a Unix socket in a temporary folder) that every
# test of the run shares, each in a database of its own; "stop the server" stops it by its pid.
# Without PostgreSQL's server programs (Debian: postgresql) the tests are skipped (exit 77),
# unless AGENTCORE_REQUIRE_PG=1, as in CI. Labels: unit;postgres.

if(TARGET agentcore_postgres)
    file(GLOB AGENTCORE_POSTGRES_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_*.cpp)
    add_executable(agentcore_postgres_tests ${CMAKE_CURRENT_LIST_DIR}/main.cpp ${AGENTCORE_POSTGRES_TEST_SOURCES}
                                            ${AGENTCORE_EVERY_STORAGE_TEST_SOURCES})
    target_link_libraries(agentcore_postgres_tests PRIVATE agentcore::postgres agentcore_dev_flags
                                                           agentcore_catch_runner Threads::Threads)
    target_include_directories(agentcore_postgres_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
    agentcore_batch_sources(agentcore_postgres_tests 1)
    # Where the fixture describes the shared server; compiled in, as the runner's default.
    set(_agentcore_pg_server_file ${CMAKE_CURRENT_BINARY_DIR}/postgres-server.txt)
    target_compile_definitions(agentcore_postgres_tests PRIVATE
                               AGENTCORE_PG_SERVER_FILE_DEFAULT="${_agentcore_pg_server_file}"
                               AGENTCORE_TEST_POSTGRES)
    add_test(NAME "postgres: start the server"
             COMMAND agentcore_postgres_tests --pg-server start ${_agentcore_pg_server_file})
    add_test(NAME "postgres: stop the server"
             COMMAND agentcore_postgres_tests --pg-server stop ${_agentcore_pg_server_file})
    set_tests_properties("postgres: start the server" PROPERTIES FIXTURES_SETUP agentcore_pg LABELS "unit;postgres"
                         SKIP_RETURN_CODE 77)
    set_tests_properties("postgres: stop the server" PROPERTIES FIXTURES_CLEANUP agentcore_pg LABELS "unit;postgres")
    catch_discover_tests(agentcore_postgres_tests TEST_PREFIX "postgres: " EXTRA_ARGS --warn NoTests
        PROPERTIES ENVIRONMENT "AGENTCORE_TEST_TMP=${AGENTCORE_TEST_SCRATCH}"
        FIXTURES_REQUIRED agentcore_pg SKIP_RETURN_CODE 77 TIMEOUT 600 TEST_LIST agentcore_postgres_test_names)
    # Two labels are a list, which catch_discover_tests' PROPERTIES flatten: set them in a
    # ctest script that runs after the discovered tests are defined.
    file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/postgres_labels.cmake
         "foreach(_test IN LISTS agentcore_postgres_test_names)\n"
         "    set_tests_properties(\"\${_test}\" PROPERTIES LABELS \"unit;postgres\")\n"
         "endforeach()\n")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${CMAKE_CURRENT_BINARY_DIR}/postgres_labels.cmake)
endif()
