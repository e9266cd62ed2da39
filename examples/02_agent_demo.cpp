// The demo: a short agent conversation with a scripted model (no network) — tool calls, a label,
// a name, a branch with a summary, a compaction and a fork — written to a sessions folder on
// disk, then reopened from the files to print the tree and the context the next LLM call would
// receive.
#include <agentcore/codec.hpp>
#include <agentcore/session.hpp>

#include <iostream>
#include <map>
#include <string>
#include <vector>

using namespace agentcore;

namespace {

// A stand-in for an LLM: answers from a script, one reply per prompt.
struct ScriptedModel {
    int turn = 0;

    AssistantMessage reply(std::string text, std::vector<ToolCallContent> calls = {}) {
        AssistantMessage m;
        m.content.push_back(TextContent{std::move(text), {}});
        for (auto& c : calls) m.content.push_back(std::move(c));
        m.api = "scripted";
        m.provider = "demo";
        m.model = "scripted-1";
        m.stop_reason = m.content.size() > 1 ? "tool_use" : "stop";
        m.usage.input = 1200 + 300 * turn;
        m.usage.output = 80;
        m.usage.cache_read = 900 * turn;
        m.usage.total_tokens = m.usage.input + m.usage.output + m.usage.cache_read;
        m.usage.cost.total = 0.0042 + 0.001 * turn;
        ++turn;
        return m;
    }
};

ToolResultMessage tool_result(const std::string& call_id, const std::string& tool,
                              std::string out) {
    ToolResultMessage r;
    r.tool_call_id = call_id;
    r.tool_name = tool;
    r.content.push_back(TextContent{std::move(out), {}});
    return r;
}

std::string preview(const AgentMessage& m) {
    std::string text;
    std::visit(
        [&](const auto& msg) {
            using T = std::decay_t<decltype(msg)>;
            if constexpr (std::is_same_v<T, UserMessage> || std::is_same_v<T, CustomMessage>) {
                if (const auto* s = std::get_if<std::string>(&msg.content)) text = *s;
            } else if constexpr (std::is_same_v<T, AssistantMessage> ||
                                 std::is_same_v<T, ToolResultMessage>) {
                for (const auto& b : msg.content) {
                    if (const auto* t = std::get_if<TextContent>(&b)) text += t->text;
                    if (const auto* c = std::get_if<ToolCallContent>(&b))
                        text += " [" + c->name + "]";
                }
            } else if constexpr (std::is_same_v<T, BranchSummaryMessage> ||
                                 std::is_same_v<T, CompactionSummaryMessage>) {
                text = msg.summary;
            }
        },
        m);
    for (char& c : text)
        if (c == '\n' || c == '\r') c = ' ';
    return text.size() > 60 ? text.substr(0, 57) + "..." : text;
}

std::string describe_entry(const SessionTreeEntry& e) {
    if (const auto* m = message_of(e)) return std::string(role_of(*m)) + ": " + preview(*m);
    if (const auto* c = std::get_if<CompactionEntry>(&e)) return "compaction: " + c->summary;
    if (const auto* b = std::get_if<BranchSummaryEntry>(&e)) return "branch_summary: " + b->summary;
    if (const auto* l = std::get_if<LeafEntry>(&e))
        return "leaf -> " + l->target_id.value_or("(none)");
    if (const auto* l = std::get_if<LabelEntry>(&e))
        return "label " + l->target_id + " = " + l->label.value_or("");
    if (const auto* n = std::get_if<SessionInfoEntry>(&e)) return "name: " + n->name.value_or("");
    return std::string(type_of(e));
}

template <class S>
void print_tree(const Session<S>& session) {
    std::map<std::string, std::vector<EntryHandle>> children;
    std::vector<EntryHandle> roots;
    for (const auto& e : session.storage().get_entries({})) {
        const auto& parent = parent_id_of(*e);
        (parent ? children[*parent] : roots).push_back(e);
    }
    const auto leaf = get_leaf_id(session);
    auto print = [&](auto& self, const EntryHandle& e, const std::string& indent,
                     bool last) -> void {
        const auto& id = id_of(*e);
        std::cout << indent << (last ? "└─ " : "├─ ") << id << "  " << describe_entry(*e);
        if (auto label = get_label(session, id)) std::cout << "  [" << *label << "]";
        if (leaf && *leaf == id) std::cout << "  <- leaf";
        std::cout << "\n";
        const auto& kids = children[id];
        for (std::size_t i = 0; i < kids.size(); ++i)
            self(self, kids[i], indent + (last ? "   " : "│  "), i + 1 == kids.size());
    };
    for (std::size_t i = 0; i < roots.size(); ++i)
        print(print, roots[i], "", i + 1 == roots.size());
}

template <class S>
void print_context(const Session<S>& session) {
    auto context = build_context(session);
    std::cout << "thinking level: " << context.thinking_level;
    if (context.model)
        std::cout << ", model: " << context.model->provider << "/" << context.model->model_id;
    std::cout << "\n";
    for (const auto& m : context.messages)
        std::cout << "  " << role_of(*m) << ": " << preview(*m) << "\n";
}

}  // namespace

