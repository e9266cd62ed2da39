// The differential test against pi itself (ctest label `interop`).
//
// 1. installs pi into a scratch folder (install_pi.mjs; exit 77 = skip, see there);
// 2. has pi write sessions with every entry type and describe them (write_sessions.mjs): for
//    every entry taken as the leaf, pi's buildSessionContext; the entry count, leaf and name;
// 3. opens each file with agentcore and compares: contexts as JSON (agentcore's messages in the
//    pi dialect), entry count, leaf, name;
// 4. converts each v3 file pi → native → pi; pi must read the result as it read the original;
// 5. appends entries of every kind to copies of pi's files with agentcore (the pi dialect is
//    kept), and to a new session it creates in the pi dialect, and has pi open them
//    (verify_appended.mjs): pi must see the new entries, the leaf, the name, a label, and the
//    context agentcore builds;
// 6. alternates agentcore and pi on one pi-dialect file (pi_step.mjs): agentcore moves (with and
//    without a summary, move_to and set_leaf_id), appends messages of every role, custom and
//    custom-message entries, labels, names, setting and active-tool changes, and compacts (with
//    its own code and directly); pi opens the file, must build the context agentcore built, with
//    a leaf that resolves to agentcore's, and appends, labels, names, compacts and branches in
//    turn; agentcore reads pi's work back and must build the context pi built. Both sides agree
//    at every step.
//
// Usage: agentcore_interop <node> <scripts folder> <fixtures folder> <scratch folder>

#include <agentcore/codec.hpp>
#include <agentcore/compaction.hpp>
#include <agentcore/convert.hpp>
#include <agentcore/jsonl/jsonl_storage.hpp>
#include <agentcore/memory/memory_storage.hpp>
#include <agentcore/pi_migrate.hpp>
#include <agentcore/session_ops.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using agentcore::Json;
using PlainJson = nlohmann::json;  // key order does not matter when comparing

constexpr int skip_code = 77;

int failures = 0;

void fail(const std::string& what) {
    ++failures;
    std::cerr << "MISMATCH: " << what << '\n';
}

std::string quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) {
        if (c == '\'')
            out += "'\\''";
        else
            out.push_back(c);
    }
    return out + "'";
}

int run(const std::vector<std::string>& args) {
    std::string command;
    for (const auto& a : args) command += quote(a) + " ";
    std::cout << "$ " << command << std::endl;
    const int status = std::system(command.c_str());
    if (status == -1 || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
}

PlainJson read_json_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    return PlainJson::parse(in);
}

PlainJson plain(const Json& j) { return PlainJson::parse(agentcore::dump_json(j)); }

std::string brief(const PlainJson& j) {
    std::string s = j.dump();
    return s.size() > 600 ? s.substr(0, 600) + "..." : s;
}

/// agentcore's context in pi's shape: {messages, thinkingLevel, model}.
PlainJson context_as_pi(const agentcore::SessionContext& context) {
    PlainJson out = PlainJson::object();
    PlainJson messages = PlainJson::array();
    for (const auto& m : context.messages)
        messages.push_back(plain(agentcore::message_to_json(*m, agentcore::Dialect::pi)));
    out["messages"] = std::move(messages);
    out["thinkingLevel"] = context.thinking_level;
    if (context.model)
        out["model"] =
            PlainJson{{"provider", context.model->provider}, {"modelId", context.model->model_id}};
    else
        out["model"] = nullptr;
    return out;
}

/// Reports a difference between agentcore's and pi's context, message by message.
void fail_context(const std::string& what, const PlainJson& ours, const PlainJson& theirs) {
    std::ostringstream detail;
    detail << what << '\n';
    for (const char* key : {"thinkingLevel", "model"})
        if (ours.at(key) != theirs.at(key))
            detail << "  " << key << ": agentcore " << ours.at(key) << ", pi " << theirs.at(key)
                   << '\n';
    const auto& a = ours.at("messages");
    const auto& b = theirs.at("messages");
    if (a.size() != b.size())
        detail << "  message count: agentcore " << a.size() << ", pi " << b.size() << '\n';
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
        if (a[i] != b[i])
            detail << "  message " << i << ":\n    agentcore " << brief(a[i]) << "\n    pi        "
                   << brief(b[i]) << '\n';
    fail(detail.str());
}

