# Parts of the project that need a package the library itself does not: the tests (Catch2) and
# the command-line tool (CLI11). Each part's option is AUTO, ON or OFF:
#   AUTO  (the default when agentcore is the top-level project) build the part when its package
#         is found, else skip it with one line saying what is missing;
#   ON    the part is required: a missing package stops the configure with an error;
#   OFF   (the default when agentcore is a subproject) never build it.
# After agentcore_resolve_part, the option's variable is a plain ON or OFF for the rest of the
# configure, so `if(AGENTCORE_BUILD_TOOLS)` reads as before.

# agentcore_optional_part(<option> <description>): declares the option with its default.
function(agentcore_optional_part option description)
    if(PROJECT_IS_TOP_LEVEL)
        set(_default AUTO)
    else()
        set(_default OFF)
    endif()
    set(${option} ${_default} CACHE STRING "${description}: AUTO (when its package is found), ON or OFF")
    set_property(CACHE ${option} PROPERTY STRINGS AUTO ON OFF)
endfunction()

# agentcore_resolve_part(<option> <part> <package> <install hint>): finds the package when the
# part is wanted and turns the option into ON or OFF.
macro(agentcore_resolve_part option part package hint)
    string(TOUPPER "${${option}}" _agentcore_want)
    if(_agentcore_want STREQUAL "AUTO" OR ${option})
        find_package(${package} QUIET)
        if(${package}_FOUND)
            set(${option} ON)
        elseif(_agentcore_want STREQUAL "AUTO")
            message(STATUS "agentcore: skipping ${part}: ${package} not found (${hint}), "
                           "-D${option}=ON makes it required")
            set(${option} OFF)
        else()
            message(FATAL_ERROR "agentcore: ${option}=${${option}} asks for ${part}, which needs "
                                "${package} (${hint}): install it, or configure with -D${option}=OFF")
        endif()
    else()
        set(${option} OFF)
    endif()
    unset(_agentcore_want)
endmacro()
