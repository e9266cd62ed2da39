// Writers killed with SIGKILL at random moments (SPEC §6): appends, forks and repairs in
// flight. The loop counts come from the environment (AGENTCORE_KILL_LOOPS, default 1000, for
// appends; a quarter of it each for forks and repairs; a quarter of that again in sanitizer
// builds, where each process is slower); the stress program runs the long forms.
#include "stress/process_loops.hpp"
#include "support/catch.hpp"
#include "support/sizes.hpp"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

using namespace agentcore;
using namespace agentcore::testing;

namespace {

// AGENTCORE_KILL_LOOPS, or 1000 (a quarter of it under a sanitizer).
long kill_loops() { return static_cast<long>(from_env("AGENTCORE_KILL_LOOPS", sized(1000))); }

void print(const char* what, const CrashFigures& f) {
    std::printf(
        "reliability: kill -9 during %s: %ld loops, %ld acknowledged, %ld lost, %ld unopenable, "
        "%ld damaged, "
        "%ld complete, %ld not done, %ld temporary files left\n",
        what, f.loops, f.acknowledged, f.lost, f.unopenable, f.damaged, f.completed, f.absent,
        f.temp_files);
}

}  // namespace

TEST_CASE(
    "a writer killed at random moments never loses an acknowledged entry nor leaves an unopenable "
    "file",
    "[reliability][crash]") {
    ScratchDir dir;
    const auto f = kill_appends(dir.path(), kill_loops(), 20261202);
    print("appends", f);
    // Every other loop is killed only after its first acknowledged append: the loop appends,
    // however slow the machine.
    CHECK(f.acknowledged >= f.loops / 2);
    CHECK(f.lost == 0);
    CHECK(f.unopenable == 0);
}

TEST_CASE(
    "a fork killed at random moments leaves the source intact and no half-written session listed",
    "[reliability][crash]") {
    ScratchDir dir;
    const auto f = kill_forks(dir.path(), kill_loops() / 4, 7);
    print("forks", f);
    CHECK(f.lost == 0);
    CHECK(f.unopenable == 0);
    CHECK(f.damaged == 0);
}

TEST_CASE("a repair killed at random moments leaves the original or the clean copy, never a mix",
          "[reliability][crash]") {
    ScratchDir dir;
    const auto f = kill_repairs(dir.path(), kill_loops() / 4, 11);
    print("repairs", f);
    CHECK(f.lost == 0);
    CHECK(f.unopenable == 0);
    CHECK(f.damaged == 0);
}

TEST_CASE("a loop size from the environment is a positive whole number or the test stops naming it",
          "[reliability][sizes]") {
    const char* name = "AGENTCORE_TEST_LOOP_SIZE";
    ::unsetenv(name);
    CHECK(from_env(name, 12) == 12);
    ::setenv(name, "", 1);
    CHECK(from_env(name, 12) == 12);
    ::setenv(name, "5000", 1);
    CHECK(from_env(name, 12) == 5000);
    for (const char* bad : {"0", "-3", "12x", " 7", "1e3", "99999999999999999999"}) {
        ::setenv(name, bad, 1);
        std::string what = "accepted";
        try {
            from_env(name, 12);
        } catch (const std::invalid_argument& e) {
            what = e.what();
        }
        CHECK(what.find(std::string(name) + "='" + bad + "'") != std::string::npos);
    }
    ::unsetenv(name);
}