/// agentcore's context at an entry: messages from the path, the state from the whole ancestry.
template <class Storage>
PlainJson context_at(const Storage& storage, const std::string& leaf) {
    agentcore::SessionContext context =
        agentcore::build_session_context(storage.get_path_to_root_or_compaction(leaf));
    agentcore::set_context_state(context, storage.get_state_entries(leaf));
    return context_as_pi(context);
}

/// Compares pi's description of one file with what agentcore reads from it.
template <class Storage>
void compare(const PlainJson& expected, const Storage& storage) {
    const std::string scenario = expected.at("scenario").get<std::string>();
    const bool ids_stable = expected.at("idsStable").get<bool>();
    const auto entries = storage.get_entries({});
    if (entries.size() != expected.at("entryCount").get<std::size_t>()) {
        fail(scenario + ": entry count " + std::to_string(entries.size()) + ", pi " +
             expected.at("entryCount").dump());
        return;
    }
    auto id_at = [&](const PlainJson& index) {
        return agentcore::id_of(*entries.at(index.get<std::size_t>()));
    };
    const std::string expected_leaf =
        ids_stable ? expected.at("leafId").get<std::string>() : id_at(expected.at("leafIndex"));
    if (storage.get_leaf_id().value_or("") != expected_leaf)
        fail(scenario + ": leaf " + storage.get_leaf_id().value_or("<none>") + ", pi " +
             expected_leaf);
    const auto name = storage.get_session_name();
    const PlainJson name_json = name ? PlainJson(*name) : PlainJson(nullptr);
    if (name_json != expected.at("name"))
        fail(scenario + ": name " + name_json.dump() + ", pi " + expected.at("name").dump());

    const PlainJson& labels = expected.at("labels");
    for (const auto& e : entries) {
        const std::string& id = agentcore::id_of(*e);
        const auto label = storage.get_label(id);
        const PlainJson ours = label ? PlainJson(*label) : PlainJson(nullptr);
        const PlainJson theirs =
            ids_stable && labels.contains(id) ? labels.at(id) : PlainJson(nullptr);
        if (ours != theirs)
            fail(scenario + ": label of " + id + " is " + ours.dump() + ", pi " + theirs.dump());
    }
    if (!ids_stable && !labels.empty()) fail(scenario + ": labels in a v1 file cannot be compared");

    std::size_t compared = 0;
    for (const auto& c : expected.at("contexts")) {
        const std::string id = ids_stable ? c.at("id").get<std::string>() : id_at(c.at("index"));
        if (ids_stable && id != id_at(c.at("index"))) {
            fail(scenario + ": entry " + c.at("index").dump() + " has id " + id_at(c.at("index")) +
                 ", pi " + id);
            continue;
        }
        const PlainJson ours = context_at(storage, id);
        const PlainJson& theirs = c.at("context");
        ++compared;
        if (ours == theirs) continue;
        fail_context(
            scenario + ": context at entry " + c.at("index").dump() + " (" + id + ") differs", ours,
            theirs);
    }
    std::cout << "  " << scenario << ": " << entries.size() << " entries, " << compared
              << " contexts compared\n";
}

