// Writes generated sessions as JSONL files, for the file benchmarks (and for trying tools on
// realistic data).
//
//   bench_gen_session --entries N --out FILE [--dialect native|pi] [--seed S]
//       one session of N entries (default 100,000) in one file
//   bench_gen_session --sessions M --root DIR [--seed S]
//       M small sessions (~100 entries each) in the repository layout of SPEC §4.10:
//       DIR/--<cwd, leading / dropped, / \ : replaced by ->--/<created, : and . replaced by
//       ->_<id>.jsonl
//
// The same seed gives the same bytes.

#include "bench_util.hpp"
#include "session_files.hpp"
#include "workload.hpp"

#include <agentcore/codec.hpp>
#include <agentcore/session.hpp>

#include <exception>
#include <iostream>
#include <string>

using namespace agentcore;
using namespace agentcore_bench;

namespace {

int usage(int code) {
    (code == 0 ? std::cout : std::cerr)
        << "usage: bench_gen_session --entries N --out FILE [--dialect native|pi] [--seed S]\n"
           "       bench_gen_session --sessions M --root DIR [--seed S]\n";
    return code;
}

}  // namespace

int main(int argc, char** argv) try {
    const Args args(argc, argv);
    if (args.flag("--help") || args.flag("-h")) return usage(0);
    const std::uint64_t seed = args.number("--seed", 1);
    const std::string dialect_name = args.text("--dialect", "native");
    if (dialect_name != "native" && dialect_name != "pi") return usage(2);
    const Dialect dialect = dialect_name == "pi" ? Dialect::pi : Dialect::native;

    if (!args.text("--sessions").empty()) {
        const std::string root = args.text("--root");
        if (root.empty()) return usage(2);
        const std::size_t count = args.number("--sessions", 1000);
        const auto t0 = Clock::now();
        const SmallSessionsWritten w = write_small_sessions(root, count, seed, dialect);
        std::cout << "wrote " << w.sessions << " sessions (" << w.entries << " entries, "
                  << human_bytes(static_cast<double>(w.bytes)) << ", " << dialect_name << ") under "
                  << root << " in " << fixed1(seconds_since(t0)) << " s\n";
        return 0;
    }

    const std::string out = args.text("--out");
    if (out.empty()) return usage(2);
    WorkloadOptions options;
    options.entries = args.number("--entries", 100000);
    options.seed = seed;
    const auto t0 = Clock::now();
    auto session = make_memory_session(options);
    const double generate_s = seconds_since(t0);
    const auto t1 = Clock::now();
    const std::size_t bytes = write_session_file(out, session, dialect);
    std::cout << "wrote " << out << ": " << options.entries << " entries, " << dialect_name << ", "
              << bytes << " bytes (" << human_bytes(static_cast<double>(bytes)) << ", "
              << fixed1(static_cast<double>(bytes) / static_cast<double>(options.entries))
              << " B/entry); generated in " << fixed1(generate_s) << " s, encoded and written in "
              << fixed1(seconds_since(t1)) << " s\n";
    return 0;
} catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
}
