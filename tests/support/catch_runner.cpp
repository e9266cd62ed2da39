// Catch2's implementation and session, compiled once for every test program
// (tests/support/catch_runner.hpp). Catch2 3 keeps its implementation in its library.
#include "support/catch_runner.hpp"

#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_session.hpp>
#else
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#endif

namespace agentcore::testing {

int run_catch(int argc, char* argv[]) { return Catch::Session().run(argc, argv); }

}  // namespace agentcore::testing
