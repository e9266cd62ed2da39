# The SQLite storage's tests, in a runner of their own that links agentcore::sqlite; defined only
# where SQLite was found. Labels: unit (the conformance kit, schema, files, faults), reliability
# (the SIGKILL loop). The long form of the kill loop: AGENTCORE_SQLITE_KILL_ROUNDS=5000.

if(TARGET agentcore_sqlite)
    file(GLOB AGENTCORE_SQLITE_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_*.cpp)
    add_executable(agentcore_sqlite_tests support/main.cpp ${AGENTCORE_SQLITE_TEST_SOURCES}
                                          ${AGENTCORE_EVERY_STORAGE_TEST_SOURCES})
    target_compile_definitions(agentcore_sqlite_tests PRIVATE AGENTCORE_TEST_SQLITE)
    target_link_libraries(agentcore_sqlite_tests PRIVATE agentcore::sqlite agentcore_dev_flags
                                                         agentcore_catch_runner Threads::Threads)
    target_include_directories(agentcore_sqlite_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
    agentcore_batch_sources(agentcore_sqlite_tests 1)
    catch_discover_tests(agentcore_sqlite_tests TEST_PREFIX "sqlite: " EXTRA_ARGS --warn NoTests
        PROPERTIES ENVIRONMENT "AGENTCORE_TEST_TMP=${AGENTCORE_TEST_SCRATCH}"
        TEST_LIST agentcore_sqlite_test_names)
    # Two labels are a list, which catch_discover_tests' PROPERTIES flatten: set them in a ctest
    # script that runs after the discovered tests are defined.
    file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/sqlite_labels.cmake
         "foreach(_test IN LISTS agentcore_sqlite_test_names)\n"
         "    set_tests_properties(\"\${_test}\" PROPERTIES LABELS \"unit;sqlite\")\n"
         "endforeach()\n")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${CMAKE_CURRENT_BINARY_DIR}/sqlite_labels.cmake)
endif()
