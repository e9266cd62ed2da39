# Tests of the `agentcore` command-line tool (label `tools`) and of its HTML viewer in headless
# Chromium (label `browser`). Included from tests/CMakeLists.txt; the tool itself is built by
# tools/CMakeLists.txt (AGENTCORE_BUILD_TOOLS).

if(NOT AGENTCORE_BUILD_TOOLS)
    return()
endif()

set(AGENTCORE_TOOLS_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})
set(AGENTCORE_TOOLS_WORK ${CMAKE_CURRENT_BINARY_DIR}/tools)
set(AGENTCORE_TOOLS_FIXTURES ${AGENTCORE_TOOLS_WORK}/fixtures)

add_executable(agentcore_tools_fixtures ${AGENTCORE_TOOLS_TEST_DIR}/make_fixtures.cpp)
target_link_libraries(agentcore_tools_fixtures PRIVATE agentcore::agentcore agentcore_dev_flags)

add_test(NAME tools.fixtures COMMAND agentcore_tools_fixtures ${AGENTCORE_TOOLS_FIXTURES})
set_tests_properties(tools.fixtures PROPERTIES FIXTURES_SETUP agentcore_tools_fixtures LABELS tools)

# agentcore_cli_test(<name> EXIT <code> ARGS <args...> [options of run_cli.cmake...])
# Runs the tool in its own scratch folder (so `ctest -j` never collides) and checks exit code,
# stdout, stderr and files; the options are described at the top of run_cli.cmake. GOLDEN names
# a file in tests/tools/expected.
function(agentcore_cli_test name)
    set(one EXIT GOLDEN STDOUT_REGEX NO_STDOUT_REGEX STDOUT_MAX_BYTES STDERR_REGEX CHECK_FILE FILE_REGEX FILE_NO_REGEX PTY
            COLOUR)
    set(many ARGS ENV COPY WRAP COMPARE)
    cmake_parse_arguments(T "" "${one}" "${many}" ${ARGN})
    if(T_GOLDEN)
        set(T_GOLDEN ${AGENTCORE_TOOLS_TEST_DIR}/expected/${T_GOLDEN})
    endif()
    set(defines)
    foreach(var IN LISTS one many)
        if(DEFINED T_${var})
            string(REPLACE ";" "\\;" value "${T_${var}}")
            list(APPEND defines "-D${var}=${value}")
        endif()
    endforeach()
    add_test(NAME tools.${name}
             COMMAND ${CMAKE_COMMAND} "-DCLI=$<TARGET_FILE:agentcore_cli>" ${defines}
                     -DFIXTURES=${AGENTCORE_TOOLS_FIXTURES} -DWORK=${AGENTCORE_TOOLS_WORK}/${name}
                     -P ${AGENTCORE_TOOLS_TEST_DIR}/run_cli.cmake)
    set_tests_properties(tools.${name} PROPERTIES FIXTURES_REQUIRED agentcore_tools_fixtures LABELS tools
                                                  TIMEOUT 60)
endfunction()

include(${AGENTCORE_TOOLS_TEST_DIR}/cli_tests.cmake)

# The exported viewer in headless Chromium (label `browser`); its screenshot is left in the build
# tree as ${CMAKE_CURRENT_BINARY_DIR}/tools/browser/viewer.png. Skipped (77) when chromium or the
# npm registry is unavailable and CI is unset.
add_test(NAME tools.browser
         COMMAND bash ${AGENTCORE_TOOLS_TEST_DIR}/browser_test.sh $<TARGET_FILE:agentcore_cli> ${AGENTCORE_TOOLS_FIXTURES}
                 ${AGENTCORE_TOOLS_WORK}/browser)
set_tests_properties(tools.browser PROPERTIES FIXTURES_REQUIRED agentcore_tools_fixtures LABELS "tools;browser"
                                              SKIP_RETURN_CODE 77 TIMEOUT 300
                                              ATTACHED_FILES_ON_FAIL ${AGENTCORE_TOOLS_WORK}/browser/viewer.png)

# The tool on a PostgreSQL repository (postgresql:// URLs), against the test suite's own server:
# the fixture of tests/postgres/postgres.cmake writes where it listens to postgres-server.txt.
if(TARGET agentcore::postgres)
    add_test(NAME tools.postgres
             COMMAND bash ${AGENTCORE_TOOLS_TEST_DIR}/postgres_test.sh $<TARGET_FILE:agentcore_cli>
                     ${AGENTCORE_TOOLS_FIXTURES} ${CMAKE_CURRENT_BINARY_DIR}/postgres-server.txt
                     ${AGENTCORE_TOOLS_WORK}/postgres)
    set_tests_properties(tools.postgres PROPERTIES
                         FIXTURES_REQUIRED "agentcore_tools_fixtures;agentcore_pg"
                         LABELS "tools;postgres" SKIP_RETURN_CODE 77)
endif()
