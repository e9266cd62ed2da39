// libFuzzer target: the path walk and build_context over trees built from the input. Each byte
// picks an operation (append a message, move the leaf with or without a branch summary, a
// compaction with or without a first kept entry and a retained tail, labels, settings).
// Checks: no crash; the walk matches a reference walk written from SPEC §4.4; the same tree
// written as a JSONL file and opened again gives the same path and the same context for every
// entry.
#include <agentcore/jsonl/jsonl_storage.hpp>
#include <agentcore/session.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace agentcore;

struct Bytes {
    const std::uint8_t* p;
    const std::uint8_t* end;
    std::uint8_t next() { return p < end ? *p++ : 0; }
    [[nodiscard]] bool more() const { return p < end; }
};

// An existing entry id, or none (when the byte says so or there are no entries).
std::optional<std::string> pick(const Session<InMemorySessionStorage<>>& s, std::uint8_t b) {
    const auto all = s.storage().get_entries();
    if (all.empty() || b % 8 == 0) return std::nullopt;
    return id_of(*all[b % all.size()]);
}

AgentMessage message_from(std::uint8_t b) {
    switch (b % 4) {
        case 0: return UserMessage{"u" + std::to_string(b), 1000, {}};
        case 1: {
            AssistantMessage m;
            m.content.push_back(TextContent{"a" + std::to_string(b), {}});
            m.provider = "p";
            m.model = "m" + std::to_string(b % 3);
            m.usage.input = b;
            m.timestamp = 2000;
            return m;
        }
        case 2: {
            AssistantMessage m;
            m.content.push_back(
                ToolCallContent{"c" + std::to_string(b % 5), "read", Json::object(), {}});
            m.provider = "p";
            m.model = "m";
            m.stop_reason = "tool_use";
            m.timestamp = 2000;
            return m;
        }
        default: {
            ToolResultMessage m;
            m.tool_call_id = "c" + std::to_string(b % 5);
            m.tool_name = "read";
            m.content.push_back(TextContent{"r", {}});
            m.timestamp = 3000;
            return m;
        }
    }
}

// SPEC §4.4 read literally.
std::vector<std::string> reference_walk(const InMemorySessionStorage<>& s,
                                        const std::string& start) {
    // The first compaction met (the newest on the path) decides where the path starts; older
    // compactions met after it change nothing.
    std::vector<std::string> out;
    std::optional<std::string> stop_at;
    bool decided = false;
    std::optional<std::string> at = start;
    while (at) {
        const EntryHandle e = s.get_entry(*at);
        if (!e) std::abort();
        out.insert(out.begin(), *at);
        if (out.size() > s.entry_count()) std::abort();
        if (const auto* c = std::get_if<CompactionEntry>(e.get()); c != nullptr && !decided) {
            decided = true;
            if (c->retained_tail) break;
            stop_at = c->first_kept_entry_id;
        }
        if (stop_at && *stop_at == *at) break;
        at = parent_id_of(*e);
    }
    return out;
}

std::vector<std::string> ids(const std::vector<EntryHandle>& path) {
    std::vector<std::string> out;
    for (const auto& e : path) out.push_back(id_of(*e));
    return out;
}

std::string context_text(const SessionContext& c) {
    Json out = Json::array();
    for (const auto& m : c.messages) out.push_back(message_to_json(*m, Dialect::native));
    out.push_back(c.thinking_level);
    out.push_back(c.model ? c.model->model_id : std::string("-"));
    return dump_json(out);
}

const std::string& work_dir() {
    static const std::string dir = [] {
        const char* base = std::filesystem::exists("/dev/shm") ? "/dev/shm" : "/tmp";
        std::string d = std::string(base) + "/agentcore-fuzz-tree-" + std::to_string(::getpid());
        std::filesystem::remove_all(d);
        std::filesystem::create_directories(d);
        return d;
    }();
    return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Bytes in{data, data + size};
    SessionHeader header;
    header.id = "fuzz";
    header.timestamp = "2026-12-02T07:43:23.123Z";
    header.cwd = "/w";
    Session<InMemorySessionStorage<>> s(
        InMemorySessionStorage<>(header, Environment::deterministic(1796197403123, 7)));
    int ops = 0;
    while (in.more() && ++ops < 48) {
        const std::uint8_t op = in.next();
        try {
            switch (op % 8) {
                case 0:
                case 1: append_message(s, message_from(in.next())); break;
                case 2: {
                    const auto target = pick(s, in.next());
                    const std::uint8_t how = in.next();
                    if (how % 3 == 0)
                        move_to(s, target);
                    else
                        move_to(s, target,
                                BranchSummaryInput{how % 3 == 1 ? "" : "went back", Json(),
                                                   std::nullopt, false});
                    break;
                }
                case 3: {
                    const auto kept = pick(s, in.next());
                    const std::uint8_t tail = in.next();
                    std::optional<std::vector<AgentMessage>> retained;
                    if (tail % 3 == 1) retained.emplace();
                    if (tail % 3 == 2) retained = std::vector<AgentMessage>{message_from(tail)};
                    append_compaction(s, "summary", kept, 100, Json(), false, std::nullopt,
                                      std::move(retained));
                    break;
                }
                case 4: set_leaf_id(s, pick(s, in.next())); break;
                case 5: {
                    const auto target = pick(s, in.next());
                    if (target) append_label(s, *target, std::string("l"));
                    break;
                }
                case 6: append_thinking_level_change(s, in.next() % 2 ? "high" : "low"); break;
                default: append_custom_message_entry(s, "hint", std::string("h")); break;
            }
        } catch (const SessionError&) {
        }
    }

    // The same tree through a JSONL file.
    const std::string path = work_dir() + "/t.jsonl";
    std::string text = encode_header(header, Dialect::native) + "\n";
    for (const auto& e : s.storage().get_entries())
        text += encode_entry(*e, Dialect::native) + "\n";
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || ::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size()))
        std::abort();
    ::close(fd);
    Session<JsonlSessionStorage> file(JsonlSessionStorage::open_read_only(path));
    if (file.storage().get_leaf_id() != s.storage().get_leaf_id()) std::abort();
    if (context_text(build_context(file)) != context_text(build_context(s))) std::abort();

    for (const auto& e : s.storage().get_entries()) {
        const std::string& id = id_of(*e);
        const auto path_ids = ids(s.storage().get_path_to_root_or_compaction(id));
        if (path_ids != reference_walk(s.storage(), id)) std::abort();
        if (ids(file.storage().get_path_to_root_or_compaction(id)) != path_ids) std::abort();
        if (context_text(build_context_at(s, id)) != context_text(build_context_at(file, id)))
            std::abort();
    }
    return 0;
}
