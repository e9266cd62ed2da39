# The umbrella header <agentcore/session.hpp> includes every public header of the core: each
# include/agentcore/*.hpp but itself and <agentcore/llm.hpp>, which it leaves out on purpose, and
# the headers of the storages that need nothing but the core (memory/, jsonl/). The other folders
# (detail, llm, sqlite, postgres, testing) are reached through those headers or included on their
# own; the headers at 0.1's paths that only include a moved header (their second line says so)
# are covered by the header they include. A header added without its line in the umbrella fails
# here.
# Usage: cmake -DINCLUDE_DIR=<include> -P umbrella.cmake
file(READ ${INCLUDE_DIR}/agentcore/session.hpp _umbrella)
file(GLOB _headers RELATIVE ${INCLUDE_DIR} ${INCLUDE_DIR}/agentcore/*.hpp
     ${INCLUDE_DIR}/agentcore/memory/*.hpp ${INCLUDE_DIR}/agentcore/jsonl/*.hpp)
set(_missing "")
set(_count 0)
foreach(_header IN LISTS _headers)
    if(_header STREQUAL "agentcore/session.hpp" OR _header STREQUAL "agentcore/llm.hpp")
        continue()
    endif()
    file(STRINGS ${INCLUDE_DIR}/${_header} _second LIMIT_COUNT 2)
    if(_second MATCHES "0\\.1's include path")
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
