#pragma once
// Writing generated sessions as JSONL files: one session in one file, or many small sessions in
// the repository layout of SPEC §4.10 (the repository's own folder and file names).

#include "workload.hpp"

#include <agentcore/codec.hpp>
#include <agentcore/jsonl/jsonl_repo.hpp>
#include <agentcore/session.hpp>

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace agentcore_bench {

/// Writes the header and every entry of an in-memory session, one line each, with the codec;
/// returns the bytes written. Throws std::runtime_error when the file cannot be written.
inline std::size_t write_session_file(const std::string& file,
                                      const Session<InMemorySessionStorage<>>& session,
                                      Dialect dialect) {
    std::FILE* out = std::fopen(file.c_str(), "wb");
    if (out == nullptr) throw std::runtime_error("cannot create " + file);
    std::string buffer = encode_header(session.storage().metadata(), dialect);
    buffer.push_back('\n');
    std::size_t total = 0;
    bool ok = true;
    auto flush = [&] {
        ok = ok && std::fwrite(buffer.data(), 1, buffer.size(), out) == buffer.size();
        total += buffer.size();
        buffer.clear();
    };
    for (const auto& entry : session.storage().entries()) {
        buffer += encode_entry(*entry, dialect);
        buffer.push_back('\n');
        if (buffer.size() >= (std::size_t{1} << 20)) flush();
    }
    flush();
    ok = (std::fclose(out) == 0) && ok;
    if (!ok) throw std::runtime_error("cannot write " + file);
    return total;
}

/// What write_small_sessions wrote.
struct SmallSessionsWritten {
    std::size_t sessions = 0;
    std::size_t entries = 0;
    std::size_t bytes = 0;
};

/// Writes `count` small generated sessions (~100 entries each) under `root`, one folder per
/// working directory, as a JsonlSessionRepo lays them out.
inline SmallSessionsWritten write_small_sessions(const std::string& root, std::size_t count,
                                                 std::uint64_t seed, Dialect dialect) {
    namespace fs = std::filesystem;
    SmallSessionsWritten w;
    for_each_small_session(count, seed, [&](const WorkloadOptions& o, const auto& session) {
        const SessionHeader& h = session.storage().metadata();
        const fs::path folder = fs::path(root) / JsonlSessionRepo::folder_name(o.cwd);
        fs::create_directories(folder);
        w.bytes += write_session_file(folder / JsonlSessionRepo::file_name(h.timestamp, h.id),
                                      session, dialect);
        w.entries += session.storage().entry_count();
        ++w.sessions;
    });
    return w;
}

}  // namespace agentcore_bench
