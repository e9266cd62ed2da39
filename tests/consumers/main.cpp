// A consumer's program: includes agentcore as a user would and calls a little of its API.
#if __has_include(<agentcore/session.hpp>)
#include <agentcore/session.hpp>
#endif
#include <agentcore/entries.hpp>
#include <agentcore/ids.hpp>
#include <agentcore/version.hpp>

#include <cstdio>
#include <string>

int main() {
    agentcore::MessageEntry entry;
    entry.id = "a1b2c3d4";
    entry.timestamp = agentcore::format_timestamp(1796197403123);
    std::int64_t ms = 0;
    const bool ok = entry.timestamp == "2026-12-02T07:43:23.123Z" &&
                    agentcore::parse_timestamp(entry.timestamp, ms) && ms == 1796197403123 &&
                    agentcore::is_valid_session_id("consumer-1") &&
                    std::string(agentcore::version_string) == AGENTCORE_EXPECTED_VERSION;
    std::printf("agentcore %s consumed: %s\n", agentcore::version_string, ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