int main(int argc, char** argv) {
    // Sessions live in ./sessions (or the folder given), one folder per working directory.
    const std::string root = argc > 1 ? argv[1] : "sessions";
    JsonlSessionRepo repo(root);
    std::string session_id;
    std::string build;
    {
        auto session = create(repo, CreateOptions{std::nullopt, "/home/dev/project",
                                                  Json{{"app", "demo"}}, std::nullopt});
        session_id = session.storage().metadata().id;
        ScriptedModel model;

        append_model_change(session, "demo", "scripted-1");
        append_thinking_level_change(session, "medium");
        append_message(session, user_text("Which files are in the project?"));
        ToolCallContent ls{"call_1", "bash", Json{{"command", "ls"}}, {}};
        append_message(session, model.reply("Let me look.", {ls}));
        append_message(session, tool_result("call_1", "bash", "main.cpp\nCMakeLists.txt\n"));
        auto answer = append_message(
            session, model.reply("There are two files: main.cpp and CMakeLists.txt."));
        append_label(session, answer, std::string("file list"));
        append_session_name(session, "Project tour");

        // A second question, then the user changes their mind: back to the first answer.
        append_message(session, user_text("Rewrite main.cpp in Rust."));
        append_message(session, model.reply("Sure, here is a sketch..."));
        move_to(session, answer,
                BranchSummaryInput{
                    "The user asked for a Rust rewrite, then dropped it.", {}, {}, false});
        build = append_message(session, user_text("How do I build it?"));
        append_message(session, model.reply("Run cmake -S . -B build && cmake --build build."));

        // The history grew: keep the newest question and answer, summarise the rest.
        append_compaction(
            session,
            "The user toured the project (main.cpp, CMakeLists.txt) and chose to keep C++.", build,
            5400);
        append_message(session, user_text("Thanks!"));
        append_message(session, model.reply("You're welcome."));
    }  // the writer closes its file (and lets go of its lock) here

    // Fork the conversation as it was before the build question into a new session file.
    ForkOptions fork_options;
    fork_options.entry_id = build;
    fork(repo, session_id, fork_options);

    std::cout << "Sessions in " << root << ", newest first:\n";
    for (const auto& listed : list(repo).sessions)
        std::cout << "  " << listed.path << " (" << listed.file_size << " bytes)\n";

    // Reopen from disk, read-only: everything comes back from the file.
    auto session = open_read_only(repo, session_id);
    std::cout << "\nSession \"" << get_session_name(session).value_or("") << "\" reopened ("
              << session.storage().entry_count() << " entries)\n";
    print_tree(session);
    std::cout << "\nContext sent to the model next:\n";
    print_context(session);
    auto stats = get_session_stats(session);
    std::cout << "\nStats: " << stats.message_count << " messages, " << stats.total_tokens
              << " tokens (" << stats.cached_tokens << " cached), $" << stats.cost_total << "\n";

    for (const auto& listed : list(repo).sessions) {
        // The fork of this run: its parent_session is the source file, named after the session id.
        if (!listed.header.parent_session ||
            listed.header.parent_session->find(session_id) == std::string::npos)
            continue;
        auto forked = open_read_only(repo, listed.header.id);
        std::cout << "\nFork " << listed.header.id << " (parent " << *listed.header.parent_session
                  << "):\n";
        print_tree(forked);
        std::cout << "\nFork context:\n";
        print_context(forked);
        std::cout << "\nThe fork's last entry as a native JSONL line:\n"
                  << encode_entry(*get_entry(forked, *get_leaf_id(forked)), Dialect::native)
                  << "\n";
    }
    return 0;
}
