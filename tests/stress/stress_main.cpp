// The long forms of the crash loops: kill -9 during appends, forks and repairs, for as many
// loops as asked. Prints the figures; exits non-zero when an acknowledged entry was lost, a
// file did not open, or a source or repair was damaged.
//
//   agentcore_stress [appends N] [forks N] [repairs N] [seed S]
//   (default: appends 10000 forks 2000 repairs 2000; scratch under $AGENTCORE_TEST_TMP or /tmp)
#include "stress/process_loops.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace agentcore::testing;

int main(int argc, char** argv) {
    long appends = 10000;
    long forks = 2000;
    long repairs = 2000;
    std::uint64_t seed =
        static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string key = argv[i];
        const long value = std::strtol(argv[i + 1], nullptr, 10);
        if (key == "appends")
            appends = value;
        else if (key == "forks")
            forks = value;
        else if (key == "repairs")
            repairs = value;
        else if (key == "seed")
            seed = static_cast<std::uint64_t>(value);
        else {
            std::fprintf(stderr, "usage: %s [appends N] [forks N] [repairs N] [seed S]\n", argv[0]);
            return 2;
        }
    }
    std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
    long broken = 0;
    auto report = [&](const char* what, const CrashFigures& f, double seconds) {
        std::printf(
            "kill -9 during %-8s %8ld loops %9ld acknowledged %ld lost %ld unopenable %ld damaged "
            "(%ld complete, %ld not done, %ld temporary files left) in %.0f s\n",
            what, f.loops, f.acknowledged, f.lost, f.unopenable, f.damaged, f.completed, f.absent,
            f.temp_files, seconds);
        std::fflush(stdout);
        broken += f.lost + f.unopenable + f.damaged;
    };
    auto timed = [&](const char* what, auto&& run) {
        ScratchDir dir;
        const auto start = std::chrono::steady_clock::now();
        const CrashFigures f = run(dir.path());
        report(what, f,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    };
    if (appends > 0)
        timed("appends", [&](const std::string& d) { return kill_appends(d, appends, seed); });
    if (forks > 0) timed("forks", [&](const std::string& d) { return kill_forks(d, forks, seed); });
    if (repairs > 0)
        timed("repairs", [&](const std::string& d) { return kill_repairs(d, repairs, seed); });
    return broken == 0 ? 0 : 1;
}