agentcore::AgentMessage assistant_with_tool_call() {
    agentcore::AssistantMessage m;
    m.content.push_back(
        agentcore::ThinkingContent{"Let me check.", Json{{"thinkingSignature", "sig-cpp"}}});
    m.content.push_back(agentcore::TextContent{"Checking.", {}});
    m.content.push_back(
        agentcore::ToolCallContent{"call_cpp", "bash", Json{{"command", "ls"}}, {}});
    m.api = "anthropic-messages";
    m.provider = "anthropic";
    m.model = "claude-opus-4";
    m.usage.input = 10;
    m.usage.output = 5;
    m.usage.cache_read = 2;
    m.usage.total_tokens = 17;
    m.usage.cost.total = 0.5;
    m.stop_reason = "tool_use";
    m.timestamp = 1768500000000;
    return m;
}

/// Appends entries of every kind to a session; returns what pi must see in its file.
PlainJson append_everything(agentcore::Session<agentcore::JsonlSessionStorage>& session) {
    std::vector<std::string> ids;
    ids.push_back(agentcore::append_thinking_level_change(session, "medium"));
    ids.push_back(agentcore::append_model_change(session, "anthropic", "claude-opus-4"));
    const std::string user =
        agentcore::append_message(session, agentcore::user_text("Hello from C++", 1768500000000));
    ids.push_back(user);
    const std::string call = agentcore::append_message(session, assistant_with_tool_call());
    ids.push_back(call);
    agentcore::ToolResultMessage result;
    result.tool_call_id = "call_cpp";
    result.tool_name = "bash";
    result.content.push_back(agentcore::TextContent{"a.txt", {}});
    result.timestamp = 1768500000001;
    ids.push_back(agentcore::append_message(session, result));
    ids.push_back(agentcore::append_custom_message_entry(
        session, "agentcore", std::string("Injected by C++"), true, Json{{"k", 1}}));
    ids.push_back(agentcore::append_custom_entry(session, "agentcore-state", Json{{"n", 1}}));
    ids.push_back(agentcore::append_label(session, user, "from-cpp"));
    ids.push_back(agentcore::append_session_name(session, "Continued\nfrom C++"));
    ids.push_back(agentcore::append_compaction(session, "Compacted by C++", user, 4242));
    ids.push_back(agentcore::append_message(
        session, agentcore::user_text("After the C++ compaction", 1768500000002)));
    const auto summary = agentcore::move_to(
        session, call, agentcore::BranchSummaryInput{"Left a C++ branch", {}, {}, false});
    ids.push_back(*summary);
    ids.push_back(agentcore::append_message(
        session, agentcore::user_text("On the new C++ branch", 1768500000003)));

    PlainJson spec;
    spec["file"] = session.storage().path();
    spec["entryCount"] = session.storage().entry_count();
    spec["leafId"] = agentcore::get_leaf_id(session).value_or("");
    spec["name"] = agentcore::get_session_name(session).value_or("");
    spec["newIds"] = ids;
    spec["label"] = {{"target", user}, {"label", "from-cpp"}};
    spec["context"] = context_as_pi(agentcore::build_context(session));
    return spec;
}

/// Appends entries of every kind to a copy of a pi file.
PlainJson append_with_agentcore(const std::string& source, const std::string& copy) {
    namespace fs = std::filesystem;
    fs::copy_file(source, copy, fs::copy_options::overwrite_existing);
    auto storage = agentcore::JsonlSessionStorage::open(copy);
    if (storage.dialect() != agentcore::Dialect::pi) fail(copy + ": not opened as a pi file");
    agentcore::Session<agentcore::JsonlSessionStorage> session(std::move(storage));
    return append_everything(session);
}

/// A new, empty session file that agentcore creates in the pi dialect (replacing any old one).
agentcore::JsonlSessionStorage create_pi_file(const std::string& path, const std::string& id) {
    std::filesystem::remove(path);
    agentcore::SessionHeader header;
    header.id = id;
    header.timestamp = "2026-01-20T10:00:00.000Z";
    header.cwd = "/work/project";
    agentcore::JsonlStorageOptions options;
    options.dialect = agentcore::Dialect::pi;
    return agentcore::JsonlSessionStorage::create(path, std::move(header), std::move(options));
}

