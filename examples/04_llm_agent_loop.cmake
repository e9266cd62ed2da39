# examples/04_llm_agent_loop.cpp needs libcurl (Debian: libcurl4-openssl-dev); without it the
# example is skipped with one line at configure time. Its tests (label `examples`) run it
# against the test suite's replay server (tests/llm/replay_server.py, loopback only), which
# replays recorded replies and checks the requests: a streamed tool-call round trip, the same
# with whole responses, and an HTTP error.
#
# Included from examples/CMakeLists.txt.

find_package(CURL QUIET)
find_package(Python3 COMPONENTS Interpreter QUIET)
if(NOT CURL_FOUND)
    message(STATUS "agentcore: example 04_llm_agent_loop skipped: libcurl not found (Debian: libcurl4-openssl-dev)")
    return()
endif()
add_executable(example_04_llm_agent_loop ${CMAKE_CURRENT_LIST_DIR}/04_llm_agent_loop.cpp)
target_link_libraries(example_04_llm_agent_loop PRIVATE agentcore::agentcore agentcore_dev_flags CURL::libcurl)
if(NOT Python3_Interpreter_FOUND)
    message(STATUS "agentcore: example 04_llm_agent_loop built, not run: python3 not found for its replay server")
    return()
endif()
set(_replay ${PROJECT_SOURCE_DIR}/tests/llm/replay_server.py)
foreach(_script stream whole error)
    set(_workdir ${CMAKE_CURRENT_BINARY_DIR}/run/04_llm_agent_loop_${_script})
    file(MAKE_DIRECTORY ${_workdir})
    add_test(NAME examples.04_llm_agent_loop.${_script}
             COMMAND ${Python3_EXECUTABLE} ${_replay} ${PROJECT_SOURCE_DIR}/tests/llm/replay/${_script}.json --
                     $<TARGET_FILE:example_04_llm_agent_loop>
             WORKING_DIRECTORY ${_workdir})
    set_tests_properties(examples.04_llm_agent_loop.${_script} PROPERTIES LABELS "examples;llm" TIMEOUT 180)
endforeach()
set_tests_properties(examples.04_llm_agent_loop.whole PROPERTIES ENVIRONMENT "AGENTCORE_LLM_STREAM=0")
