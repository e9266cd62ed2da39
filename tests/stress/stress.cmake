# The long-run crash program (built on demand: `cmake --build <dir> --target agentcore_stress`)
# and, in a ThreadSanitizer configuration (AGENTCORE_SANITIZE=thread), the race tests on their
# own, so that CI can build and run just them: `cmake --build <dir> --target agentcore_race_tests`.

add_executable(agentcore_stress EXCLUDE_FROM_ALL ${CMAKE_CURRENT_LIST_DIR}/stress_main.cpp)
target_link_libraries(agentcore_stress PRIVATE agentcore::agentcore agentcore_dev_flags)
target_include_directories(agentcore_stress PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})

if(AGENTCORE_SANITIZE MATCHES "thread")
    add_executable(agentcore_race_tests EXCLUDE_FROM_ALL support/main.cpp test_reliability_races.cpp
                                                        test_jsonl_threads.cpp)
    target_link_libraries(agentcore_race_tests PRIVATE agentcore::agentcore agentcore_dev_flags
                                                       agentcore_catch_runner Threads::Threads)
    target_include_directories(agentcore_race_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
endif()
