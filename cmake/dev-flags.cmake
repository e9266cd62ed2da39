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

# Compiles `target`'s sources in `batches` batches of equal size (the last may be smaller), so
# that a source added never makes a batch of its own that parses every header for one file.
function(agentcore_batch_sources target batches)
    if(NOT AGENTCORE_UNITY_BUILD)
        return()
    endif()
    get_target_property(_sources ${target} SOURCES)
    set(_count 0)
    foreach(_source IN LISTS _sources)
        get_source_file_property(_alone ${_source} SKIP_UNITY_BUILD_INCLUSION)
        if(_source MATCHES "\\.cpp$" AND NOT _alone)
            math(EXPR _count "${_count} + 1")
        endif()
    endforeach()
    math(EXPR _size "(${_count} + ${batches} - 1) / ${batches}")
    if(_size LESS 1)
        set(_size 1)
    endif()
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${_size})
endfunction()