/// A new session that agentcore creates in the pi dialect.
PlainJson create_with_agentcore(const std::string& path) {
    agentcore::Session<agentcore::JsonlSessionStorage> session(
        create_pi_file(path, "created-by-agentcore"));
    return append_everything(session);
}

agentcore::AgentMessage assistant_text(const std::string& text) {
    agentcore::AssistantMessage m;
    m.content.push_back(agentcore::TextContent{text, {}});
    m.api = "anthropic-messages";
    m.provider = "anthropic";
    m.model = "claude-opus-4";
    m.stop_reason = "stop";
    m.timestamp = 1768500000100;
    return m;
}

using FileSession = agentcore::Session<agentcore::JsonlSessionStorage>;

/// A 1x1 PNG, base64.
constexpr const char* pixel =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+"
    "M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// agentcore and pi taking turns on one pi-dialect file. Each agentcore turn writes, then reads
/// the file back; pi opens it and must build the same context (and have the entries agentcore
/// moved to on its branch), then does something of its own; agentcore reads pi's work back and
/// must build the context pi built, with pi's leaf, labels and name.
class Alternation {
public:
    Alternation(std::string node, std::filesystem::path scripts, std::filesystem::path pi_folder,
                std::filesystem::path folder)
        : node_(std::move(node)),
          scripts_(std::move(scripts)),
          pi_folder_(std::move(pi_folder)),
          folder_(std::move(folder)),
          file_((folder_ / "alternating.jsonl").string()) {}

