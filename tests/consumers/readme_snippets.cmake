# Compiles every C++ snippet of README.md warning-free, as a user would write it into a project
# of their own (run by the packaging.readme_snippets test, so a snippet cannot drift from the API).
# A snippet with `int main(` is compiled as it is. Any other snippet becomes the body of a
# function, with its #include lines above it, `using namespace agentcore;` and the names the
# README leaves to the reader in scope: `path` (a session file), `session` (an open JSONL session),
# `settings` (compaction settings) and `my_llm` (a function that returns a summary); a snippet
# that uses `llm::` also gets <agentcore/llm.hpp> and the parts of an application the LLM loop
# leaves to the reader: `my_tools`, `url`, `my_http_post` (calls its callback per chunk), `show`
# and `run_my_tool`.
# A snippet that includes <agentcore/testing/catch2.hpp> is a test case: the Catch2 fixtures
# consumer (packaging.fixtures_catch2) compiles and runs it with Catch2, so it is skipped here.
# A snippet that includes an <agentcore/postgres/...> header needs libpq's headers: it is compiled
# with POSTGRES_INCLUDES, and skipped (and counted) where libpq was not found.
# Usage: cmake -DREADME=<README.md> -DWORK=<scratch> -DCOMPILER=<c++> -DINCLUDES=<dir;dir>
#              [-DPOSTGRES_INCLUDES=<dir;dir>] -P readme_snippets.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
file(STRINGS ${README} _lines)
set(_flags -std=c++20 -Wall -Wextra -Wpedantic -Werror -fsyntax-only)
foreach(_dir IN LISTS INCLUDES)
    list(APPEND _flags -I${_dir})
endforeach()

set(_prelude_head "#include <agentcore/session.hpp>\n#include <iostream>\n#include <string>\n")
set(_prelude_body
"[[maybe_unused]] static std::string my_llm(const std::string& text) { return text.substr(0, 10); }\n\
[[maybe_unused]] static void snippet([[maybe_unused]] const std::string& path,\n\
    [[maybe_unused]] agentcore::Session<agentcore::JsonlSessionStorage>& session,\n\
    [[maybe_unused]] const agentcore::CompactionSettings& settings) {\n\
    using namespace agentcore;\n\
    {\n")

set(_prelude_llm "#include <agentcore/llm.hpp>\n#include <string_view>\n#include <vector>\n\
[[maybe_unused]] static const std::vector<agentcore::llm::ToolDefinition> my_tools;\n\
[[maybe_unused]] static const std::string url;\n\
template <class OnChunk> static void my_http_post(const std::string&, const std::string&, OnChunk&&) {}\n\
[[maybe_unused]] static void show(std::string_view) {}\n\
[[maybe_unused]] static agentcore::ToolResultMessage run_my_tool(const agentcore::ToolCallContent&) { return {}; }\n")

set(_in_block FALSE)
set(_count 0)
set(_skipped 0)
set(_skipped_pg 0)
set(_failures "")
foreach(_line IN LISTS _lines)
    if(NOT _in_block)
        if(_line STREQUAL "```cpp")
            set(_in_block TRUE)
            set(_includes "")
            set(_body "")
            math(EXPR _count "${_count} + 1")
        endif()
        continue()
    endif()
    if(NOT _line STREQUAL "```")
        if(_line MATCHES "^#include")
            string(APPEND _includes "${_line}\n")
        else()
            string(APPEND _body "${_line}\n")
        endif()
        continue()
    endif()
    set(_in_block FALSE)
    if(_includes MATCHES "<agentcore/testing/catch2.hpp>")
        math(EXPR _skipped "${_skipped} + 1")
        continue()
    endif()
    set(_snippet_flags ${_flags})
    if(_includes MATCHES "<agentcore/postgres/")
        if(NOT POSTGRES_INCLUDES)
            math(EXPR _skipped_pg "${_skipped_pg} + 1")
            continue()
        endif()
        foreach(_dir IN LISTS POSTGRES_INCLUDES)
            list(APPEND _snippet_flags -I${_dir})
        endforeach()
    endif()
    set(_source ${WORK}/snippet_${_count}.cpp)
    if(_body MATCHES "int main\\(")
        file(WRITE ${_source} "${_includes}${_body}")
    else()
        set(_head "${_prelude_head}")
        if(_body MATCHES "llm::")
            string(APPEND _head "${_prelude_llm}")
        endif()
        file(WRITE ${_source} "${_head}${_includes}${_prelude_body}${_body}    }\n}\n")
    endif()
    execute_process(COMMAND ${COMPILER} ${_snippet_flags} ${_source}
                    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
    if(NOT _rc EQUAL 0)
        string(APPEND _failures "README.md's C++ snippet ${_count} (${_source}):\n${_out}${_err}\n")
    endif()
endforeach()
if(_count EQUAL 0)
    message(FATAL_ERROR "README.md has no ```cpp snippet")
endif()
if(_failures)
    message(FATAL_ERROR "${_failures}")
endif()
math(EXPR _compiled "${_count} - ${_skipped} - ${_skipped_pg}")
message(STATUS "README.md: ${_compiled} C++ snippets compile with ${_flags} (${_skipped} Catch2 test case(s) left to packaging.fixtures_catch2, ${_skipped_pg} PostgreSQL snippet(s) skipped: libpq not found)")
