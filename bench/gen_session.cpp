// Writes generated sessions as JSONL files, for the file benchmarks (and for trying tools on
// realistic data).
//
//   bench_gen_session --entries N --out FILE [--dialect native|pi] [--seed S]
//       one session of N entries (default 100,000) in one file
//   bench_gen_session --sessions M --root DIR [--seed S]
//       M small sessions (~100 entries each) in the repository layout of SPEC §4.10:
//       DIR/--<cwd, leading / dropped, / \ : replaced by ->--/<created, : and . replaced by ->_<id>.jsonl
//
// The same seed gives the same bytes.

#include "bench_util.hpp"
#include "workload.hpp"

#include <agentcore/codec.hpp>
#include <agentcore/session.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>

using namespace agentcore;
using namespace agentcore_bench;
namespace fs = std::filesystem;

namespace {

// Writes the header and every entry of a session, one line each; returns the bytes written.
std::size_t write_session(const fs::path& file, const Session<InMemorySessionStorage<>>& session,
                          Dialect dialect) {
    std::FILE* out = std::fopen(file.c_str(), "wb");
    if (out == nullptr) {
        std::cerr << "error: cannot create " << file << "\n";
        std::exit(1);
    }
    std::string buffer = encode_header(session.storage().metadata(), dialect);
    buffer.push_back('\n');
    std::size_t total = 0;
    auto flush = [&] {
        if (std::fwrite(buffer.data(), 1, buffer.size(), out) != buffer.size()) {
            std::cerr << "error: cannot write " << file << "\n";
            std::exit(1);
        }
        total += buffer.size();
        buffer.clear();
    };
    for (const auto& entry : session.storage().entries()) {
        buffer += encode_entry(*entry, dialect);
        buffer.push_back('\n');
        if (buffer.size() >= (1U << 20)) flush();
    }
    flush();
    if (std::fclose(out) != 0) {
        std::cerr << "error: cannot write " << file << "\n";
        std::exit(1);
    }
    return total;
}

// SPEC §4.10: the folder of a working directory, `--<cwd, leading slash dropped, / \ : as ->--`.
std::string cwd_folder(std::string_view cwd) {
    if (!cwd.empty() && cwd.front() == '/') cwd.remove_prefix(1);
    std::string name = "--";
    for (char c : cwd) name.push_back(c == '/' || c == '\\' || c == ':' ? '-' : c);
    return name + "--";
}

// SPEC §4.10: the file of a session, `<creation time, : and . as ->_<id>.jsonl`.
std::string session_file_name(const SessionHeader& header) {
    std::string name;
    for (char c : header.timestamp) name.push_back(c == ':' || c == '.' ? '-' : c);
    return name + "_" + header.id + ".jsonl";
}

int usage(int code) {
    (code == 0 ? std::cout : std::cerr)
        << "usage: bench_gen_session --entries N --out FILE [--dialect native|pi] [--seed S]\n"
           "       bench_gen_session --sessions M --root DIR [--seed S]\n";
    return code;
}

}  // namespace

int main(int argc, char** argv) {
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
        std::size_t bytes = 0, entries = 0;
        for_each_small_session(count, seed, [&](const WorkloadOptions& o, const auto& session) {
            const fs::path folder = fs::path(root) / cwd_folder(o.cwd);
            fs::create_directories(folder);
            bytes += write_session(folder / session_file_name(session.storage().metadata()), session, dialect);
            entries += session.storage().entry_count();
        });
        std::cout << "wrote " << count << " sessions (" << entries << " entries, " << human_bytes(static_cast<double>(bytes))
                  << ", " << dialect_name << ") under " << root << " in " << fixed1(seconds_since(t0)) << " s\n";
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
    const std::size_t bytes = write_session(out, session, dialect);
    std::cout << "wrote " << out << ": " << options.entries << " entries, " << dialect_name << ", " << bytes
              << " bytes (" << human_bytes(static_cast<double>(bytes)) << ", "
              << fixed1(static_cast<double>(bytes) / static_cast<double>(options.entries))
              << " B/entry); generated in " << fixed1(generate_s) << " s, encoded and written in "
              << fixed1(seconds_since(t1)) << " s\n";
    return 0;
}
