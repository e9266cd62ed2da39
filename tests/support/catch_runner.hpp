#pragma once
// Catch2's runner, compiled once (tests/support/catch_runner.cpp, the object library
// agentcore_catch_runner) for every test program: its implementation is the largest part of
// Catch2 2.13, and each runner's main only calls this.

namespace agentcore::testing {

/// Runs the test cases that `argc` and `argv` select, as Catch2's own main does.
int run_catch(int argc, char* argv[]);

}  // namespace agentcore::testing
