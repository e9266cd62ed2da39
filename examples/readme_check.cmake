# Checks that the first C++ block of README.md is examples/01_quickstart.cpp, line for line, so
# the README's example is always the one CI compiles and runs.
# Usage: cmake -DREADME=<README.md> -DEXAMPLE=<01_quickstart.cpp> -P readme_check.cmake
file(READ "${README}" readme)
file(READ "${EXAMPLE}" example)
string(FIND "${readme}" "```cpp\n" start)
if(start EQUAL -1)
    message(FATAL_ERROR "README.md has no ```cpp block")
endif()
math(EXPR start "${start} + 7")
string(SUBSTRING "${readme}" ${start} -1 rest)
string(FIND "${rest}" "```" stop)
string(SUBSTRING "${rest}" 0 ${stop} block)
if(NOT block STREQUAL example)
    message(FATAL_ERROR "README.md's first C++ example differs from ${EXAMPLE}; keep them identical")
endif()
message(STATUS "README example matches ${EXAMPLE}")
