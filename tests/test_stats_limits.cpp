// Token sums that saturate instead of wrapping, a line too large for memory answered with
// SessionError(storage), and write errors that name the entry and the field.
#include "support/builders.hpp"
#include "support/catch.hpp"
#include "support/errors.hpp"
#include "support/jsonl_fixtures.hpp"
#include "support/scratch.hpp"
#include "support/sizes.hpp"

#include <agentcore/convert.hpp>
#include <agentcore/session.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <limits>
#include <string>

using namespace agentcore;
using namespace agentcore::testing;

namespace {
constexpr std::int64_t max64 = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t min64 = std::numeric_limits<std::int64_t>::min();
}  // namespace

TEST_CASE("session stats saturate at INT64_MAX instead of wrapping", "[stats][limits]") {
    SessionStats stats;
    stats.add_usage(usage(max64, max64, max64, max64, 0));
    CHECK(stats.cached_tokens == max64);
    CHECK(stats.uncached_tokens == max64);
    CHECK(stats.total_tokens == max64);
    stats.add_usage(usage(1, 1, 1, 1, 0));
    CHECK(stats.total_tokens == max64);
    SessionStats negative;
    negative.add_usage(usage(min64, min64, min64, min64, 0));
    negative.add_usage(usage(-1, 0, -1, 0, 0));
    CHECK(negative.total_tokens == min64);

    // Through a storage, from a file whose counts are hostile.
    auto s = memory_session();
    append_message(s, assistant("a", "p", "m", usage(max64 - 1, 0, 0, 0, 0)));
    append_message(s, assistant("b", "p", "m", usage(max64 - 1, 0, 0, 0, 0)));
    CHECK(get_session_stats(s).total_tokens == max64);
    CHECK(get_session_stats(s).uncached_tokens == max64);
}

TEST_CASE("token estimates saturate at INT64_MAX instead of wrapping", "[tokens][limits]") {
    Usage u = usage(max64, max64, max64, max64, 0);
    u.total_tokens = 0;
    CHECK(usage_context_tokens(u) == max64);
    std::vector<AgentMessage> messages;
    Usage reported = usage(1, 1, 1, 1, 0);
    reported.total_tokens = max64;
    messages.push_back(assistant("a", "p", "m", reported));
    messages.push_back(user("more text after it"));
    const ContextTokenEstimate estimate = estimate_context_tokens(messages);
    CHECK(estimate.usage_tokens == max64);
    CHECK(estimate.trailing_tokens > 0);
    CHECK(estimate.tokens == max64);
}

TEST_CASE(
    "an entry too large for the process's memory is SessionError(storage), not std::bad_alloc",
    "[jsonl][limits]") {
    if (sanitized_build) {
        WARN("skipped under a sanitizer: it reserves more address space than the limit allows");
        return;
    }
    ScratchDir dir;
    const std::string path = dir.file("big.jsonl");
    const std::size_t text_bytes = std::size_t{96} << 20;
    {
        std::ofstream out(path, std::ios::binary);
        out << R"({"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/w","parent_session":null,"metadata":{}})"
               "\n";
        out << R"({"type":"message","id":"big00001","parent_id":null,"timestamp":"t","message":{"role":"user","content":")";
        const std::string chunk(1 << 20, 'x');
        for (std::size_t i = 0; i < text_bytes / chunk.size(); ++i) out << chunk;
        out << R"(","timestamp":1}})"
               "\n";
    }
    // In a child: open first, then limit the address space to what it uses plus 32 MB.
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        int code = 10;
        try {
            const auto storage = JsonlSessionStorage::open_read_only(path);
            std::FILE* statm = std::fopen("/proc/self/statm", "r");
            unsigned long pages = 0;
            if (statm == nullptr || std::fscanf(statm, "%lu", &pages) != 1) ::_exit(11);
            std::fclose(statm);
            const auto limit =
                static_cast<rlim_t>(pages) * static_cast<rlim_t>(::sysconf(_SC_PAGESIZE)) +
                (rlim_t{32} << 20);
            rlimit rl{limit, limit};
            if (::setrlimit(RLIMIT_AS, &rl) != 0) ::_exit(12);
            try {
                (void)storage.get_entry("big00001");
                code = 13;
            } catch (const SessionError& e) {
                const std::string what = e.what();
                code = e.code() == ErrorCode::storage && what.find("line 2") != std::string::npos &&
                               what.find("not enough memory") != std::string::npos
                           ? 0
                           : 14;
            }
            if (code == 0) {
                try {
                    (void)load_session_file(path);
                    code = 15;
                } catch (const SessionError& e) {
                    code = e.code() == ErrorCode::storage ? 0 : 16;
                }
            }
        } catch (const std::bad_alloc&) {
            code = 17;
        } catch (...) {
            code = 18;
        }
        ::_exit(code);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("a string that is not valid UTF-8 is refused naming the entry and the field",
          "[codec][limits]") {
    auto session = memory_session();
    AssistantMessage a;
    a.content.push_back(TextContent{"fine", {}});
    a.content.push_back(ToolCallContent{"c", "t", Json{{"path", "bad\xff"}}, {}});
    MessageEntry e;
    e.id = "utf80001";
    e.timestamp = "t";
    e.message = std::move(a);
    const std::string pi = message_of_error([&] { (void)encode_entry(e, Dialect::pi); });
    CHECK(pi.find("entry 'utf80001'") != std::string::npos);
    CHECK(pi.find("field 'message.content[1].arguments.path'") != std::string::npos);
    CHECK(pi.find("byte 3 of the string") != std::string::npos);

    ScratchDir dir;
    auto file = create_file_session(dir.file("s.jsonl"));
    UserMessage u;
    u.content = std::string("ok");
    u.extra = Json{{"k\xc3", 1}};
    const std::string key = message_of_error([&] { append_message(file, std::move(u)); });
    CHECK(key.find("field 'message.k") != std::string::npos);
    CHECK(key.find("a key is not valid UTF-8") != std::string::npos);

    // On reading, the scanner names the line, the entry and the field.
    write_file(
        dir.file("r.jsonl"),
        read_file(dir.file("s.jsonl")) +
            "{\"type\":\"custom\",\"id\":\"r1\",\"parent_id\":null,\"timestamp\":\"t\",\"custom_"
            "type\":\"x\",\"data\":{\"a\":[\"\xff\"]}}\n" +
            R"({"type":"custom","id":"r2","parent_id":null,"timestamp":"t","custom_type":"x"})"
            "\n");
    const std::string read =
        message_of_error([&] { JsonlSessionStorage::open_read_only(dir.file("r.jsonl")); });
    CHECK(read.find("line 2") != std::string::npos);
    CHECK(read.find("entry 'r1'") != std::string::npos);
    CHECK(read.find("invalid UTF-8 in field 'data.a[0]'") != std::string::npos);
}