    void play() {
        create_pi_file(file_, "alternating-session");
        ours("first exchange", [&](FileSession& s) {
            agentcore::append_thinking_level_change(s, "high");
            id("u1") = agentcore::append_message(
                s, agentcore::user_text("First question from C++", 1768500000000));
            id("a1") = agentcore::append_message(s, assistant_with_tool_call());
            agentcore::ToolResultMessage result;
            result.tool_call_id = "call_cpp";
            result.tool_name = "bash";
            result.content.push_back(agentcore::TextContent{"a.txt", {}});
            result.timestamp = 1768500000001;
            id("t1") = agentcore::append_message(s, result);
            id("a1b") = agentcore::append_message(s, assistant_text("First answer from C++"));
            id("u2") = agentcore::append_message(
                s, agentcore::user_text("Second question from C++", 1768500000002));
            id("a2") = agentcore::append_message(s, assistant_text("Second answer from C++"));
        });
        pi_turn("append", "pi continues");

        ours("move back without a summary",
             [&](FileSession& s) { agentcore::move_to(s, id("a1b")); }, {id("a1b")});
        pi_turn("append", "pi on the branch agentcore moved to");

        ours("label and name", [&](FileSession& s) {
            agentcore::append_label(s, id("u1"), std::string("first"));
            agentcore::append_session_name(s, "Alternating");
        });
        pi_turn("label", "pi-label", id("u2"));

        ours("move before the first entry",
             [&](FileSession& s) { agentcore::move_to(s, std::nullopt); });
        pi_turn("append", "pi starts over at the root");

        ours("move to the old line, append",
             [&](FileSession& s) {
                 agentcore::move_to(s, id("a2"));
                 id("u3") = agentcore::append_message(
                     s, agentcore::user_text("Third question from C++", 1768500000003));
                 id("a3") = agentcore::append_message(s, assistant_text("Third answer from C++"));
             },
             {id("a2")});
        pi_turn("compact", "pi compacted");

        ours("compact", [&](FileSession& s) {
            agentcore::append_message(s,
                                      agentcore::user_text(std::string(400, 'q'), 1768500000004));
            agentcore::append_message(s, assistant_text(std::string(400, 'r')));
            auto prep =
                agentcore::prepare_compaction(s, agentcore::CompactionSettings{true, 16384, 120});
            if (!prep) throw std::runtime_error("agentcore found nothing to compact");
            agentcore::compact(s, *prep, [](const agentcore::SummaryRequest&) {
                return agentcore::SummaryResult{"agentcore compacted", std::nullopt};
            });
        });
        pi_turn("branch", "pi branches from the C++ question", id("u3"));

        ours("move with a summary",
             [&](FileSession& s) {
                 agentcore::move_to(
                     s, id("a3"),
                     agentcore::BranchSummaryInput{"agentcore left a branch", {}, {}, false});
             },
             {id("a3")});
        pi_turn("settings", "");

        ours("two moves in a row, then settings",
             [&](FileSession& s) {
                 agentcore::move_to(s, id("u3"));
                 agentcore::move_to(s, id("a1"));
                 agentcore::append_model_change(s, "openai", "gpt-5");
             },
             {id("a1")});
        pi_turn("branchWithSummary", "pi left the C++ branch", id("a2"));

        ours("move to pi's compaction's branch",
             [&](FileSession& s) { agentcore::move_to(s, id("a3")); }, {id("a3")});
        pi_turn("name", "Named by pi");

        ours("label and move",
             [&](FileSession& s) {
                 agentcore::append_label(s, id("a2"), std::string("second"));
                 agentcore::move_to(s, id("u2"));
             },
             {id("u2")});
        pi_turn("compact", "pi compacted after a move");

        ours("set_leaf_id, then active tools",
             [&](FileSession& s) {
                 agentcore::set_leaf_id(s, id("u3"));
                 id("tools1") = agentcore::append_active_tools_change(s, {"read", "bash"});
             },
             {id("u3")});
        pi_turn("append", "pi after a change of the active tools");

        ours("active tools as the last entry", [&](FileSession& s) {
            id("u4") = agentcore::append_message(
                s, agentcore::user_text("Fourth question from C++", 1768500000005));
            id("tools2") = agentcore::append_active_tools_change(s, {});
        });
        pi_turn("branchWithSummary", "pi left the branch of the tool change", id("tools2"));

        ours("custom and custom-message entries",
             [&](FileSession& s) {
                 agentcore::move_to(s, id("tools2"));
                 id("custom") = agentcore::append_custom_entry(s, "agentcore-state",
                                                               Json{{"n", 2}, {"tools", {"read"}}});
                 id("cm1") = agentcore::append_custom_message_entry(
                     s, "agentcore-note", std::string("Hidden note from C++"), false,
                     Json{{"source", "cpp"}});
                 std::vector<agentcore::ContentBlock> blocks;
                 blocks.push_back(agentcore::TextContent{"Shown note from C++", {}});
                 blocks.push_back(agentcore::ImageContent{std::string(pixel), "image/png", {}});
                 id("cm2") = agentcore::append_custom_message_entry(s, "agentcore-card",
                                                                    std::move(blocks), true);
                 agentcore::append_message(s, assistant_text("Noted, from C++"));
             },
             {id("tools2")});
        pi_turn("compact", "pi compacted over custom messages");

        ours("bash executions and custom messages", [&](FileSession& s) {
            agentcore::BashExecutionMessage ran;
            ran.command = "make test";
            ran.output = "ok\n";
            ran.exit_code = 0;
            ran.timestamp = 1768500000006;
            id("bash1") = agentcore::append_message(s, ran);
            agentcore::BashExecutionMessage cut;
            cut.command = "yes | head -c 100000";
            cut.output = "y\ny\n";
            cut.exit_code = 1;
            cut.truncated = true;
            cut.full_output_path = "/tmp/pi-bash-output.txt";
            cut.timestamp = 1768500000007;
            agentcore::append_message(s, cut);
            agentcore::BashExecutionMessage hidden;
            hidden.command = "cat secrets.txt";
            hidden.output = "(hidden)";
            hidden.cancelled = true;
            hidden.exclude_from_context = true;
            hidden.timestamp = 1768500000008;
            agentcore::append_message(s, hidden);
            agentcore::CustomMessage note;
            note.custom_type = "agentcore-reminder";
            note.content = std::string("A custom message from C++");
            note.display = true;
            note.details = Json{{"priority", 1}};
            note.timestamp = 1768500000009;
            id("custom_message") = agentcore::append_message(s, note);
            agentcore::append_message(s, assistant_text("Ran them, from C++"));
        });
        pi_turn("compact", "pi compacted over bash executions");

        ours("a compaction appended directly", [&](FileSession& s) {
            agentcore::append_message(
                s, agentcore::user_text("Fifth question from C++", 1768500000010));
            agentcore::append_message(s, assistant_text("Fifth answer from C++"));
            const auto branch = agentcore::get_branch(s);
            const std::string kept = agentcore::id_of(*branch.at(branch.size() - 2));
            agentcore::append_compaction(
                s, "Compacted directly by C++", kept, 5000,
                Json{{"readFiles", {"a.txt"}}, {"modifiedFiles", Json::array()}}, true);
        });
        pi_turn("settings", "");

        ours("a compaction that keeps nothing, then settings", [&](FileSession& s) {
            agentcore::append_compaction(s, "Compacted by C++, nothing kept", std::nullopt, 6000);
            agentcore::append_thinking_level_change(s, "low");
            agentcore::append_active_tools_change(s, {"read"});
        });
        pi_turn("append", "pi after a compaction that kept nothing");

        ours("compact, keeping the tail", [&](FileSession& s) {
            agentcore::append_message(s,
                                      agentcore::user_text(std::string(400, 's'), 1768500000012));
            agentcore::append_custom_message_entry(s, "agentcore-note",
                                                   std::string("Kept note from C++"), true);
            agentcore::append_message(s, assistant_text(std::string(400, 't')));
            auto prep =
                agentcore::prepare_compaction(s, agentcore::CompactionSettings{true, 16384, 120});
            if (!prep) throw std::runtime_error("agentcore found nothing to compact");
            agentcore::compact(
                s, *prep,
                [](const agentcore::SummaryRequest&) {
                    return agentcore::SummaryResult{"agentcore compacted, keeping the tail",
                                                    std::nullopt};
                },
                agentcore::CompactOptions{.retain_tail = true});
        });
        pi_turn("append", "pi after a compaction that kept its tail");

        ours("set_leaf_id to the leaf it has",
             [&](FileSession& s) { agentcore::set_leaf_id(s, agentcore::get_leaf_id(s)); },
             {id("pi leaf")});
        pi_turn("none", "");

        ours("set_leaf_id after pi's look",
             [&](FileSession& s) { agentcore::set_leaf_id(s, id("cm2")); }, {id("cm2")});
        pi_turn("label", "pi-label-on-a-custom-message", id("cm2"));

        ours("set_leaf_id before the first entry",
             [&](FileSession& s) { agentcore::set_leaf_id(s, std::nullopt); });
        pi_turn("none", "");

        ours("append at the root after pi's look", [&](FileSession& s) {
            agentcore::append_message(s,
                                      agentcore::user_text("A new start from C++", 1768500000011));
        });
        pi_turn("append", "pi on the new root");
        std::cout << "  alternating: " << turns_ << " turns compared\n";
    }

private:
    std::string& id(const std::string& name) { return ids_[name]; }

