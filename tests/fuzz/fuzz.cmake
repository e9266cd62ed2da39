# libFuzzer targets (clang with libclang-rt's fuzzer library; built with
# -fsanitize=fuzzer,address,undefined). Each becomes a ctest test, label `fuzz`, that runs for
# AGENTCORE_FUZZ_SECONDS from its seed corpus (tests/fixtures/pi; the recorded provider replies
# of tests/llm/fixtures for `llm`) and a corpus in the build folder.
# The long run, by hand (see docs/reliability.md):
#   build/clang/tests/fuzz/agentcore_fuzz_file -max_total_time=36000 -jobs=2 \
#       build/clang/tests/fuzz/corpus/file tests/fixtures/pi

option(AGENTCORE_BUILD_FUZZERS "Build the libFuzzer targets (clang only)" ON)
set(AGENTCORE_FUZZ_SECONDS 20 CACHE STRING "How long each fuzz test runs under ctest")
# -O1 makes a long run several times faster; -O0 halves the targets' compile time, which a short
# run under ctest gains more from.
set(AGENTCORE_FUZZ_OPTIMIZATION -O1 CACHE STRING "The optimization flag of the fuzz targets (-O0, -O1, ...)")

# A build under AddressSanitizer + UndefinedBehaviorSanitizer builds them too (the same
# sanitizers); ThreadSanitizer cannot be combined with them.
if(AGENTCORE_BUILD_FUZZERS AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang"
   AND NOT AGENTCORE_SANITIZE MATCHES "thread|memory")
    include(CheckCXXSourceCompiles)
    set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer")
    check_cxx_source_compiles(
        "#include <cstddef>\n#include <cstdint>\nextern \"C\" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }"
        AGENTCORE_HAVE_LIBFUZZER)
    unset(CMAKE_REQUIRED_FLAGS)
    if(AGENTCORE_HAVE_LIBFUZZER)
        foreach(_target line file tree llm resume)
            set(_name agentcore_fuzz_${_target})
            add_executable(${_name} ${CMAKE_CURRENT_LIST_DIR}/fuzz_${_target}.cpp)
            set_target_properties(${_name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fuzz)
            target_link_libraries(${_name} PRIVATE agentcore::agentcore agentcore_dev_flags)
            target_compile_options(${_name} PRIVATE ${AGENTCORE_FUZZ_OPTIMIZATION} -fsanitize=fuzzer,address,undefined
                                   -fno-sanitize-recover=all -fno-omit-frame-pointer)
            target_link_options(${_name} PRIVATE -fsanitize=fuzzer,address,undefined)
            set(_corpus ${CMAKE_CURRENT_BINARY_DIR}/fuzz/corpus/${_target})
            file(MAKE_DIRECTORY ${_corpus})
            set(_seeds ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/pi)
            if(_target STREQUAL "llm")
                set(_seeds ${CMAKE_CURRENT_SOURCE_DIR}/llm/fixtures)
            endif()
            add_test(NAME fuzz_${_target}
                     COMMAND ${_name} -max_total_time=${AGENTCORE_FUZZ_SECONDS} -timeout=10 -rss_limit_mb=2048
                             -print_final_stats=1 ${_corpus} ${_seeds})
            set_tests_properties(fuzz_${_target} PROPERTIES LABELS fuzz TIMEOUT 300)
        endforeach()
    endif()
endif()
