# Runs PROGRAM with ARGUMENTS (a list), requires it to fail, and requires its output (stdout and
# stderr) to hold every line of EXPECTED; blank lines and lines starting with '#' there are
# skipped. Whitespace is left out on both sides: test frameworks wrap long lines and indent them,
# at places of their own; every other character of each line must be there, in order.
# Usage: cmake -DPROGRAM=<exe> -DARGUMENTS=<arg|arg|...> -DEXPECTED=<file> -P check_output.cmake
string(REPLACE "|" ";" ARGUMENTS "${ARGUMENTS}")
set(ENV{AGENTCORE_UPDATE_GOLDEN} "")  # a failure meant to be shown must not be accepted
execute_process(COMMAND ${PROGRAM} ${ARGUMENTS} OUTPUT_VARIABLE out ERROR_VARIABLE err
                RESULT_VARIABLE result)
set(output "${out}${err}")
if(result EQUAL 0)
    message(FATAL_ERROR "${PROGRAM} ${ARGUMENTS} passed, but its assertions are meant to fail:\n${output}")
endif()
string(REGEX REPLACE "[ \t\r\n]+" "" flat "${output}")
file(STRINGS ${EXPECTED} lines ENCODING UTF-8)
set(missing "")
set(checked 0)
foreach(line IN LISTS lines)
    if(line MATCHES "^[ \t]*(#|$)")
        continue()
    endif()
    string(REGEX REPLACE "[ \t]+" "" wanted "${line}")
    string(FIND "${flat}" "${wanted}" at)
    if(at EQUAL -1)
        string(STRIP "${line}" line)
        string(APPEND missing "\n  ${line}")
    endif()
    math(EXPR checked "${checked} + 1")
endforeach()
if(checked EQUAL 0)
    message(FATAL_ERROR "${EXPECTED} holds no line to check")
endif()
if(missing)
    message(FATAL_ERROR "the failure output of ${PROGRAM} lacks these lines of ${EXPECTED}:${missing}\n"
                        "The output was:\n${output}")
endif()
message(STATUS "the failure output holds all ${checked} expected lines")
