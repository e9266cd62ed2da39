# The umbrella header <agentcore/session.hpp> includes every public header of the core: each
# include/agentcore/*.hpp but itself and <agentcore/llm.hpp>, which it leaves out on purpose (the
# folders below — detail, llm, sqlite, postgres, testing — are reached through those headers or
# included on their own). A header added without its line in the umbrella fails here.
# Usage: cmake -DINCLUDE_DIR=<include> -P umbrella.cmake
file(READ ${INCLUDE_DIR}/agentcore/session.hpp _umbrella)
file(GLOB _headers RELATIVE ${INCLUDE_DIR} ${INCLUDE_DIR}/agentcore/*.hpp)
set(_missing "")
set(_count 0)
foreach(_header IN LISTS _headers)
    if(_header STREQUAL "agentcore/session.hpp" OR _header STREQUAL "agentcore/llm.hpp")
        continue()
    endif()
    math(EXPR _count "${_count} + 1")
    string(FIND "${_umbrella}" "#include <${_header}>" _at)
    if(_at EQUAL -1)
        list(APPEND _missing ${_header})
    endif()
endforeach()
if(_missing)
    message(FATAL_ERROR "<agentcore/session.hpp> does not include: ${_missing}")
endif()
message(STATUS "<agentcore/session.hpp> includes all ${_count} core headers")
