// The differential check of the provider converters against pi-ai (ctest labels `llm` and
// `interop`).
//
// 1. installs pi (tests/interop/install_pi.mjs, the same pinned install the session interop test
//    uses; pi-coding-agent 0.73.1 brings pi-ai 0.73.1; exit 77 = skip, see there);
// 2. writes the cases — every context of fixtures/scenarios.json with its recorded reply, and
//    replies that fail (refusal, content filter, failed response, streams cut short) — to a plan;
// 3. has pi convert them (pi_convert.mjs): convertToLlm, then pi-ai's stream function against a
//    loopback server that records the request body and replays the reply;
// 4. compares, field by field: convert_to_llm with convertToLlm; the request body of
//    to_openai_chat / to_openai_responses / to_anthropic_messages with pi-ai's; the message the
//    stream accumulator makes of the reply with pi-ai's final message (content, stop reason,
//    usage and cost, response id, whether it failed).
// Every difference fails the test except the documented ones (known_difference below, listed
// in the README's section on the LLM converters).
//
// Usage: agentcore_llm_differential <node> <interop scripts folder> <llm folder> <scratch folder>
//        agentcore_llm_differential --write-goldens <folder>   (the golden request bodies)

#include "llm/scenarios.hpp"

#include <agentcore/codec.hpp>
#include <agentcore/llm.hpp>

#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace {

using agentcore::Dialect;
using agentcore::Json;
using PlainJson = nlohmann::json;
using namespace agentcore::testing::llm_fixtures;

constexpr int skip_code = 77;
int failures = 0;
int known_differences = 0;
int compared_fields = 0;

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

PlainJson plain(const Json& j) { return PlainJson::parse(j.dump()); }

std::string brief(const PlainJson& j) {
    std::string s = j.dump();
    return s.size() > 300 ? s.substr(0, 300) + "..." : s;
}

/// A case: a context, the API it goes to, and the reply the server gives.
struct Case {
    Scenario scenario;
    std::string reply;
    bool failing = false;  ///< a reply that must end in stop_reason error on both sides
};

Json build(const Scenario& s) {
    namespace llm = agentcore::llm;
    if (s.api == llm::openai_chat_api) return llm::to_openai_chat(s.messages, s.model, s.options);
    if (s.api == llm::openai_responses_api)
        return llm::to_openai_responses(s.messages, s.model, s.options);
    return llm::to_anthropic_messages(s.messages, s.model, s.options);
}

std::unique_ptr<agentcore::llm::StreamAccumulator> stream_for(
    const std::string& api, const agentcore::llm::ModelSpec& model) {
    namespace llm = agentcore::llm;
    if (api == llm::openai_chat_api)
        return std::make_unique<llm::OpenAiChatStream>(model, prices());
    if (api == llm::openai_responses_api)
        return std::make_unique<llm::OpenAiResponsesStream>(model, prices());
    return std::make_unique<llm::AnthropicStream>(model, prices());
}

std::vector<Case> cases() {
    std::vector<Case> out;
    for (auto& s : scenarios()) {
        const std::string reply = fixture(s.reply);
        out.push_back(Case{s, reply, false});
    }
    // Replies that fail, after a one-message context.
    struct Failing {
        const char* name;
        const char* base;
        const char* reply;
        double cut;  // keep this fraction of the bytes (1 = all)
    };
    for (const Failing& f :
         {Failing{"anthropic_refusal", "anthropic_thinking_tools", "anthropic_stream_refusal.sse",
                  1},
          Failing{"anthropic_cut", "anthropic_thinking_tools", "anthropic_stream_tool.sse", 0.55},
          Failing{"chat_content_filter", "chat_tools_images", "chat_stream_filter.sse", 1},
          Failing{"chat_cut", "chat_tools_images", "chat_stream_tool.sse", 0.5},
          Failing{"responses_failed", "responses_reasoning_tools", "responses_stream_failed.sse",
                  1},
          Failing{"responses_cut", "responses_reasoning_tools", "responses_stream.sse", 0.6}}) {
        Case c{scenario(f.base), fixture(f.reply), true};
        c.scenario.name = f.name;
        c.scenario.messages.resize(2);
        const auto keep = static_cast<std::size_t>(static_cast<double>(c.reply.size()) * f.cut);
        c.reply = c.reply.substr(0, keep);
        out.push_back(std::move(c));
    }
    return out;
}

