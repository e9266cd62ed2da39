// Choosing the storage at run time: the same agent conversation on whichever storage the first
// argument names — "sqlite:sessions.db" (the default), "memory:", or a folder of JSONL files —
// through open_repository and the type-erased repository it returns. Every free function works
// on its sessions unchanged.
//
//     example_05_storage_choice                      # sqlite:sessions.db
//     example_05_storage_choice memory:
//     example_05_storage_choice ./sessions           # JSONL files
#include <agentcore/any_repo.hpp>
#include <agentcore/session.hpp>
#include <agentcore/sqlite/sqlite_repo.hpp>  // registers "sqlite:" (target agentcore::sqlite)

#include <iostream>
#include <string>

using namespace agentcore;

namespace {

AssistantMessage reply(std::string text, int turn) {
    AssistantMessage m;
    m.content.push_back(TextContent{std::move(text), {}});
    m.api = "scripted";
    m.provider = "demo";
    m.model = "scripted-1";
    m.usage.input = 1000 + 100 * turn;
    m.usage.output = 50;
    m.usage.total_tokens = m.usage.input + m.usage.output;
    m.usage.cost.total = 0.002;
    return m;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string url = argc > 1 ? argv[1] : "sqlite:sessions.db";
    try {
        AnyRepository repo = open_repository(url);
        std::string id;
        {
            auto session = create(repo, CreateOptions{std::nullopt, "/home/dev/project",
                                                      Json{{"app", "demo"}}, std::nullopt});
            id = session.storage().metadata().id;
            const std::string question =
                append_message(session, UserMessage{"What does main.cpp do?", 1, {}});
            append_message(session, reply("It starts the server on port 8080.", 0));
            append_label(session, question, std::string("first question"));
            append_message(session, UserMessage{"And how do I stop it?", 2, {}});
            append_message(session, reply("Send it SIGTERM; it drains connections first.", 1));
            append_session_name(session, "Server questions");
        }
        // Opened again by id, as a later run of the agent would (for memory:, the same storage).
        auto again = open_read_only(repo, id);
        const SessionContext context = build_context(again);
        const SessionStats stats = again.storage().get_session_stats();
        std::cout << "storage: " << url << "\n"
                  << "session " << id << " \"" << again.storage().get_session_name().value_or("")
                  << "\": " << again.storage().entry_count() << " entries, "
                  << context.messages.size() << " messages in the context, " << stats.total_tokens
                  << " tokens, $" << stats.cost_total << "\n";
        for (const auto& listed :
             list(repo, ListOptions{std::string("/home/dev/project")}).sessions)
            std::cout << "  listed: " << listed.header.id << " created " << listed.header.timestamp
                      << "\n";
        return context.messages.size() == 4 ? 0 : 1;
    } catch (const SessionError& e) {
        std::cerr << e.what() << "\n";
        return 2;
    }
}
