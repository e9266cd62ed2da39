#pragma once
// What every request builder takes: the model, the tools, the options; and the preparation of
// the messages that all three providers share (pi's transformMessages).

#include <agentcore/detail/codec_write.hpp>
#include <agentcore/json.hpp>
#include <agentcore/llm/convert_to_llm.hpp>
#include <agentcore/llm/sse.hpp>
#include <agentcore/messages.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace agentcore::llm {

/// The names of the three provider APIs, as assistant messages record them in `api`.
inline constexpr std::string_view openai_chat_api = "openai-completions";
inline constexpr std::string_view openai_responses_api = "openai-responses";
inline constexpr std::string_view anthropic_messages_api = "anthropic-messages";

/// The model a request is for.
struct ModelSpec {
    std::string provider;    ///< e.g. "openai", "anthropic", "llama.cpp"
    std::string id;          ///< the model id sent in the request
    std::string api;         ///< one of the API names above; the builders fill it when empty
    bool reasoning = false;  ///< the model thinks (takes a reasoning or thinking setting)
    bool images = true;      ///< the model takes image input
    std::int64_t max_output_tokens = 0;  ///< the model's output limit; 0 when unknown
};

/// A tool the model may call: `parameters` is its JSON schema, as the application writes it.
struct ToolDefinition {
    std::string name;
    std::string description;
    Json parameters = Json::object();
};

/// How long the provider keeps the prompt cache (Anthropic cache markers, OpenAI retention).
enum class CacheRetention { none, short_term, long_term };

/// The parts of a request beside the messages.
struct RequestOptions {
    std::string system_prompt;  ///< none when empty
    std::vector<ToolDefinition> tools;
    /// The session's thinking level: off, minimal, low, medium, high or xhigh.
    std::string thinking_level = "off";
    /// The output limit; when unset, min(model.max_output_tokens, 32000) when that is known.
    std::optional<std::int64_t> max_tokens;
    std::optional<double> temperature;
    bool stream = true;
    CacheRetention cache_retention = CacheRetention::short_term;
    /// Sent as OpenAI's prompt_cache_key when set (and caching is on).
    std::optional<std::string> session_id;
};

