# The differential test against the pi coding agent (ctest label `interop`): pi writes sessions,
# agentcore reads them and builds the same contexts; agentcore appends, pi reads the appends.
# Needs node and npm; pi is installed into a scratch folder under the build tree (reused by
# later runs). Without node, or when npm cannot reach its registry, the test is skipped — unless
# the environment variable CI is set, in which case it fails.
#
# Included from tests/CMakeLists.txt (it uses agentcore_dev_flags and the fixtures folder).

set(AGENTCORE_INTEROP_DIR ${CMAKE_CURRENT_LIST_DIR})
set(AGENTCORE_INTEROP_SCRATCH ${CMAKE_CURRENT_BINARY_DIR}/interop-scratch)
get_filename_component(AGENTCORE_PI_FIXTURES ${CMAKE_CURRENT_LIST_DIR}/../fixtures/pi ABSOLUTE)

file(GLOB AGENTCORE_INTEROP_SOURCES CONFIGURE_DEPENDS ${AGENTCORE_INTEROP_DIR}/*.cpp)
add_executable(agentcore_interop ${AGENTCORE_INTEROP_SOURCES})
target_link_libraries(agentcore_interop PRIVATE agentcore::agentcore agentcore_dev_flags)

find_program(AGENTCORE_NODE node)
if(AGENTCORE_NODE)
    add_test(NAME interop_pi
             COMMAND agentcore_interop ${AGENTCORE_NODE} ${AGENTCORE_INTEROP_DIR} ${AGENTCORE_PI_FIXTURES}
                     ${AGENTCORE_INTEROP_SCRATCH})
    set_tests_properties(interop_pi PROPERTIES LABELS interop SKIP_RETURN_CODE 77 TIMEOUT 900
                         RESOURCE_LOCK agentcore_interop_scratch)
else()
    # No node: skip with a message, or fail under CI.
    add_test(NAME interop_pi
             COMMAND ${CMAKE_COMMAND} -E env sh -c
                     "echo 'SKIP: node is not installed; the pi interop test needs node and npm'; if [ -n \"$CI\" ]; then exit 1; fi; exit 77")
    set_tests_properties(interop_pi PROPERTIES LABELS interop SKIP_RETURN_CODE 77)
endif()
