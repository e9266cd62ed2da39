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
//    context agentcore builds.
//
// Usage: agentcore_interop <node> <scripts folder> <fixtures folder> <scratch folder>

#include <agentcore/codec.hpp>
#include <agentcore/convert.hpp>
#include <agentcore/jsonl_storage.hpp>
#include <agentcore/pi_migrate.hpp>
#include <agentcore/memory_storage.hpp>
#include <agentcore/session_ops.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
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
        if (c == '\'') out += "'\\''";
        else out.push_back(c);
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
    for (const auto& m : context.messages) messages.push_back(plain(agentcore::message_to_json(*m, agentcore::Dialect::pi)));
    out["messages"] = std::move(messages);
    out["thinkingLevel"] = context.thinking_level;
    if (context.model)
        out["model"] = PlainJson{{"provider", context.model->provider}, {"modelId", context.model->model_id}};
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
            detail << "  " << key << ": agentcore " << ours.at(key) << ", pi " << theirs.at(key) << '\n';
    const auto& a = ours.at("messages");
    const auto& b = theirs.at("messages");
    if (a.size() != b.size()) detail << "  message count: agentcore " << a.size() << ", pi " << b.size() << '\n';
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
        if (a[i] != b[i])
            detail << "  message " << i << ":\n    agentcore " << brief(a[i]) << "\n    pi        " << brief(b[i]) << '\n';
    fail(detail.str());
}

/// agentcore's context at an entry: messages from the path, the state from the whole ancestry.
template <class Storage>
PlainJson context_at(const Storage& storage, const std::string& leaf) {
    agentcore::SessionContext context = agentcore::build_session_context(storage.get_path_to_root_or_compaction(leaf));
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
    auto id_at = [&](const PlainJson& index) { return agentcore::id_of(*entries.at(index.get<std::size_t>())); };
    const std::string expected_leaf =
        ids_stable ? expected.at("leafId").get<std::string>() : id_at(expected.at("leafIndex"));
    if (storage.get_leaf_id().value_or("") != expected_leaf)
        fail(scenario + ": leaf " + storage.get_leaf_id().value_or("<none>") + ", pi " + expected_leaf);
    const auto name = storage.get_session_name();
    const PlainJson name_json = name ? PlainJson(*name) : PlainJson(nullptr);
    if (name_json != expected.at("name")) fail(scenario + ": name " + name_json.dump() + ", pi " + expected.at("name").dump());

    const PlainJson& labels = expected.at("labels");
    for (const auto& e : entries) {
        const std::string& id = agentcore::id_of(*e);
        const auto label = storage.get_label(id);
        const PlainJson ours = label ? PlainJson(*label) : PlainJson(nullptr);
        const PlainJson theirs = ids_stable && labels.contains(id) ? labels.at(id) : PlainJson(nullptr);
        if (ours != theirs) fail(scenario + ": label of " + id + " is " + ours.dump() + ", pi " + theirs.dump());
    }
    if (!ids_stable && !labels.empty()) fail(scenario + ": labels in a v1 file cannot be compared");

    std::size_t compared = 0;
    for (const auto& c : expected.at("contexts")) {
        const std::string id = ids_stable ? c.at("id").get<std::string>() : id_at(c.at("index"));
        if (ids_stable && id != id_at(c.at("index"))) {
            fail(scenario + ": entry " + c.at("index").dump() + " has id " + id_at(c.at("index")) + ", pi " + id);
            continue;
        }
        const PlainJson ours = context_at(storage, id);
        const PlainJson& theirs = c.at("context");
        ++compared;
        if (ours == theirs) continue;
        fail_context(scenario + ": context at entry " + c.at("index").dump() + " (" + id + ") differs", ours, theirs);
    }
    std::cout << "  " << scenario << ": " << entries.size() << " entries, " << compared << " contexts compared\n";
}

