# Shared by the fixtures consumers (catch2_fixtures, gtest_fixtures): warnings as errors for the
# consumer's own code (agentcore's headers come from a scratch prefix, so they are checked too), the
# README's testing example extracted into a source file, and the check of a failure's printed text.

set(AGENTCORE_FIXTURES_SUPPORT_DIR ${CMAKE_CURRENT_LIST_DIR})

function(agentcore_fixtures_warnings target)
    if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
        target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                               -Wsign-conversion -Wold-style-cast -Werror)
    endif()
endfunction()

# Writes the first ```cpp block after the README heading `## <heading>` to `output` (rewritten
# only when it changes); configuring again follows every edit of the README.
function(agentcore_readme_example readme heading output)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${readme})
    file(READ ${readme} text)
    string(FIND "${text}" "\n## ${heading}\n" start)
    if(start EQUAL -1)
        message(FATAL_ERROR "${readme} has no section '## ${heading}'")
    endif()
    math(EXPR start "${start} + 1")
    string(SUBSTRING "${text}" ${start} -1 text)  # from the heading on
    string(FIND "${text}" "\n```cpp\n" block)
    string(FIND "${text}" "\n## " next)  # the next section
    if(block EQUAL -1 OR (NOT next EQUAL -1 AND block GREATER next))
        message(FATAL_ERROR "the README section '${heading}' has no ```cpp block")
    endif()
    math(EXPR block "${block} + 8")
    string(SUBSTRING "${text}" ${block} -1 text)
    string(FIND "${text}" "\n```" stop)
    math(EXPR stop "${stop} + 1")
    string(SUBSTRING "${text}" 0 ${stop} code)
    set(old "")
    if(EXISTS ${output})
        file(READ ${output} old)
    endif()
    if(NOT old STREQUAL code)
        file(WRITE ${output} "${code}")
    endif()
endfunction()

# A test that runs `program` with the further arguments, expects it to fail, and checks its output
# against the lines of `expected` (see check_output.cmake).
function(agentcore_failure_output_test name program expected)
    string(REPLACE ";" "|" arguments "${ARGN}")  # a list would be split into the command's words
    add_test(NAME ${name}
             COMMAND ${CMAKE_COMMAND} -DPROGRAM=${program} "-DARGUMENTS=${arguments}" -DEXPECTED=${expected}
                     -P ${AGENTCORE_FIXTURES_SUPPORT_DIR}/check_output.cmake)
endfunction()