    template <class F>
    void ours(const std::string& what, F&& act, std::vector<std::string> on_branch = {}) {
        PlainJson written;
        {
            FileSession s(agentcore::JsonlSessionStorage::open(file_));
            act(s);
            written = context_as_pi(agentcore::build_context(s));
        }
        FileSession back(agentcore::JsonlSessionStorage::open_read_only(file_));
        expected_ = context_as_pi(agentcore::build_context(back));
        const auto leaf = agentcore::get_leaf_id(back);
        expected_leaf_ = leaf ? PlainJson(*leaf) : PlainJson(nullptr);
        if (expected_ != written)
            fail_context("agentcore reading back its own '" + what + "' builds another context",
                         expected_, written);
        on_branch_ = std::move(on_branch);
        last_ = what;
        ++turns_;
    }

    void pi_turn(const std::string& action, const std::string& text,
                 const std::string& target = "") {
        const auto step_file = folder_ / ("step-" + std::to_string(turns_) + ".json");
        const auto out_file = folder_ / ("step-" + std::to_string(turns_) + ".out.json");
        PlainJson step{
            {"file", file_},
            {"action", action},
            {"text", text},
            {"out", out_file.string()},
            {"expected",
             {{"context", expected_}, {"leafId", expected_leaf_}, {"onBranch", on_branch_}}}};
        if (!target.empty()) step["target"] = target;
        std::ofstream(step_file) << step.dump(1) << '\n';
        if (run({node_, (scripts_ / "pi_step.mjs").string(), pi_folder_.string(),
                 step_file.string()}) != 0) {
            fail("pi does not read the file as agentcore does after '" + last_ + "' (see above)");
            if (!std::filesystem::exists(out_file)) return;
        }
        const PlainJson theirs = read_json_file(out_file.string());
        FileSession back(agentcore::JsonlSessionStorage::open_read_only(file_));
        const PlainJson ours_context = context_as_pi(agentcore::build_context(back));
        const std::string what = "agentcore reading pi's '" + action + "' after '" + last_ + "'";
        if (ours_context != theirs.at("context"))
            fail_context(what + ": the contexts differ", ours_context, theirs.at("context"));
        // pi's leaf is the file's last entry; when that is a `leaf` entry, agentcore's leaf is its
        // target (README, "Where agentcore and pi differ").
        const PlainJson& pi_leaf = theirs.at("leafId");
        std::optional<std::string> resolved =
            pi_leaf.is_string() ? std::optional<std::string>(pi_leaf.get<std::string>())
                                : std::nullopt;
        if (resolved)
            if (const auto* move = agentcore::entry_as<agentcore::LeafEntry>(
                    agentcore::get_entry(back, *resolved)))
                resolved = move->target_id;
        if (agentcore::get_leaf_id(back) != resolved)
            fail(what + ": leaf " + agentcore::get_leaf_id(back).value_or("<none>") + ", pi " +
                 pi_leaf.dump() + " (resolved: " + resolved.value_or("<none>") + ")");
        for (const auto& target_id : on_branch_) {
            bool found = false;
            for (auto e = resolved ? agentcore::get_entry(back, *resolved) : nullptr;
                 e && !found;) {
                found = agentcore::id_of(*e) == target_id;
                const auto& parent = agentcore::parent_id_of(*e);
                e = parent ? agentcore::get_entry(back, *parent) : nullptr;
            }
            if (!found) fail(what + ": pi's new entries are not on the branch of " + target_id);
        }
        if (action == "label" &&
            agentcore::get_label(back, target) != std::optional<std::string>(text))
            fail(what + ": label of " + target + " is " +
                 agentcore::get_label(back, target).value_or("<none>"));
        if (action == "name" &&
            agentcore::get_session_name(back) != std::optional<std::string>(text))
            fail(what + ": name is " + agentcore::get_session_name(back).value_or("<none>"));
        for (const auto& new_id : theirs.at("newIds"))
            if (!agentcore::get_entry(back, new_id.get<std::string>()))
                fail(what + ": entry " + new_id.dump() + " missing");
        if (pi_leaf.is_string()) id("pi leaf") = pi_leaf.get<std::string>();
        on_branch_.clear();
        ++turns_;
    }

