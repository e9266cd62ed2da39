#pragma once
// The shared contexts of the LLM tests (fixtures/scenarios.json): read into agentcore's types,
// and the helpers that feed recorded streams. Used by the golden tests and by the differential
// check against pi-ai.

#include <agentcore/codec.hpp>
#include <agentcore/llm/reply.hpp>
#include <agentcore/llm/request.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace agentcore::testing::llm_fixtures {

namespace llm = agentcore::llm;

inline std::filesystem::path folder() {
    return std::filesystem::path(__FILE__).parent_path() / "fixtures";
}

inline std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path.string());
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

inline std::string fixture(const std::string& name) { return read_file(folder() / name); }

struct Scenario {
    std::string name;
    std::string api;
    llm::ModelSpec model;
    llm::RequestOptions options;
    std::vector<MessageHandle> messages;
    std::string reply;
};

/// The price table every scenario uses (dollars per million tokens).
inline llm::Prices prices() { return llm::Prices{3, 15, 0.3, 3.75}; }

inline std::vector<llm::ToolDefinition> tools_of(const Json& root) {
    std::vector<llm::ToolDefinition> tools;
    for (const auto& t : root.at("tools"))
        tools.push_back(llm::ToolDefinition{t.at("name").get<std::string>(),
                                            t.at("description").get<std::string>(),
                                            t.at("parameters")});
    return tools;
}

inline std::vector<Scenario> scenarios() {
    const Json root = Json::parse(fixture("scenarios.json"));
    std::vector<Scenario> out;
    for (const auto& s : root.at("scenarios")) {
        Scenario sc;
        sc.name = s.at("name").get<std::string>();
        sc.api = s.at("api").get<std::string>();
        const Json& m = s.at("model");
        sc.model.provider = m.at("provider").get<std::string>();
        sc.model.id = m.at("id").get<std::string>();
        sc.model.api = sc.api;
        sc.model.reasoning = m.at("reasoning").get<bool>();
        sc.model.images = m.at("images").get<bool>();
        sc.model.max_output_tokens = m.at("maxTokens").get<std::int64_t>();
        const Json& o = s.at("options");
        sc.options.system_prompt = o.value("systemPrompt", "");
        sc.options.thinking_level = o.value("thinkingLevel", "off");
        if (o.contains("maxTokens")) sc.options.max_tokens = o.at("maxTokens").get<std::int64_t>();
        const std::string cache = o.value("cacheRetention", "short");
        sc.options.cache_retention = cache == "none"   ? llm::CacheRetention::none
                                     : cache == "long" ? llm::CacheRetention::long_term
                                                       : llm::CacheRetention::short_term;
        if (o.value("tools", false)) sc.options.tools = tools_of(root);
        for (const auto& message : s.at("messages"))
            sc.messages.push_back(
                std::make_shared<const AgentMessage>(message_from_json(message, Dialect::pi)));
        sc.reply = s.at("reply").get<std::string>();
        out.push_back(std::move(sc));
    }
    return out;
}

inline Scenario scenario(const std::string& name) {
    for (auto& s : scenarios())
        if (s.name == name) return s;
    throw std::runtime_error("no scenario " + name);
}

/// JSON without key order, for comparisons.
inline nlohmann::json plain(const Json& j) { return nlohmann::json::parse(j.dump()); }

/// True when the message reports a diagnostic of that type (extra.diagnostics).
inline bool has_diagnostic(const AssistantMessage& m, const std::string& type) {
    if (!m.extra.is_object() || !m.extra.contains("diagnostics")) return false;
    for (const auto& d : m.extra["diagnostics"])
        if (d["type"] == type) return true;
    return false;
}

/// One SSE event of the Responses and Anthropic shape: `event: <type>` and data {"type": <type>,
/// rest}.
inline std::string sse_event(const std::string& type, const std::string& rest) {
    return "event: " + type + "\ndata: {\"type\":\"" + type + "\"" +
           (rest.empty() ? "" : "," + rest) + "}\n\n";
}

/// Feeds a whole byte string in chunks of `chunk` bytes; returns the final message.
inline AssistantMessage stream_all(llm::StreamAccumulator& acc, const std::string& bytes,
                                   std::size_t chunk,
                                   std::vector<llm::StreamEvent>* events = nullptr) {
    for (std::size_t i = 0; i < bytes.size(); i += chunk) {
        auto e = acc.feed(std::string_view(bytes).substr(i, chunk));
        if (events) events->insert(events->end(), e.begin(), e.end());
    }
    AssistantMessage m = acc.finish();
    if (events) {
        auto e = acc.take_events();
        events->insert(events->end(), e.begin(), e.end());
    }
    return m;
}

}  // namespace agentcore::testing::llm_fixtures
