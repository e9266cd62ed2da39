# The optional parts of agentcore on a machine without their packages (run by the
# packaging.optional_parts test). CMAKE_DISABLE_FIND_PACKAGE_<name> hides CLI11 and Catch2 from a
# fresh configure of the checkout, as if they were not installed:
#   1. the default configure succeeds, says in one line each that it skips the tests and the tool,
#      and `cmake --install` of that (unbuilt) tree installs the library and its package files;
#   2. a part asked for explicitly (-DAGENTCORE_BUILD_TOOLS=ON, -DAGENTCORE_BUILD_TESTS=ON) stops
#      the configure with an error naming the missing package.
# Usage: cmake -DSOURCE_DIR=<checkout> -DWORK=<scratch> -DGENERATOR=<generator>
#              -DCOMPILER=<c++ compiler> [-DMAKE_PROGRAM=<make>] -P optional_parts.cmake
file(REMOVE_RECURSE ${WORK})
set(_hide -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON -DCMAKE_DISABLE_FIND_PACKAGE_Catch2=ON)
set(_common -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${COMPILER})
if(MAKE_PROGRAM)
    list(APPEND _common -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM})
endif()

# configure(<name> <result var> <output var> <options...>)
function(configure name result output)
    execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK}/${name} ${_common} ${_hide} ${ARGN}
                    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
    set(${result} ${_rc} PARENT_SCOPE)
    set(${output} "${_out}${_err}" PARENT_SCOPE)
endfunction()

# 1. Defaults: both parts skipped, one line each; the library installs.
configure(defaults rc out)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configure without CLI11 and Catch2 failed (${rc}):\n${out}")
endif()
foreach(_line "agentcore: skipping the tests: Catch2 not found"
              "agentcore: skipping the command-line tool: CLI11 not found")
    string(FIND "${out}" "${_line}" _at)
    if(_at EQUAL -1)
        message(FATAL_ERROR "the configure did not say '${_line}':\n${out}")
    endif()
endforeach()
string(REGEX MATCHALL "agentcore: skipping[^\n]*" _skips "${out}")
list(LENGTH _skips _count)
if(NOT _count EQUAL 2)
    message(FATAL_ERROR "expected two 'skipping' lines, got ${_count}:\n${out}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --install ${WORK}/defaults --prefix ${WORK}/prefix
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cmake --install without CLI11 and Catch2 failed (${rc}):\n${out}${err}")
endif()
foreach(_file include/agentcore/session.hpp include/agentcore/version.hpp
              share/agentcore/cmake/agentcoreConfig.cmake)
    if(NOT EXISTS ${WORK}/prefix/${_file})
        message(FATAL_ERROR "${_file} was not installed:\n${out}")
    endif()
endforeach()
if(EXISTS ${WORK}/prefix/bin/agentcore)
    message(FATAL_ERROR "the tool was installed although it was skipped")
endif()

# 2. Asked for explicitly: an error that names the package.
foreach(_case "AGENTCORE_BUILD_TOOLS;CLI11" "AGENTCORE_BUILD_TESTS;Catch2")
    list(GET _case 0 _option)
    list(GET _case 1 _package)
    configure(${_option} rc out -D${_option}=ON)
    if(rc EQUAL 0)
        message(FATAL_ERROR "-D${_option}=ON without ${_package} configured anyway:\n${out}")
    endif()
    string(REGEX REPLACE "[ \n]+" " " _flat "${out}")  # CMake wraps error messages
    string(REGEX MATCH "${_option}=ON asks for [^:]*, which needs ${_package} " _said "${_flat}")
    if(NOT _said)
        message(FATAL_ERROR "-D${_option}=ON without ${_package}: not the expected error:\n${out}")
    endif()
endforeach()
message(STATUS "optional parts: skipped with one line each, installable, required when asked for")
