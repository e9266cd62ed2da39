// 04 — An agent loop against a real OpenAI-compatible endpoint, with libcurl.
//
// The session builds the context, agentcore turns it into a Chat Completions request, libcurl
// sends it, and the streamed reply (server-sent events) is fed to an accumulator that prints the
// text as it arrives and gives the assistant message to append. Tool calls are run here and
// their results appended until the model answers without calling a tool.
//
// Environment:
//   AGENTCORE_LLM_BASE_URL  the endpoint, e.g. http://127.0.0.1:8080/v1 (llama.cpp's server) or
//                           https://api.openai.com/v1; without it the program says so and stops
//   AGENTCORE_LLM_MODEL     the model id (default gpt-4o-mini)
//   AGENTCORE_LLM_API_KEY   sent as a bearer token when set
//   AGENTCORE_LLM_STREAM    "0" for whole responses instead of streams
//   AGENTCORE_LLM_PROMPT    the user's request (default: asks about the files here)
#include <agentcore/llm.hpp>
#include <agentcore/session.hpp>

#include <curl/curl.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>

using namespace agentcore;

namespace {

std::string env(const char* name, std::string fallback = {}) {
    const char* value = std::getenv(name);
    return value && *value ? std::string(value) : fallback;
}

// What libcurl hands over: fed to the stream accumulator, or kept whole.
struct Receiver {
    llm::OpenAiChatStream* stream = nullptr;
    std::string body;
};

std::size_t on_bytes(char* data, std::size_t size, std::size_t count, void* user) {
    auto& r = *static_cast<Receiver*>(user);
    const std::string_view bytes(data, size * count);
    r.body.append(bytes);  // an error status comes with a whole JSON body, even to a stream request
    if (!r.stream) return bytes.size();
    for (const auto& event : r.stream->feed(bytes))
        if (event.type == llm::StreamEventType::text_delta) std::cout << event.delta << std::flush;
    return bytes.size();
}

// POSTs the body; returns the HTTP status (0 when the request could not be made).
long post(const std::string& url, const std::string& key, const std::string& body,
          Receiver& receiver, std::string& error) {
    CURL* curl = curl_easy_init();
    curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
    if (!key.empty())
        headers = curl_slist_append(headers, ("Authorization: Bearer " + key).c_str());
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_bytes);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &receiver);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 300L);
    long status = 0;
    if (const CURLcode rc = curl_easy_perform(curl); rc != CURLE_OK)
        error = curl_easy_strerror(rc);
    else
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    return status;
}

// The one tool: lists a folder of this machine.
ToolResultMessage run_tool(const ToolCallContent& call) {
    ToolResultMessage result;
    result.tool_call_id = call.id;
    result.tool_name = call.name;
    std::string text;
    const Json* path = llm::detail::member(call.arguments, "path");
    std::error_code ec;
    if (call.name != "list_files" || !path || !path->is_string()) {
        text = "unknown tool or missing path";
        result.is_error = true;
    } else {
        for (const auto& entry : std::filesystem::directory_iterator(path->get<std::string>(), ec))
            text += entry.path().filename().string() + "\n";
        if (ec) {
            text = "cannot list: " + ec.message();
            result.is_error = true;
        }
    }
    result.content.push_back(TextContent{text, {}});
    return result;
}

// libcurl's global state, set up once and cleaned up on every way out.
struct CurlGlobal {
    CurlGlobal() { curl_global_init(CURL_GLOBAL_DEFAULT); }
    ~CurlGlobal() { curl_global_cleanup(); }
    CurlGlobal(const CurlGlobal&) = delete;
    CurlGlobal& operator=(const CurlGlobal&) = delete;
};

}  // namespace

int main() {
    const std::string base = env("AGENTCORE_LLM_BASE_URL");
    if (base.empty()) {
        std::cout << "Set AGENTCORE_LLM_BASE_URL to an OpenAI-compatible endpoint (e.g. "
                     "http://127.0.0.1:8080/v1).\n";
        return 0;
    }
    const CurlGlobal curl;
    std::ofstream("notes.txt") << "buy milk\n";  // something for the tool to find

    const llm::ModelSpec model{
        "openai-compatible", env("AGENTCORE_LLM_MODEL", "gpt-4o-mini"), "", false, true, 0};
    llm::RequestOptions options;
    options.system_prompt = "You are a helpful agent. Use list_files to look at folders.";
    options.tools.push_back(
        {"list_files", "List the files of a folder",
         Json::parse(
             R"({"type":"object","properties":{"path":{"type":"string"}},"required":["path"]})")});
    options.stream = env("AGENTCORE_LLM_STREAM", "1") != "0";
    options.max_tokens = 1024;

    Session session{InMemorySessionStorage<>()};
    append_message(session, user_text(env("AGENTCORE_LLM_PROMPT",
                                          "Which files are in the current folder (\".\")?")));
    ContextBuildOptions ready;
    ready.provider_ready = true;  // no unanswered tool call at the end
    for (int turn = 0; turn < 8; ++turn) {
        const SessionContext context = build_context(session, ready);
        const std::string body = llm::to_openai_chat(context.messages, model, options).dump();

        llm::OpenAiChatStream stream(model);
        Receiver receiver;
        if (options.stream) receiver.stream = &stream;
        std::string error;
        const long status =
            post(base + "/chat/completions", env("AGENTCORE_LLM_API_KEY"), body, receiver, error);
        if (status == 0) {
            std::cerr << "request failed: " << error << "\n";
            return 1;
        }
        AssistantMessage reply = options.stream && status == 200
                                     ? stream.finish()
                                     : llm::parse_openai_chat_response(receiver.body, model, {},
                                                                       static_cast<int>(status));
        if (!options.stream)
            for (const auto& block : reply.content)
                if (const auto* text = std::get_if<TextContent>(&block)) std::cout << text->text;
        std::cout << "\n[" << reply.stop_reason << ", " << reply.usage.total_tokens << " tokens]\n";
        append_message(session, reply);
        if (reply.stop_reason == "error") {
            std::cerr << "the model's reply failed: " << reply.error_message.value_or("") << "\n";
            return 1;
        }
        if (reply.stop_reason != "tool_use") break;
        for (const auto& block : reply.content)
            if (const auto* call = std::get_if<ToolCallContent>(&block)) {
                std::cout << "-> " << call->name << " " << call->arguments.dump() << "\n";
                append_message(session, run_tool(*call));
            }
    }
    return 0;
}
