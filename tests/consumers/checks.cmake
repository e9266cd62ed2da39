# Shared by the consumer projects: the program, and the checks that agentcore behaved as a guest.

function(agentcore_consumer_program)
    add_executable(agentcore_consumer ${AGENTCORE_CONSUMER_MAIN})
    target_link_libraries(agentcore_consumer PRIVATE agentcore::agentcore)
    target_compile_definitions(agentcore_consumer PRIVATE
                               AGENTCORE_EXPECTED_VERSION="${AGENTCORE_EXPECTED_VERSION}")
    foreach(_leak agentcore_tests agentcore_dev_flags agentcore_verify_headers)
        if(TARGET ${_leak})
            message(FATAL_ERROR "agentcore leaked its target '${_leak}' into a consumer's build")
        endif()
    endforeach()
endfunction()
