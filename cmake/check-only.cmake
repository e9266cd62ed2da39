# agentcore_check_only(<target>): with g++ and clang++ the target's sources are only checked: each
# is parsed with -fsyntax-only (its templates instantiated, no code generated) through the launcher
# cmake/syntax-only.cmake, which touches the object file the build expects so that an unchanged
# source is not checked again. Other compilers compile them. For object libraries nothing links:
# the header checks (cmake/verify-headers.cmake) and the benchmark programs that are only checked
# (bench/CMakeLists.txt).
function(agentcore_check_only target)
    if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
        set_target_properties(${target} PROPERTIES CXX_COMPILER_LAUNCHER
            "${CMAKE_COMMAND};-P;${PROJECT_SOURCE_DIR}/cmake/syntax-only.cmake;--")
    endif()
endfunction()
