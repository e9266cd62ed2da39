// The main of the unit, SQLite and race test runners: Catch2's (tests/support/catch_runner.hpp).
#include "support/catch_runner.hpp"

int main(int argc, char* argv[]) { return agentcore::testing::run_catch(argc, argv); }
