// `agentcore context FILE` (or REPOSITORY SESSION): the context build_context returns, as the
// application would send it.

#include "cli_common.hpp"
#include "commands.hpp"
#include "preview.hpp"
#include "session_file.hpp"

#include <agentcore/codec.hpp>

#include <iostream>

namespace agentcore::tool {

namespace {

Json context_json(const SessionContext& context, Dialect dialect) {
    const bool native = dialect == Dialect::native;
    Json messages = Json::array();
    for (const auto& m : context.messages) messages.push_back(message_to_json(*m, dialect));
    Json model;
    if (context.model)
        model = {{"provider", context.model->provider},
                 {native ? "model_id" : "modelId", context.model->model_id}};
    Json out = {{"messages", std::move(messages)},
                {native ? "thinking_level" : "thinkingLevel", context.thinking_level},
                {"model", std::move(model)}};
    out[native ? "active_tool_names" : "activeToolNames"] =
        context.active_tool_names ? Json(*context.active_tool_names) : Json();
    return out;
}

// Each line indented by four spaces; trailing blank lines dropped, blank lines kept empty.
void print_indented(std::string_view text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\t'))
        text.remove_suffix(1);
    for (;;) {
        const std::size_t end = text.find('\n');
        const std::string_view line = text.substr(0, end);
        if (line.find_first_not_of(" \t") != std::string_view::npos) std::cout << "    " << line;
        std::cout << "\n";
        if (end == std::string_view::npos) break;
        text.remove_prefix(end + 1);
    }
}

}  // namespace

int run_context(const ContextOptions& options) {
    return with_session(
        resolve_source(options.source), false, [&](const auto& session, const FileInfo& file) {
            SessionContext context;
            try {
                context =
                    options.leaf
                        ? build_context_at(session, std::optional<std::string_view>(*options.leaf))
                        : build_context(session);
            } catch (const SessionError& e) {
                throw ToolError(file.path + ": " + e.what());
            }
            if (options.json) {
                std::cout << pretty_json(context_json(context, file.dialect));
                return exit_ok;
            }
            std::cout << "thinking level: " << context.thinking_level << "\n";
            std::cout << "model: "
                      << (context.model
                              ? escaped(context.model->provider + "/" + context.model->model_id)
                              : "(none)")
                      << "\n";
            if (context.active_tool_names) {
                std::string tools;
                for (const auto& name : *context.active_tool_names)
                    tools += (tools.empty() ? "" : ", ") + name;
                std::cout << "active tools: " << escaped(tools) << "\n";
            }
            std::cout << "messages: " << context.messages.size() << "\n";
            for (std::size_t i = 0; i < context.messages.size(); ++i) {
                const AgentMessage& m = *context.messages[i];
                std::cout << "\n[" << i + 1 << "] " << escaped(role_of(m), 64) << " @ "
                          << format_timestamp(timestamp_of(m)) << "\n";
                print_indented(printable(message_text(m)));
            }
            return exit_ok;
        });
}

}  // namespace agentcore::tool