agentcore::AgentMessage assistant_with_tool_call() {
    agentcore::AssistantMessage m;
    m.content.push_back(agentcore::ThinkingContent{"Let me check.", Json{{"thinkingSignature", "sig-cpp"}}});
    m.content.push_back(agentcore::TextContent{"Checking.", {}});
    m.content.push_back(agentcore::ToolCallContent{"call_cpp", "bash", Json{{"command", "ls"}}, {}});
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
    const std::string user = agentcore::append_message(session, agentcore::user_text("Hello from C++", 1768500000000));
    ids.push_back(user);
    const std::string call = agentcore::append_message(session, assistant_with_tool_call());
    ids.push_back(call);
    agentcore::ToolResultMessage result;
    result.tool_call_id = "call_cpp";
    result.tool_name = "bash";
    result.content.push_back(agentcore::TextContent{"a.txt", {}});
    result.timestamp = 1768500000001;
    ids.push_back(agentcore::append_message(session, result));
    ids.push_back(agentcore::append_custom_message_entry(session, "agentcore", std::string("Injected by C++"), true,
                                                         Json{{"k", 1}}));
    ids.push_back(agentcore::append_custom_entry(session, "agentcore-state", Json{{"n", 1}}));
    ids.push_back(agentcore::append_label(session, user, "from-cpp"));
    ids.push_back(agentcore::append_session_name(session, "Continued\nfrom C++"));
    ids.push_back(agentcore::append_compaction(session, "Compacted by C++", user, 4242));
    ids.push_back(agentcore::append_message(session, agentcore::user_text("After the C++ compaction", 1768500000002)));
    const auto summary = agentcore::move_to(session, call, agentcore::BranchSummaryInput{"Left a C++ branch", {}, {}, false});
    ids.push_back(*summary);
    ids.push_back(agentcore::append_message(session, agentcore::user_text("On the new C++ branch", 1768500000003)));

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

/// A new session that agentcore creates in the pi dialect.
PlainJson create_with_agentcore(const std::string& path) {
    std::filesystem::remove(path);
    agentcore::SessionHeader header;
    header.id = "created-by-agentcore";
    header.timestamp = "2026-01-20T10:00:00.000Z";
    header.cwd = "/work/project";
    agentcore::JsonlStorageOptions options;
    options.dialect = agentcore::Dialect::pi;
    agentcore::Session<agentcore::JsonlSessionStorage> session(
        agentcore::JsonlSessionStorage::create(path, std::move(header), std::move(options)));
    return append_everything(session);
}

}  // namespace

int main(int argc, char** argv) {
    namespace fs = std::filesystem;
    if (argc != 5) {
        std::cerr << "usage: agentcore_interop <node> <scripts folder> <fixtures folder> <scratch folder>\n";
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
        const int installed = run({node, (scripts / "install_pi.mjs").string(), pi_folder.string()});
        if (installed == skip_code) return skip_code;
        if (installed != 0) {
            std::cerr << "installing pi failed\n";
            return 1;
        }
        fs::remove_all(run_folder);
        if (run({node, (scripts / "write_sessions.mjs").string(), pi_folder.string(), run_folder.string(),
                 fixtures.string()}) != 0) {
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
                        file, (run_folder / ("appended-" + session.at("scenario").get<std::string>() + ".jsonl")).string()));
            } else {
                // Older formats: upgraded in memory (the file is not changed).
                const auto loaded = agentcore::load_session_file(file, agentcore::Environment::deterministic(0, 7));
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
            agentcore::convert(session.at("file").get<std::string>(), agentcore::Dialect::native, native);
            agentcore::convert(native, agentcore::Dialect::pi, back);
            pairs.push_back({{"original", session.at("file")}, {"converted", back}});
        }
        const fs::path pairs_file = run_folder / "converted.json";
        std::ofstream(pairs_file) << pairs.dump(1) << '\n';
        if (run({node, (scripts / "verify_converted.mjs").string(), pi_folder.string(),
                 (run_folder / "expected.json").string(), pairs_file.string()}) != 0)
            fail("pi does not read agentcore's converted files as the originals (see above)");

        appended.push_back(create_with_agentcore((run_folder / "created-by-agentcore.jsonl").string()));
        const fs::path spec = run_folder / "appended.json";
        std::ofstream(spec) << appended.dump(1) << '\n';
        if (run({node, (scripts / "verify_appended.mjs").string(), pi_folder.string(), spec.string()}) != 0)
            fail("pi does not see what agentcore appended (see above)");
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