Json plan_of(const std::vector<Case>& all) {
    Json list = Json::array();
    for (const auto& c : all) {
        const Scenario& s = c.scenario;
        Json messages = Json::array();
        for (const auto& m : s.messages)
            messages.push_back(agentcore::message_to_json(*m, Dialect::pi));
        Json tools = Json::array();
        for (const auto& t : s.options.tools)
            tools.push_back(Json{
                {"name", t.name}, {"description", t.description}, {"parameters", t.parameters}});
        Json options{
            {"thinkingLevel", s.options.thinking_level},
            {"cacheRetention",
             s.options.cache_retention == agentcore::llm::CacheRetention::none        ? "none"
             : s.options.cache_retention == agentcore::llm::CacheRetention::long_term ? "long"
                                                                                      : "short"}};
        if (s.options.max_tokens) options["maxTokens"] = *s.options.max_tokens;
        const auto p = prices();
        list.push_back(Json{{"name", s.name},
                            {"api", s.api},
                            {"model", Json{{"provider", s.model.provider},
                                           {"id", s.model.id},
                                           {"reasoning", s.model.reasoning},
                                           {"images", s.model.images},
                                           {"maxTokens", s.model.max_output_tokens}}},
                            {"prices", Json{{"input", p.input},
                                            {"output", p.output},
                                            {"cacheRead", p.cache_read},
                                            {"cacheWrite", p.cache_write}}},
                            {"context", Json{{"systemPrompt", s.options.system_prompt},
                                             {"messages", std::move(messages)},
                                             {"tools", tools.empty() ? Json() : tools}}},
                            {"options", std::move(options)},
                            {"reply", c.reply}});
    }
    return Json{{"cases", std::move(list)}};
}

/// A difference the library makes on purpose (README, "Differences from pi-ai").
/// pi-ai's OpenAI SDK ends a cut Chat Completions or Responses stream quietly, as a complete
/// reply (stop_reason stop); agentcore reports it as an error, as pi-ai does for Anthropic.
bool known_difference(const std::string& where, const std::string& path) {
    struct Known {
        const char* where;
        const char* path;
    };
    for (const Known& k :
         {Known{"chat_cut reply", ".stopReason"}, Known{"chat_cut reply", ".errorMessage"},
          Known{"responses_cut reply", ".stopReason"},
          Known{"responses_cut reply", ".errorMessage"}})
        if (where == k.where && path == k.path) return true;
    return false;
}

void mismatch(const std::string& where, const std::string& path, const std::string& what) {
    if (known_difference(where, path)) {
        ++known_differences;
        std::cout << "known difference: " << where << " " << path << ": " << what << '\n';
        return;
    }
    ++failures;
    std::cerr << "MISMATCH: " << where << " " << path << ": " << what << '\n';
}

bool numbers_close(const PlainJson& a, const PlainJson& b) {
    if (!a.is_number() || !b.is_number()) return false;
    const double x = a.get<double>(), y = b.get<double>();
    return std::fabs(x - y) <= 1e-12 * std::max(1.0, std::fabs(y));
}

/// Field by field: every key either side defines, recursively.
void diff(const std::string& where, const std::string& path, const PlainJson& ours,
          const PlainJson& theirs) {
    ++compared_fields;
    if (ours.is_object() && theirs.is_object()) {
        for (const auto& [k, v] : theirs.items()) {
            if (!ours.contains(k))
                mismatch(where, path + "." + k, "only pi-ai has it: " + brief(v));
            else
                diff(where, path + "." + k, ours[k], v);
        }
        for (const auto& [k, v] : ours.items())
            if (!theirs.contains(k))
                mismatch(where, path + "." + k, "only agentcore has it: " + brief(v));
        return;
    }
    if (ours.is_array() && theirs.is_array()) {
        if (ours.size() != theirs.size())
            mismatch(where, path,
                     "length " + std::to_string(ours.size()) + " vs pi-ai's " +
                         std::to_string(theirs.size()) + ": " + brief(ours) + " vs " +
                         brief(theirs));
        for (std::size_t i = 0; i < std::min(ours.size(), theirs.size()); ++i)
            diff(where, path + "[" + std::to_string(i) + "]", ours[i], theirs[i]);
        return;
    }
    if (ours == theirs || numbers_close(ours, theirs)) return;
    mismatch(where, path, brief(ours) + " vs pi-ai's " + brief(theirs));
}

/// The parts of an assistant message both sides define, in pi's dialect.
PlainJson comparable(PlainJson m) {
    for (const char* k : {"timestamp", "api", "diagnostics", "responseModel"}) m.erase(k);
    return m;
}

