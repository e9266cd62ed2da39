# The differential check of the LLM converters against pi-ai (ctest labels `llm` and `interop`):
# pi-ai 0.73.1 converts the same contexts and parses the same recorded replies, against a
# loopback server of pi_convert.mjs; agentcore's request bodies and messages must agree field by
# field. pi comes from the pinned install the session interop test uses (tests/interop/
# install_pi.mjs, in the same scratch folder, hence the shared resource lock). Without node, or
# when npm cannot reach its registry, the test is skipped — unless CI is set, then it fails.
#
# Included from tests/CMakeLists.txt.

set(AGENTCORE_LLM_DIR ${CMAKE_CURRENT_LIST_DIR})
add_executable(agentcore_llm_differential ${AGENTCORE_LLM_DIR}/differential_main.cpp)
target_link_libraries(agentcore_llm_differential PRIVATE agentcore::agentcore agentcore_dev_flags)
target_include_directories(agentcore_llm_differential PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})

find_program(AGENTCORE_NODE node)
if(AGENTCORE_NODE)
    add_test(NAME llm_pi_differential
             COMMAND agentcore_llm_differential ${AGENTCORE_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/interop
                     ${AGENTCORE_LLM_DIR} ${CMAKE_CURRENT_BINARY_DIR}/interop-scratch)
    set_tests_properties(llm_pi_differential PROPERTIES LABELS "llm;interop" SKIP_RETURN_CODE 77 TIMEOUT 900
                         RESOURCE_LOCK agentcore_interop_scratch)
else()
    add_test(NAME llm_pi_differential
             COMMAND ${CMAKE_COMMAND} -E env sh -c
                     "echo 'SKIP: node is not installed; the pi-ai differential needs node and npm'; if [ -n \"$CI\" ]; then exit 1; fi; exit 77")
    set_tests_properties(llm_pi_differential PROPERTIES LABELS "llm;interop" SKIP_RETURN_CODE 77)
endif()
