# Warnings and sanitizers for agentcore's own targets (tests, examples, tools, benchmarks).
# They live on an interface target that only those link: the exported target carries no flags.

add_library(agentcore_dev_flags INTERFACE)
target_compile_options(agentcore_dev_flags INTERFACE
    $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion
                                   -Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual>)
if(AGENTCORE_DEVELOPER_MODE)
    target_compile_options(agentcore_dev_flags INTERFACE $<$<CXX_COMPILER_ID:GNU,Clang>:-Werror>)
endif()
if(AGENTCORE_SANITIZE)
    target_compile_options(agentcore_dev_flags INTERFACE -fsanitize=${AGENTCORE_SANITIZE}
                           -fno-omit-frame-pointer -fno-sanitize-recover=all)
    target_link_options(agentcore_dev_flags INTERFACE -fsanitize=${AGENTCORE_SANITIZE})
endif()

# The test runners and the tool compile their sources in batches (CMake's unity build): the
# headers are parsed, and their templates compiled, once a batch instead of once a file, which
# makes a full build several times faster (an edit recompiles its whole batch). OFF compiles each
# source on its own. Sources that must stay alone (a Catch2 main) set SKIP_UNITY_BUILD_INCLUSION.
option(AGENTCORE_UNITY_BUILD "Compile agentcore's test runners and tool in batches of sources" ON)
function(agentcore_batch_sources target batch_size)
    if(AGENTCORE_UNITY_BUILD)
        set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${batch_size})
    endif()
endfunction()