    std::string node_;
    std::filesystem::path scripts_;
    std::filesystem::path pi_folder_;
    std::filesystem::path folder_;
    std::string file_;
    std::map<std::string, std::string> ids_;
    PlainJson expected_;
    PlainJson expected_leaf_;
    std::vector<std::string> on_branch_;
    std::string last_ = "create";
    int turns_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
    namespace fs = std::filesystem;
    if (argc != 5) {
        std::cerr << "usage: agentcore_interop <node> <scripts folder> <fixtures folder> <scratch "
                     "folder>\n";
        return 2;
    }
    const std::string node = argv[1];
    // Absolute paths: the Node scripts run in other folders, and pi's open of a path that does
    // not exist starts an empty session instead of failing.
    const fs::path scripts = fs::absolute(argv[2]);
    const fs::path fixtures = fs::absolute(argv[3]);
    const fs::path scratch = fs::absolute(argv[4]);
    const fs::path pi_folder = scratch / "pi";
    const fs::path run_folder = scratch / "run";
    try {
        fs::create_directories(scratch);
        const int installed =
            run({node, (scripts / "install_pi.mjs").string(), pi_folder.string()});
        if (installed == skip_code) return skip_code;
        if (installed != 0) {
            std::cerr << "installing pi failed\n";
            return 1;
        }
        fs::remove_all(run_folder);
        if (run({node, (scripts / "write_sessions.mjs").string(), pi_folder.string(),
                 run_folder.string(), fixtures.string()}) != 0) {
            std::cerr << "pi could not write its sessions\n";
            return 1;
        }
        const PlainJson expected = read_json_file((run_folder / "expected.json").string());
        PlainJson appended = PlainJson::array();
        std::cout << "comparing agentcore with pi:\n";
        for (const auto& session : expected) {
            const std::string file = session.at("file").get<std::string>();
            if (session.at("version").get<int>() == agentcore::current_session_version) {
                const auto storage = agentcore::JsonlSessionStorage::open_read_only(file);
                compare(session, storage);
                if (session.at("scenario").get<std::string>().rfind("fixture", 0) != 0)
                    appended.push_back(append_with_agentcore(
                        file, (run_folder /
                               ("appended-" + session.at("scenario").get<std::string>() + ".jsonl"))
                                  .string()));
            } else {
                // Older formats: upgraded in memory (the file is not changed).
                const auto loaded =
                    agentcore::load_session_file(file, agentcore::Environment::deterministic(0, 7));
                compare(session, loaded.storage);
            }
        }
        // pi → native → pi with agentcore: pi must read the result as it read the original.
        PlainJson pairs = PlainJson::array();
        for (const auto& session : expected) {
            if (session.at("version").get<int>() != agentcore::current_session_version) continue;
            const std::string stem = "converted-" + std::to_string(pairs.size());
            const std::string native = (run_folder / (stem + ".native.jsonl")).string();
            const std::string back = (run_folder / (stem + ".jsonl")).string();
            agentcore::convert(session.at("file").get<std::string>(), agentcore::Dialect::native,
                               native);
            agentcore::convert(native, agentcore::Dialect::pi, back);
            pairs.push_back({{"original", session.at("file")}, {"converted", back}});
        }
        const fs::path pairs_file = run_folder / "converted.json";
        std::ofstream(pairs_file) << pairs.dump(1) << '\n';
        if (run({node, (scripts / "verify_converted.mjs").string(), pi_folder.string(),
                 (run_folder / "expected.json").string(), pairs_file.string()}) != 0)
            fail("pi does not read agentcore's converted files as the originals (see above)");

        appended.push_back(
            create_with_agentcore((run_folder / "created-by-agentcore.jsonl").string()));
        const fs::path spec = run_folder / "appended.json";
        std::ofstream(spec) << appended.dump(1) << '\n';
        if (run({node, (scripts / "verify_appended.mjs").string(), pi_folder.string(),
                 spec.string()}) != 0)
            fail("pi does not see what agentcore appended (see above)");

        std::cout << "agentcore and pi taking turns on one file:\n";
        Alternation(node, scripts, pi_folder, run_folder).play();
    } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << '\n';
        return 1;
    }
    if (failures != 0) {
        std::cerr << failures << " mismatches between agentcore and pi\n";
        return 1;
    }
    std::cout << "agentcore and pi agree\n";
    return 0;
}