void compare_case(const Case& c, const PlainJson& pi) {
    const Scenario& s = c.scenario;
    // convert_to_llm against convertToLlm.
    PlainJson converted = PlainJson::array();
    for (const auto& m : agentcore::llm::convert_to_llm(s.messages))
        converted.push_back(plain(agentcore::message_to_json(*m, Dialect::pi)));
    diff(s.name + " convert_to_llm", "", converted, pi.at("converted"));

    // The request body.
    if (pi.at("request").is_null())
        mismatch(s.name, "request", "pi-ai sent no request");
    else
        diff(s.name + " request", "", plain(build(s)), pi.at("request"));

    // The reply.
    auto acc = stream_for(s.api, s.model);
    const agentcore::AssistantMessage ours = stream_all(*acc, c.reply, 13);
    PlainJson mine = comparable(plain(agentcore::message_to_json(ours, Dialect::pi)));
    PlainJson theirs = comparable(pi.at("message"));
    if (c.failing) {
        if (mine.value("stopReason", "") != "error")
            mismatch(s.name + " reply", ".stopReason of agentcore",
                     "agentcore's is " + mine.value("stopReason", ""));
        if (theirs.value("stopReason", "") != "error")
            mismatch(
                s.name + " reply", ".stopReason",
                mine.value("stopReason", "") + " vs pi-ai's " + theirs.value("stopReason", ""));
        if (!mine.contains("errorMessage"))
            mismatch(s.name + " reply", ".errorMessage of agentcore", "none");
        if (!theirs.contains("errorMessage"))
            mismatch(s.name + " reply", ".errorMessage", "pi-ai has none");
        std::cout << s.name << ": agentcore says \"" << mine.value("errorMessage", "")
                  << "\", pi-ai says \"" << theirs.value("errorMessage", "") << "\"\n";
        // Text received before the failure is kept by both.
        std::string text_ours, text_theirs;
        for (const auto& b : mine["content"])
            if (b["type"] == "text") text_ours += b.value("text", "");
        for (const auto& b : theirs["content"])
            if (b["type"] == "text") text_theirs += b.value("text", "");
        if (text_ours != text_theirs)
            mismatch(s.name + " reply", ".content",
                     "text '" + text_ours + "' vs pi-ai's '" + text_theirs + "'");
        return;
    }
    diff(s.name + " reply", "", mine, theirs);
}

}  // namespace

int main(int argc, char** argv) {
    try {
        if (argc == 3 && std::string(argv[1]) == "--write-goldens") {
            for (const auto& s : scenarios()) {
                std::ofstream out(std::filesystem::path(argv[2]) / (s.name + ".json"));
                out << build(s).dump(2) << '\n';
            }
            return 0;
        }
        if (argc != 5) {
            std::cerr << "usage: agentcore_llm_differential <node> <interop folder> <llm folder> "
                         "<scratch folder>\n";
            return 2;
        }
        const std::string node = argv[1];
        const std::filesystem::path interop = argv[2], scripts = argv[3], scratch = argv[4];
        std::filesystem::create_directories(scratch);
        const std::filesystem::path pi = scratch / "pi";
        const int installed = run({node, (interop / "install_pi.mjs").string(), pi.string()});
        if (installed == skip_code) return skip_code;
        if (installed != 0) {
            std::cerr << "installing pi failed\n";
            return 1;
        }
        const std::vector<Case> all = cases();
        const auto plan = scratch / "llm-plan.json", results = scratch / "llm-results.json";
        std::ofstream(plan) << plan_of(all).dump() << '\n';
        if (run({node, (scripts / "pi_convert.mjs").string(), pi.string(), plan.string(),
                 results.string()}) != 0) {
            std::cerr << "pi-ai's conversion failed\n";
            return 1;
        }
        const PlainJson pi_results = PlainJson::parse(read_file(results));
        for (const auto& c : all) {
            if (!pi_results.contains(c.scenario.name)) {
                mismatch(c.scenario.name, "", "pi-ai has no result");
                continue;
            }
            compare_case(c, pi_results.at(c.scenario.name));
        }
        std::cout << all.size() << " cases, " << compared_fields << " fields compared, "
                  << known_differences << " known differences, " << failures << " mismatches\n";
        return failures == 0 ? 0 : 1;
    } catch (const std::exception& e) {
        std::cerr << "the differential failed: " << e.what() << '\n';
        return 1;
    }
}