namespace detail {

// pi's clampThinkingLevel for a model without a level map: a model that does not reason has only
// "off"; one that does has every level but xhigh, which becomes high. Unknown levels are off.
inline std::string clamp_thinking_level(const ModelSpec& model, std::string_view level) {
    if (!model.reasoning) return "off";
    if (level == "xhigh") return "high";
    for (std::string_view known : {"minimal", "low", "medium", "high"})
        if (level == known) return std::string(level);
    return "off";
}

inline std::int64_t default_max_tokens(const ModelSpec& model, const RequestOptions& options) {
    if (options.max_tokens) return *options.max_tokens;
    return model.max_output_tokens > 0 ? std::min<std::int64_t>(model.max_output_tokens, 32000) : 0;
}

// The model with its api named (the builders fill an empty one).
inline ModelSpec with_api(const ModelSpec& model, std::string_view api) {
    ModelSpec m = model;
    if (m.api.empty()) m.api = std::string(api);
    return m;
}

// OpenAI's prompt cache fields (Chat Completions and Responses alike).
inline void add_prompt_cache_fields(Json& body, const RequestOptions& options) {
    if (options.session_id && options.cache_retention != CacheRetention::none)
        body["prompt_cache_key"] = *options.session_id;
    if (options.cache_retention == CacheRetention::long_term)
        body["prompt_cache_retention"] = "24h";
}

inline bool is_blank(std::string_view s) noexcept {
    return std::all_of(s.begin(), s.end(), [](char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
    });
}

inline const std::string* extra_string(const Json& extra, std::string_view key) noexcept {
    return string_at(&extra, key);
}
inline bool extra_flag(const Json& extra, std::string_view key) noexcept {
    if (!extra.is_object()) return false;
    auto it = extra.find(key);
    return it != extra.end() && it->is_boolean() && it->get<bool>();
}

// The keys under which content blocks keep provider data in `extra` (pi's names, so that a
// session written in either dialect replays in pi too).
inline constexpr std::string_view thinking_signature_key = "thinkingSignature";
inline constexpr std::string_view text_signature_key = "textSignature";
inline constexpr std::string_view thought_signature_key = "thoughtSignature";
inline constexpr std::string_view redacted_key = "redacted";

/// A message as the builders see it after preparation.
using Prepared = std::vector<AgentMessage>;

inline std::vector<ContentBlock> downgrade_images(const std::vector<ContentBlock>& content,
                                                  std::string_view placeholder) {
    std::vector<ContentBlock> out;
    bool previous_placeholder = false;
    for (const auto& block : content) {
        if (std::holds_alternative<ImageContent>(block)) {
            if (!previous_placeholder) out.emplace_back(TextContent{std::string(placeholder), {}});
            previous_placeholder = true;
            continue;
        }
        out.push_back(block);
        const auto* t = std::get_if<TextContent>(&block);
        previous_placeholder = t && t->text == placeholder;
    }
    return out;
}

/// Function turning a tool call id of another model into one the target API accepts.
using IdNormalizer = std::string (*)(const std::string& id, const ModelSpec& target,
                                     const AssistantMessage& source);

// pi's transformMessages: converts the roles (convert_to_llm), replaces images for a model that
// takes none, keeps thinking blocks and signatures only for replies of the same model (other
// models' thinking becomes text), normalises other models' tool call ids, skips failed and
// aborted replies (and their tool results), and answers each tool call that has no result with
// a synthetic error result "No result provided".
inline Prepared prepare_messages(const std::vector<MessageHandle>& input, const ModelSpec& model,
                                 IdNormalizer normalize) {
    const std::vector<MessageHandle> messages = convert_to_llm(input);
    std::unordered_map<std::string, std::string> id_map;
    Prepared first;
    first.reserve(messages.size());
    for (const auto& handle : messages) {
        if (const auto* u = std::get_if<UserMessage>(handle.get())) {
            UserMessage copy = *u;
            if (!model.images)
                if (auto* blocks = std::get_if<std::vector<ContentBlock>>(&copy.content))
                    *blocks =
                        downgrade_images(*blocks, "(image omitted: model does not support images)");
            first.emplace_back(std::move(copy));
        } else if (const auto* r = std::get_if<ToolResultMessage>(handle.get())) {
            ToolResultMessage copy = *r;
            auto it = id_map.find(copy.tool_call_id);
            if (it != id_map.end()) copy.tool_call_id = it->second;
            if (!model.images)
                copy.content = downgrade_images(
                    copy.content, "(tool image omitted: model does not support images)");
            first.emplace_back(std::move(copy));
        } else if (const auto* a = std::get_if<AssistantMessage>(handle.get())) {
            const bool same =
                a->provider == model.provider && a->api == model.api && a->model == model.id;
            AssistantMessage copy = *a;
            copy.content.clear();
            for (const auto& block : a->content) {
                if (const auto* th = std::get_if<ThinkingContent>(&block)) {
                    const std::string* sig = extra_string(th->extra, thinking_signature_key);
                    if (extra_flag(th->extra, redacted_key)) {
                        if (same) copy.content.push_back(block);
                        continue;
                    }
                    if (same && sig && !sig->empty()) {
                        copy.content.push_back(block);
                        continue;
                    }
                    if (is_blank(th->thinking)) continue;
                    if (same)
                        copy.content.push_back(block);
                    else
                        copy.content.emplace_back(TextContent{th->thinking, {}});
                } else if (const auto* t = std::get_if<TextContent>(&block)) {
                    if (same)
                        copy.content.push_back(block);
                    else
                        copy.content.emplace_back(TextContent{t->text, {}});
                } else if (const auto* call = std::get_if<ToolCallContent>(&block)) {
                    ToolCallContent c = *call;
                    if (!same && c.extra.is_object())
                        c.extra.erase(std::string(thought_signature_key));
                    if (!same && normalize) {
                        std::string id = normalize(c.id, model, *a);
                        if (id != c.id) {
                            id_map[c.id] = id;
                            c.id = std::move(id);
                        }
                    }
                    copy.content.emplace_back(std::move(c));
                } else {
                    copy.content.push_back(block);
                }
            }
            first.emplace_back(std::move(copy));
        }
    }

    Prepared out;
    out.reserve(first.size());
    std::vector<std::pair<std::string, std::string>> pending;  // id, tool name
    std::unordered_set<std::string> answered;
    std::unordered_set<std::string> skipped_calls;
    auto answer_pending = [&] {
        for (const auto& [id, name] : pending) {
            if (answered.count(id) != 0) continue;
            ToolResultMessage r;
            r.tool_call_id = id;
            r.tool_name = name;
            r.content.emplace_back(TextContent{"No result provided", {}});
            r.is_error = true;
            out.emplace_back(std::move(r));
        }
        pending.clear();
        answered.clear();
    };
    for (auto& message : first) {
        if (auto* a = std::get_if<AssistantMessage>(&message)) {
            answer_pending();
            if (a->stop_reason == "error" || a->stop_reason == "aborted") {
                for (const auto& block : a->content)
                    if (const auto* c = std::get_if<ToolCallContent>(&block))
                        skipped_calls.insert(c->id);
                continue;
            }
            for (const auto& block : a->content)
                if (const auto* c = std::get_if<ToolCallContent>(&block))
                    pending.emplace_back(c->id, c->name);
            out.push_back(std::move(message));
        } else if (auto* r = std::get_if<ToolResultMessage>(&message)) {
            if (skipped_calls.count(r->tool_call_id) != 0) continue;
            answered.insert(r->tool_call_id);
            out.push_back(std::move(message));
        } else {
            answer_pending();
            out.push_back(std::move(message));
        }
    }
    answer_pending();
    return out;
}

// Replaces every character outside [A-Za-z0-9_-] with '_' and keeps at most `limit` bytes.
inline std::string sanitize_id(std::string_view id, std::size_t limit) {
    std::string out;
    for (char c : id) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '_' || c == '-';
        out.push_back(ok ? c : '_');
    }
    if (out.size() > limit) out.resize(limit);
    return out;
}

inline std::string data_url(const ImageContent& image) {
    return "data:" + image.mime_type + ";base64," + image.data;
}

inline std::string joined_text(const std::vector<ContentBlock>& content,
                               std::string_view separator) {
    std::string out;
    bool first = true;
    for (const auto& block : content) {
        if (const auto* t = std::get_if<TextContent>(&block)) {
            if (!first) out += separator;
            out += t->text;
            first = false;
        }
    }
    return out;
}

inline bool has_image(const std::vector<ContentBlock>& content) {
    return std::any_of(content.begin(), content.end(), [](const ContentBlock& b) {
        return std::holds_alternative<ImageContent>(b);
    });
}

// JSON text as JavaScript's JSON.stringify writes it (tool arguments, kept reasoning items).
inline std::string js_stringify(const Json& arguments) {
    std::string out;
    agentcore::detail::append_json(out, arguments);
    return out;
}

}  // namespace detail
}  // namespace agentcore::llm
