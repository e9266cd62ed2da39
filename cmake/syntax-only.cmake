# The compiler launcher of the targets that are only checked (agentcore_check_only,
# cmake/check-only.cmake): runs the compile command given after `--` with -fsyntax-only added,
# then touches the object file the command names (`-o FILE`), which the compiler did not write.
# The dependency file (-MD/-MF) is still written.
# Usage: cmake -P syntax-only.cmake -- <compiler> <arguments>...

set(_command)
set(_object)
set(_seen_dashes FALSE)
set(_next_is_object FALSE)
math(EXPR _last "${CMAKE_ARGC} - 1")
foreach(_i RANGE ${_last})
    set(_arg "${CMAKE_ARGV${_i}}")
    if(NOT _seen_dashes)
        if(_arg STREQUAL "--")
            set(_seen_dashes TRUE)
        endif()
        continue()
    endif()
    if(_next_is_object)
        set(_object "${_arg}")
        set(_next_is_object FALSE)
    elseif(_arg STREQUAL "-o")
        set(_next_is_object TRUE)
    endif()
    list(APPEND _command "${_arg}")
endforeach()
if(NOT _command OR NOT _object)
    message(FATAL_ERROR "syntax-only.cmake: expected '-- <compiler> ... -o <object> ...'")
endif()

file(REMOVE "${_object}")
execute_process(COMMAND ${_command} -fsyntax-only RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
    # The compiler has printed why; the object file is absent, so the next build checks again.
    message(FATAL_ERROR "syntax-only.cmake: the check failed (exit ${_rc})")
endif()
file(TOUCH "${_object}")
