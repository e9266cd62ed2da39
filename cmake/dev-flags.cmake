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
