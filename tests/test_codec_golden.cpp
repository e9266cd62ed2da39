// The JSON codec against literal lines (SPEC §2, §3). The pi lines were written by pi-coding-agent
// 0.73.1's own SessionManager (except the entry types pi does not write: active_tools_change,
// leaf, compactions with a retained tail or usage, which follow the same spelling); each line
// must decode and encode back byte for byte, and decode to the same model in both dialects.
#include "support/catch.hpp"

#include <agentcore/codec.hpp>

#include <string>
#include <string_view>
#include <variant>

using namespace agentcore;

namespace {

SessionTreeEntry golden(std::string_view line, Dialect d) {
    SessionTreeEntry entry = decode_entry(line, d);
    CHECK(encode_entry(entry, d) == line);
    return entry;
}

template <class T>
const T& as_entry(const SessionTreeEntry& entry) {
    REQUIRE(std::holds_alternative<T>(entry));
    return std::get<T>(entry);
}

template <class T>
const T& message_as(const SessionTreeEntry& entry) {
    const auto& m = as_entry<MessageEntry>(entry).message;
    REQUIRE(std::holds_alternative<T>(m));
    return std::get<T>(m);
}

struct LinePair {
    std::string_view pi;
    std::string_view native;
};

// One line per entry type and message role, in both spellings.
constexpr LinePair pairs[] = {
    // user, string content, root
    {R"({"type":"message","id":"9f60ce78","parentId":null,"timestamp":"2026-12-02T09:28:36.998Z","message":{"role":"user","content":"Fix the bug in main.c","timestamp":1767225600000}})",
     R"({"type":"message","id":"9f60ce78","parent_id":null,"timestamp":"2026-12-02T09:28:36.998Z","message":{"role":"user","content":"Fix the bug in main.c","timestamp":1767225600000}})"},
    // user, text and image blocks
    {R"({"type":"message","id":"b37bc231","parentId":"9f60ce78","timestamp":"2026-12-02T09:28:36.998Z","message":{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"timestamp":1767225600001}})",
     R"({"type":"message","id":"b37bc231","parent_id":"9f60ce78","timestamp":"2026-12-02T09:28:36.998Z","message":{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","data":"iVBORw0KGgo=","mime_type":"image/png"}],"timestamp":1767225600001}})"},
    // assistant with thinking (signature), text, tool call, provider extras, costs
    {R"({"type":"message","id":"e45b3409","parentId":"b37bc231","timestamp":"2026-12-02T09:28:36.998Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"Let me look.","thinkingSignature":"EqQBCkgIAhABGAIiQ"},{"type":"text","text":"Reading it."},{"type":"toolCall","id":"toolu_01A","name":"read","arguments":{"path":"main.c","offset":1}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":1200,"output":240,"cacheRead":5000,"cacheWrite":0,"totalTokens":6440,"cost":{"input":0.0036,"output":0.0036,"cacheRead":0.0015,"cacheWrite":0,"total":0.0087}},"stopReason":"toolUse","timestamp":1767225601234,"responseId":"msg_01XyZ"}})", R"({"type":"message","id":"e45b3409","parent_id":"b37bc231","timestamp":"2026-12-02T09:28:36.998Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"Let me look.","thinkingSignature":"EqQBCkgIAhABGAIiQ"},{"type":"text","text":"Reading it."},{"type":"tool_call","id":"toolu_01A","name":"read","arguments":{"path":"main.c","offset":1}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":1200,"output":240,"cache_read":5000,"cache_write":0,"total_tokens":6440,"cost":{"input":0.0036,"output":0.0036,"cache_read":0.0015,"cache_write":0,"total":0.0087}},"stop_reason":"tool_use","timestamp":1767225601234,"responseId":"msg_01XyZ"}})"},
    // tool result with details
    {R"({"type":"message","id":"cc803357","parentId":"e45b3409","timestamp":"2026-12-02T09:28:36.999Z","message":{"role":"toolResult","toolCallId":"toolu_01A","toolName":"read","content":[{"type":"text","text":"int main() {}"}],"details":{"lines":1},"isError":false,"timestamp":1767225602000}})",
     R"({"type":"message","id":"cc803357","parent_id":"e45b3409","timestamp":"2026-12-02T09:28:36.999Z","message":{"role":"tool_result","tool_call_id":"toolu_01A","tool_name":"read","content":[{"type":"text","text":"int main() {}"}],"details":{"lines":1},"is_error":false,"timestamp":1767225602000}})"},
    // aborted assistant: pi's providers assign errorMessage last, after responseId
    {R"({"type":"message","id":"5d33f912","parentId":"cc803357","timestamp":"2026-12-02T09:28:36.999Z","message":{"role":"assistant","content":[],"api":"openai-responses","provider":"openai","model":"gpt-5","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"aborted","timestamp":1767225603000,"responseId":"resp_9","errorMessage":"Request was aborted"}})", R"({"type":"message","id":"5d33f912","parent_id":"cc803357","timestamp":"2026-12-02T09:28:36.999Z","message":{"role":"assistant","content":[],"api":"openai-responses","provider":"openai","model":"gpt-5","usage":{"input":0,"output":0,"cache_read":0,"cache_write":0,"total_tokens":0,"cost":{"input":0,"output":0,"cache_read":0,"cache_write":0,"total":0}},"stop_reason":"aborted","error_message":"Request was aborted","timestamp":1767225603000,"responseId":"resp_9"}})"},
    // bash execution: exit code, excluded from context
    {R"({"type":"message","id":"7df15aad","parentId":"5d33f912","timestamp":"2026-12-02T09:28:36.999Z","message":{"role":"bashExecution","command":"ls","output":"a\nb","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1767225604000,"excludeFromContext":true}})",
     R"({"type":"message","id":"7df15aad","parent_id":"5d33f912","timestamp":"2026-12-02T09:28:36.999Z","message":{"role":"bash_execution","command":"ls","output":"a\nb","exit_code":0,"cancelled":false,"truncated":false,"exclude_from_context":true,"timestamp":1767225604000}})"},
    // bash execution: cancelled, no exit code, full output path
    {R"({"type":"message","id":"9d59caa8","parentId":"7df15aad","timestamp":"2026-12-02T09:28:36.999Z","message":{"role":"bashExecution","command":"sleep 9","output":"","cancelled":true,"truncated":true,"fullOutputPath":"/tmp/out.txt","timestamp":1767225604500}})",
     R"({"type":"message","id":"9d59caa8","parent_id":"7df15aad","timestamp":"2026-12-02T09:28:36.999Z","message":{"role":"bash_execution","command":"sleep 9","output":"","cancelled":true,"truncated":true,"full_output_path":"/tmp/out.txt","timestamp":1767225604500}})"},
    // custom message
    {R"({"type":"message","id":"99451cd2","parentId":"9d59caa8","timestamp":"2026-12-02T09:28:36.999Z","message":{"role":"custom","customType":"note","content":"hi","display":true,"timestamp":1767225605000}})", R"({"type":"message","id":"99451cd2","parent_id":"9d59caa8","timestamp":"2026-12-02T09:28:36.999Z","message":{"role":"custom","custom_type":"note","content":"hi","display":true,"timestamp":1767225605000}})"},
    // branch summary message
    {R"({"type":"message","id":"8b7e7040","parentId":"99451cd2","timestamp":"2026-12-02T09:28:36.999Z","message":{"role":"branchSummary","summary":"tried X","fromId":"root","timestamp":1767225606000}})",
     R"({"type":"message","id":"8b7e7040","parent_id":"99451cd2","timestamp":"2026-12-02T09:28:36.999Z","message":{"role":"branch_summary","summary":"tried X","from_id":"root","timestamp":1767225606000}})"},
    // compaction summary message
    {R"({"type":"message","id":"33eed66a","parentId":"8b7e7040","timestamp":"2026-12-02T09:28:36.999Z","message":{"role":"compactionSummary","summary":"did Y","tokensBefore":50000,"timestamp":1767225607000}})",
     R"({"type":"message","id":"33eed66a","parent_id":"8b7e7040","timestamp":"2026-12-02T09:28:36.999Z","message":{"role":"compaction_summary","summary":"did Y","tokens_before":50000,"timestamp":1767225607000}})"},
    {R"({"type":"thinking_level_change","id":"e0e3294b","parentId":"33eed66a","timestamp":"2026-12-02T09:28:36.999Z","thinkingLevel":"high"})",
     R"({"type":"thinking_level_change","id":"e0e3294b","parent_id":"33eed66a","timestamp":"2026-12-02T09:28:36.999Z","thinking_level":"high"})"},
    {R"({"type":"model_change","id":"9c0c95b2","parentId":"e0e3294b","timestamp":"2026-12-02T09:28:36.999Z","provider":"anthropic","modelId":"claude-opus-4-1"})",
     R"({"type":"model_change","id":"9c0c95b2","parent_id":"e0e3294b","timestamp":"2026-12-02T09:28:36.999Z","provider":"anthropic","model_id":"claude-opus-4-1"})"},
    {R"({"type":"active_tools_change","id":"a7c1d2e3","parentId":"9c0c95b2","timestamp":"2026-12-02T09:28:37.000Z","activeToolNames":["read","bash"]})",
     R"({"type":"active_tools_change","id":"a7c1d2e3","parent_id":"9c0c95b2","timestamp":"2026-12-02T09:28:37.000Z","active_tool_names":["read","bash"]})"},
    {R"({"type":"compaction","id":"2ce59518","parentId":"a7c1d2e3","timestamp":"2026-12-02T09:28:36.999Z","summary":"## Goal\nfix","firstKeptEntryId":"9f60ce78","tokensBefore":48211,"details":{"readFiles":["main.c"]},"fromHook":false})",
     R"({"type":"compaction","id":"2ce59518","parent_id":"a7c1d2e3","timestamp":"2026-12-02T09:28:36.999Z","summary":"## Goal\nfix","first_kept_entry_id":"9f60ce78","tokens_before":48211,"details":{"readFiles":["main.c"]},"from_hook":false})"},
    // compaction with a retained tail and usage (written by this library)
    {R"({"type":"compaction","id":"c0ffee01","parentId":"2ce59518","timestamp":"2026-12-02T09:28:37.001Z","summary":"s","tokensBefore":100,"retainedTail":[{"role":"user","content":"keep me","timestamp":9}],"usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{"input":0.1,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.1}},"fromHook":true})", R"({"type":"compaction","id":"c0ffee01","parent_id":"2ce59518","timestamp":"2026-12-02T09:28:37.001Z","summary":"s","tokens_before":100,"retained_tail":[{"role":"user","content":"keep me","timestamp":9}],"usage":{"input":1,"output":2,"cache_read":3,"cache_write":4,"total_tokens":10,"cost":{"input":0.1,"output":0,"cache_read":0,"cache_write":0,"total":0.1}},"from_hook":true})"},
    // custom entries: pi writes the payload before the base fields
    {R"({"type":"custom","customType":"my-ext","data":{"count":2,"ratio":0.5},"id":"e3c69d72","parentId":"c0ffee01","timestamp":"2026-12-02T09:28:36.999Z"})",
     R"({"type":"custom","id":"e3c69d72","parent_id":"c0ffee01","timestamp":"2026-12-02T09:28:36.999Z","custom_type":"my-ext","data":{"count":2,"ratio":0.5}})"},
    {R"({"type":"custom","customType":"bare","id":"7ccc5b99","parentId":"e3c69d72","timestamp":"2026-12-02T09:28:36.999Z"})",
     R"({"type":"custom","id":"7ccc5b99","parent_id":"e3c69d72","timestamp":"2026-12-02T09:28:36.999Z","custom_type":"bare"})"},
    {R"({"type":"session_info","id":"614ed476","parentId":"7ccc5b99","timestamp":"2026-12-02T09:28:36.999Z","name":"Bug hunt"})",
     R"({"type":"session_info","id":"614ed476","parent_id":"7ccc5b99","timestamp":"2026-12-02T09:28:36.999Z","name":"Bug hunt"})"},
    {R"({"type":"custom_message","customType":"reminder","content":[{"type":"text","text":"remember"}],"display":false,"details":{"k":1},"id":"8865d057","parentId":"614ed476","timestamp":"2026-12-02T09:28:36.999Z"})",
     R"({"type":"custom_message","id":"8865d057","parent_id":"614ed476","timestamp":"2026-12-02T09:28:36.999Z","custom_type":"reminder","content":[{"type":"text","text":"remember"}],"details":{"k":1},"display":false})"},
    {R"({"type":"custom_message","customType":"plain","content":"text body","display":true,"id":"00972499","parentId":"8865d057","timestamp":"2026-12-02T09:28:36.999Z"})",
     R"({"type":"custom_message","id":"00972499","parent_id":"8865d057","timestamp":"2026-12-02T09:28:36.999Z","custom_type":"plain","content":"text body","display":true})"},
    {R"({"type":"label","id":"4bcd3be4","parentId":"00972499","timestamp":"2026-12-02T09:28:36.999Z","targetId":"9f60ce78","label":"start"})",
     R"({"type":"label","id":"4bcd3be4","parent_id":"00972499","timestamp":"2026-12-02T09:28:36.999Z","target_id":"9f60ce78","label":"start"})"},
    {R"({"type":"label","id":"a246201a","parentId":"4bcd3be4","timestamp":"2026-12-02T09:28:36.999Z","targetId":"9f60ce78"})",
     R"({"type":"label","id":"a246201a","parent_id":"4bcd3be4","timestamp":"2026-12-02T09:28:36.999Z","target_id":"9f60ce78"})"},
    {R"({"type":"branch_summary","id":"0d68c6fd","parentId":"9f60ce78","timestamp":"2026-12-02T09:28:36.999Z","fromId":"9f60ce78","summary":"branch summary text","details":{"files":[]},"fromHook":true})",
     R"({"type":"branch_summary","id":"0d68c6fd","parent_id":"9f60ce78","timestamp":"2026-12-02T09:28:36.999Z","from_id":"9f60ce78","summary":"branch summary text","details":{"files":[]},"from_hook":true})"},
    {R"({"type":"branch_summary","id":"c26e8b0c","parentId":null,"timestamp":"2026-12-02T09:28:37.004Z","fromId":"root","summary":"from root","usage":{"input":5,"output":6,"cacheRead":7,"cacheWrite":8,"totalTokens":26,"cost":{"input":0.000015,"output":0.26,"cacheRead":0,"cacheWrite":0,"total":0.260015}},"fromHook":false})",
     R"({"type":"branch_summary","id":"c26e8b0c","parent_id":null,"timestamp":"2026-12-02T09:28:37.004Z","from_id":"root","summary":"from root","usage":{"input":5,"output":6,"cache_read":7,"cache_write":8,"total_tokens":26,"cost":{"input":0.000015,"output":0.26,"cache_read":0,"cache_write":0,"total":0.260015}},"from_hook":false})"},
    {R"({"type":"leaf","id":"1eaf0001","parentId":"c26e8b0c","timestamp":"2026-12-02T09:28:37.005Z","targetId":"9f60ce78"})",
     R"({"type":"leaf","id":"1eaf0001","parent_id":"c26e8b0c","timestamp":"2026-12-02T09:28:37.005Z","target_id":"9f60ce78"})"},
    {R"({"type":"leaf","id":"1eaf0002","parentId":"1eaf0001","timestamp":"2026-12-02T09:28:37.006Z","targetId":null})",
     R"({"type":"leaf","id":"1eaf0002","parent_id":"1eaf0001","timestamp":"2026-12-02T09:28:37.006Z","target_id":null})"},
    // entry-level fields of a newer writer are kept after the payload
    {R"({"type":"label","id":"ext00001","parentId":"1eaf0002","timestamp":"2026-12-02T09:28:37.007Z","targetId":"9f60ce78","label":"x","source":"cli","weight":1.25})",
     R"({"type":"label","id":"ext00001","parent_id":"1eaf0002","timestamp":"2026-12-02T09:28:37.007Z","target_id":"9f60ce78","label":"x","source":"cli","weight":1.25})"},
};

}  // namespace

TEST_CASE("every entry type and message role reads and writes back byte for byte in both dialects",
          "[codec]") {
    for (const auto& pair : pairs) {
        INFO(pair.native);
        const auto from_pi = golden(pair.pi, Dialect::pi);
        const auto from_native = golden(pair.native, Dialect::native);
        CHECK(encode_entry(from_pi, Dialect::native) == pair.native);
        CHECK(encode_entry(from_native, Dialect::pi) == pair.pi);
        CHECK(entry_to_json(from_pi, Dialect::native) ==
              entry_to_json(from_native, Dialect::native));
    }
}

TEST_CASE("a user message keeps string content apart from block content", "[codec]") {
    const auto plain = golden(pairs[0].pi, Dialect::pi);
    CHECK(id_of(plain) == "9f60ce78");
    CHECK_FALSE(parent_id_of(plain).has_value());
    CHECK(base_of(plain).timestamp == "2026-12-02T09:28:36.998Z");
    const auto& u = message_as<UserMessage>(plain);
    REQUIRE(std::holds_alternative<std::string>(u.content));
    CHECK(std::get<std::string>(u.content) == "Fix the bug in main.c");
    CHECK(u.timestamp == 1767225600000);
    CHECK(u.extra.is_null());

    const auto blocks = golden(pairs[1].native, Dialect::native);
    CHECK(parent_id_of(blocks) == "9f60ce78");
    const auto& ub = message_as<UserMessage>(blocks);
    REQUIRE(std::holds_alternative<std::vector<ContentBlock>>(ub.content));
    const auto& list = std::get<std::vector<ContentBlock>>(ub.content);
    REQUIRE(list.size() == 2);
    CHECK(std::get<TextContent>(list[0]).text == "look");
    CHECK(std::get<ImageContent>(list[1]).data == "iVBORw0KGgo=");
    CHECK(std::get<ImageContent>(list[1]).mime_type == "image/png");
}

TEST_CASE("a pi assistant line keeps provider extras, costs and the stop reason", "[codec]") {
    const auto entry = golden(pairs[2].pi, Dialect::pi);
    const auto& a = message_as<AssistantMessage>(entry);
    REQUIRE(a.content.size() == 3);
    const auto& thinking = std::get<ThinkingContent>(a.content[0]);
    CHECK(thinking.thinking == "Let me look.");
    CHECK(thinking.extra == Json::parse(R"({"thinkingSignature":"EqQBCkgIAhABGAIiQ"})"));
    CHECK(std::get<TextContent>(a.content[1]).text == "Reading it.");
    const auto& call = std::get<ToolCallContent>(a.content[2]);
    CHECK(call.id == "toolu_01A");
    CHECK(call.name == "read");
    CHECK(call.arguments == Json::parse(R"({"path":"main.c","offset":1})"));
    CHECK(call.extra.is_null());
    CHECK(a.api == "anthropic-messages");
    CHECK(a.provider == "anthropic");
    CHECK(a.model == "claude-sonnet-4-5");
    CHECK(a.usage.input == 1200);
    CHECK(a.usage.output == 240);
    CHECK(a.usage.cache_read == 5000);
    CHECK(a.usage.cache_write == 0);
    CHECK(a.usage.total_tokens == 6440);
    CHECK(a.usage.cost.input == 0.0036);
    CHECK(a.usage.cost.cache_read == 0.0015);
    CHECK(a.usage.cost.cache_write == 0.0);
    CHECK(a.usage.cost.total == 0.0087);
    CHECK(a.stop_reason == "tool_use");  // the model keeps the native spelling
    CHECK_FALSE(a.error_message.has_value());
    CHECK(a.timestamp == 1767225601234);
    CHECK(a.extra == Json::parse(R"({"responseId":"msg_01XyZ"})"));

    const auto aborted = golden(pairs[4].pi, Dialect::pi);
    const auto& b = message_as<AssistantMessage>(aborted);
    CHECK(b.content.empty());
    CHECK(b.stop_reason == "aborted");
    CHECK(b.error_message == "Request was aborted");
    CHECK(b.usage.cost.total == 0.0);
    CHECK(b.extra == Json::parse(R"({"responseId":"resp_9"})"));
}

TEST_CASE("tool results, bash executions and the summaries decode their fields", "[codec]") {
    const auto tr_entry = golden(pairs[3].native, Dialect::native);
    const auto& tr = message_as<ToolResultMessage>(tr_entry);
    CHECK(tr.tool_call_id == "toolu_01A");
    CHECK(tr.tool_name == "read");
    REQUIRE(tr.content.size() == 1);
    CHECK(tr.details == Json::parse(R"({"lines":1})"));
    CHECK_FALSE(tr.is_error);
    CHECK(tr.timestamp == 1767225602000);

    const auto ls_entry = golden(pairs[5].pi, Dialect::pi);
    const auto& ls = message_as<BashExecutionMessage>(ls_entry);
    CHECK(ls.command == "ls");
    CHECK(ls.output == "a\nb");
    CHECK(ls.exit_code == 0);
    CHECK_FALSE(ls.cancelled);
    CHECK_FALSE(ls.truncated);
    CHECK_FALSE(ls.full_output_path.has_value());
    CHECK(ls.exclude_from_context == true);

    const auto sleep_entry = golden(pairs[6].native, Dialect::native);
    const auto& sleep = message_as<BashExecutionMessage>(sleep_entry);
    CHECK_FALSE(sleep.exit_code.has_value());
    CHECK(sleep.cancelled);
    CHECK(sleep.truncated);
    CHECK(sleep.full_output_path == "/tmp/out.txt");
    CHECK_FALSE(sleep.exclude_from_context.has_value());

    const auto custom_entry = golden(pairs[7].pi, Dialect::pi);
    const auto& custom = message_as<CustomMessage>(custom_entry);
    CHECK(custom.custom_type == "note");
    CHECK(std::get<std::string>(custom.content) == "hi");
    CHECK(custom.display);
    CHECK(custom.details.is_null());

    const auto bs_entry = golden(pairs[8].native, Dialect::native);
    const auto& bs = message_as<BranchSummaryMessage>(bs_entry);
    CHECK(bs.summary == "tried X");
    CHECK(bs.from_id == "root");
    CHECK(bs.timestamp == 1767225606000);

    const auto cs_entry = golden(pairs[9].pi, Dialect::pi);
    const auto& cs = message_as<CompactionSummaryMessage>(cs_entry);
    CHECK(cs.summary == "did Y");
    CHECK(cs.tokens_before == 50000);
}

TEST_CASE("setting changes, compactions and custom entries decode their fields", "[codec]") {
    CHECK(as_entry<ThinkingLevelChangeEntry>(golden(pairs[10].pi, Dialect::pi)).thinking_level ==
          "high");
    const auto model_entry = golden(pairs[11].native, Dialect::native);
    const auto& model = as_entry<ModelChangeEntry>(model_entry);
    CHECK(model.provider == "anthropic");
    CHECK(model.model_id == "claude-opus-4-1");
    CHECK(as_entry<ActiveToolsChangeEntry>(golden(pairs[12].pi, Dialect::pi)).active_tool_names ==
          std::vector<std::string>{"read", "bash"});

    const auto pi_compaction = golden(pairs[13].pi, Dialect::pi);
    const auto& c = as_entry<CompactionEntry>(pi_compaction);
    CHECK(c.summary == "## Goal\nfix");
    CHECK(c.first_kept_entry_id == "9f60ce78");
    CHECK(c.tokens_before == 48211);
    CHECK_FALSE(c.retained_tail.has_value());
    CHECK(c.details == Json::parse(R"({"readFiles":["main.c"]})"));
    CHECK_FALSE(c.usage.has_value());
    CHECK_FALSE(c.from_hook);

    const auto tail_compaction = golden(pairs[14].native, Dialect::native);
    const auto& t = as_entry<CompactionEntry>(tail_compaction);
    CHECK_FALSE(t.first_kept_entry_id.has_value());
    REQUIRE(t.retained_tail.has_value());
    REQUIRE(t.retained_tail->size() == 1);
    CHECK(role_of(t.retained_tail->front()) == "user");
    REQUIRE(t.usage.has_value());
    CHECK(t.usage->total_tokens == 10);
    CHECK(t.usage->cost.input == 0.1);
    CHECK(t.from_hook);

    const auto custom_entry = golden(pairs[15].pi, Dialect::pi);
    const auto& custom = as_entry<CustomEntry>(custom_entry);
    CHECK(custom.custom_type == "my-ext");
    CHECK(custom.data == Json::parse(R"({"count":2,"ratio":0.5})"));
    CHECK(parent_id_of(custom_entry) == "c0ffee01");
    CHECK(as_entry<CustomEntry>(golden(pairs[16].native, Dialect::native)).data.is_null());

    const auto cm_entry = golden(pairs[18].pi, Dialect::pi);
    const auto& cm = as_entry<CustomMessageEntry>(cm_entry);
    CHECK(cm.custom_type == "reminder");
    CHECK(std::holds_alternative<std::vector<ContentBlock>>(cm.content));
    CHECK(cm.details == Json::parse(R"({"k":1})"));
    CHECK_FALSE(cm.display);
    const auto plain_cm = golden(pairs[19].native, Dialect::native);
    CHECK(std::get<std::string>(as_entry<CustomMessageEntry>(plain_cm).content) == "text body");
    CHECK(as_entry<CustomMessageEntry>(plain_cm).details.is_null());
}

TEST_CASE("labels, names, branch summaries and leaf entries decode their fields", "[codec]") {
    CHECK(as_entry<SessionInfoEntry>(golden(pairs[17].pi, Dialect::pi)).name == "Bug hunt");
    const auto label_entry = golden(pairs[20].native, Dialect::native);
    CHECK(as_entry<LabelEntry>(label_entry).target_id == "9f60ce78");
    CHECK(as_entry<LabelEntry>(label_entry).label == "start");
    CHECK_FALSE(as_entry<LabelEntry>(golden(pairs[21].pi, Dialect::pi)).label.has_value());

    const auto bs_entry = golden(pairs[22].pi, Dialect::pi);
    const auto& bs = as_entry<BranchSummaryEntry>(bs_entry);
    CHECK(bs.from_id == "9f60ce78");
    CHECK(bs.summary == "branch summary text");
    CHECK(bs.details == Json::parse(R"({"files":[]})"));
    CHECK(bs.from_hook);
    const auto root_bs = golden(pairs[23].native, Dialect::native);
    CHECK_FALSE(parent_id_of(root_bs).has_value());
    REQUIRE(as_entry<BranchSummaryEntry>(root_bs).usage.has_value());
    CHECK(as_entry<BranchSummaryEntry>(root_bs).usage->cost.input == 0.000015);

    CHECK(as_entry<LeafEntry>(golden(pairs[24].pi, Dialect::pi)).target_id == "9f60ce78");
    CHECK_FALSE(
        as_entry<LeafEntry>(golden(pairs[25].native, Dialect::native)).target_id.has_value());

    const auto extra_entry = golden(pairs[26].pi, Dialect::pi);
    CHECK(base_of(extra_entry).extra == Json::parse(R"({"source":"cli","weight":1.25})"));
}

TEST_CASE("an entry of an unknown type is kept whole and written back as read in either dialect",
          "[codec]") {
    constexpr std::string_view pi_line =
        R"({"type":"bookmark_v9","id":"u0000001","parentId":"9f60ce78","timestamp":"2026-12-02T09:28:38.000Z","payload":{"a":[1,2.5,null]},"note":"n"})";
    const auto entry = golden(pi_line, Dialect::pi);
    const auto& u = as_entry<UnknownEntry>(entry);
    CHECK(u.type == "bookmark_v9");
    CHECK(u.id == "u0000001");
    CHECK(u.parent_id == "9f60ce78");
    CHECK(u.timestamp == "2026-12-02T09:28:38.000Z");
    CHECK(u.raw == Json::parse(pi_line));
    CHECK(type_of(entry) == "bookmark_v9");
    // In a native file it keeps its spelling, and a native reader still finds its parent.
    const std::string native_line = encode_entry(entry, Dialect::native);
    CHECK(native_line == pi_line);
    CHECK(parent_id_of(decode_entry(native_line, Dialect::native)) == "9f60ce78");

    constexpr std::string_view native_root =
        R"({"type":"future","id":"u0000002","parent_id":null,"timestamp":"2026-12-02T09:28:38.001Z","x":{}})";
    const auto root = golden(native_root, Dialect::native);
    CHECK_FALSE(parent_id_of(root).has_value());
    CHECK(encode_entry(root, Dialect::pi) == native_root);
}

TEST_CASE("an unknown entry that a fork made a root is written with its new parent", "[codec]") {
    auto entry = decode_entry(
        R"({"type":"future","id":"u1","parentId":"gone","timestamp":"t","k":1})", Dialect::pi);
    base_of(entry).parent_id.reset();
    CHECK(encode_entry(entry, Dialect::pi) ==
          R"({"type":"future","id":"u1","parentId":null,"timestamp":"t","k":1})");
    base_of(entry).parent_id = "p2";
    CHECK(encode_entry(entry, Dialect::native) ==
          R"({"type":"future","id":"u1","parentId":"p2","timestamp":"t","k":1})");
}

TEST_CASE("a message of an unknown role and a block of an unknown type are kept whole", "[codec]") {
    constexpr std::string_view pi_line =
        R"({"type":"message","id":"0a0a0a0a","parentId":null,"timestamp":"2026-12-02T09:28:38.000Z","message":{"role":"hookMessage","customType":"x","content":"y","display":true,"timestamp":5}})";
    constexpr std::string_view native_line =
        R"({"type":"message","id":"0a0a0a0a","parent_id":null,"timestamp":"2026-12-02T09:28:38.000Z","message":{"role":"hookMessage","customType":"x","content":"y","display":true,"timestamp":5}})";
    const auto entry = golden(pi_line, Dialect::pi);
    const auto& opaque = message_as<OpaqueMessage>(entry);
    CHECK(opaque.role == "hookMessage");
    CHECK(opaque.raw == Json::parse(pi_line)["message"]);
    CHECK(timestamp_of(as_entry<MessageEntry>(entry).message) == 5);
    CHECK(encode_entry(entry, Dialect::native) == native_line);
    golden(native_line, Dialect::native);

    constexpr std::string_view blocks_pi =
        R"({"type":"message","id":"0b0b0b0b","parentId":"0a0a0a0a","timestamp":"2026-12-02T09:28:38.001Z","message":{"role":"assistant","content":[{"type":"redacted_thinking","data":"xyz"},{"type":"tool_call","id":"k","name":"n","arguments":{}},{"type":"text","text":"ok","textSignature":"s1"}],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":6}})";
    const auto with_blocks = golden(blocks_pi, Dialect::pi);
    const auto& a = message_as<AssistantMessage>(with_blocks);
    REQUIRE(a.content.size() == 3);
    CHECK(std::get<OpaqueContent>(a.content[0]).type == "redacted_thinking");
    // "tool_call" is the native spelling: in a pi file it is a block pi does not know.
    CHECK(std::get<OpaqueContent>(a.content[1]).type == "tool_call");
    CHECK(std::get<TextContent>(a.content[2]).extra == Json::parse(R"({"textSignature":"s1"})"));
}

TEST_CASE("every block type converts between the dialects on its own", "[codec]") {
    struct BlockPair {
        const char* pi;
        const char* native;
    };
    const BlockPair blocks[] = {
        {R"({"type":"text","text":"hello"})", R"({"type":"text","text":"hello"})"},
        {R"({"type":"image","data":"AAAA","mimeType":"image/jpeg","x":1})",
         R"({"type":"image","data":"AAAA","mime_type":"image/jpeg","x":1})"},
        {R"({"type":"thinking","thinking":"hmm","thinkingSignature":"sig","redacted":true})",
         R"({"type":"thinking","thinking":"hmm","thinkingSignature":"sig","redacted":true})"},
        {R"({"type":"toolCall","id":"c1","name":"bash","arguments":{"cmd":"ls","n":[1,2]},"thoughtSignature":"t"})",
         R"({"type":"tool_call","id":"c1","name":"bash","arguments":{"cmd":"ls","n":[1,2]},"thoughtSignature":"t"})"},
        {R"({"type":"audio","data":"zz","format":"wav"})",
         R"({"type":"audio","data":"zz","format":"wav"})"},
    };
    for (const auto& b : blocks) {
        INFO(b.native);
        const ContentBlock from_pi = content_block_from_json(Json::parse(b.pi), Dialect::pi);
        const ContentBlock from_native =
            content_block_from_json(Json::parse(b.native), Dialect::native);
        CHECK(dump_json(content_block_to_json(from_pi, Dialect::pi)) == b.pi);
        CHECK(dump_json(content_block_to_json(from_pi, Dialect::native)) == b.native);
        CHECK(dump_json(content_block_to_json(from_native, Dialect::native)) == b.native);
        CHECK(dump_json(content_block_to_json(from_native, Dialect::pi)) == b.pi);
    }
}

TEST_CASE("usage converts between the dialects on its own", "[codec]") {
    constexpr const char* pi =
        R"({"input":3,"output":4,"cacheRead":5,"cacheWrite":6,"totalTokens":18,"cost":{"input":0.000009,"output":0.00006,"cacheRead":1.5e-7,"cacheWrite":0,"total":0.00006915,"currency":"USD"},"reasoning":2})";
    constexpr const char* native =
        R"({"input":3,"output":4,"cache_read":5,"cache_write":6,"total_tokens":18,"cost":{"input":0.000009,"output":0.00006,"cache_read":1.5e-7,"cache_write":0,"total":0.00006915,"currency":"USD"},"reasoning":2})";
    const Usage u = usage_from_json(Json::parse(pi), Dialect::pi);
    CHECK(u.input == 3);
    CHECK(u.cache_write == 6);
    CHECK(u.total_tokens == 18);
    CHECK(u.cost.cache_read == 1.5e-7);
    CHECK(u.cost.extra == Json::parse(R"({"currency":"USD"})"));
    CHECK(u.extra == Json::parse(R"({"reasoning":2})"));
    CHECK(dump_json(usage_to_json(u, Dialect::pi)) == pi);
    CHECK(dump_json(usage_to_json(u, Dialect::native)) == native);
    CHECK(dump_json(usage_to_json(usage_from_json(Json::parse(native), Dialect::native),
                                  Dialect::pi)) == pi);
}

TEST_CASE("messages convert on their own, outside entries", "[codec]") {
    const Json pi = Json::parse(
        R"({"role":"toolResult","toolCallId":"c","toolName":"bash","content":[],"isError":true,"timestamp":1})");
    const AgentMessage m = message_from_json(pi, Dialect::pi);
    CHECK(std::get<ToolResultMessage>(m).is_error);
    CHECK(
        dump_json(message_to_json(m, Dialect::native)) ==
        R"({"role":"tool_result","tool_call_id":"c","tool_name":"bash","content":[],"is_error":true,"timestamp":1})");
    CHECK(message_to_json(m, Dialect::pi) == pi);
}

TEST_CASE("readers accept null for every optional field and a missing parent as a root",
          "[codec]") {
    const auto compaction = decode_entry(
        R"({"type":"compaction","id":"c1","timestamp":"t","summary":"s","firstKeptEntryId":null,"tokensBefore":5,"retainedTail":null,"details":null,"usage":null,"fromHook":null})",
        Dialect::pi);
    const auto& c = as_entry<CompactionEntry>(compaction);
    CHECK_FALSE(c.parent_id.has_value());
    CHECK_FALSE(c.first_kept_entry_id.has_value());
    CHECK_FALSE(c.retained_tail.has_value());
    CHECK(c.details.is_null());
    CHECK_FALSE(c.usage.has_value());
    CHECK_FALSE(c.from_hook);
    // Absent optionals are omitted when written (from_hook too, as it was read); the parent is
    // always written.
    CHECK(
        encode_entry(compaction, Dialect::pi) ==
        R"({"type":"compaction","id":"c1","parentId":null,"timestamp":"t","summary":"s","tokensBefore":5})");

    const auto bash = decode_entry(
        R"({"type":"message","id":"b1","parent_id":null,"timestamp":"t","message":{"role":"bash_execution","command":"x","output":"","exit_code":null,"cancelled":false,"truncated":false,"full_output_path":null,"exclude_from_context":null,"timestamp":1}})",
        Dialect::native);
    const auto& b = message_as<BashExecutionMessage>(bash);
    CHECK_FALSE(b.exit_code.has_value());
    CHECK_FALSE(b.full_output_path.has_value());
    CHECK_FALSE(b.exclude_from_context.has_value());

    const auto label =
        decode_entry(R"({"type":"label","id":"l","timestamp":"t","target_id":"x","label":null})",
                     Dialect::native);
    CHECK_FALSE(as_entry<LabelEntry>(label).label.has_value());
    const auto leaf =
        decode_entry(R"({"type":"leaf","id":"l","parentId":"p","timestamp":"t"})", Dialect::pi);
    CHECK_FALSE(as_entry<LeafEntry>(leaf).target_id.has_value());
    CHECK(encode_entry(leaf, Dialect::pi) ==
          R"({"type":"leaf","id":"l","parentId":"p","timestamp":"t","targetId":null})");
    const auto info = decode_entry(
        R"({"type":"session_info","id":"i","parentId":null,"timestamp":"t","name":null})",
        Dialect::pi);
    CHECK(encode_entry(info, Dialect::pi) ==
          R"({"type":"session_info","id":"i","parentId":null,"timestamp":"t"})");
}

TEST_CASE("an absent retained tail and an empty one stay different", "[codec]") {
    CompactionEntry c;
    c.id = "c";
    c.timestamp = "t";
    c.summary = "s";
    const std::string absent = encode_entry(c, Dialect::native);
    c.retained_tail.emplace();
    const std::string empty = encode_entry(c, Dialect::native);
    CHECK(
        absent ==
        R"({"type":"compaction","id":"c","parent_id":null,"timestamp":"t","summary":"s","tokens_before":0,"from_hook":false})");
    CHECK(
        empty ==
        R"({"type":"compaction","id":"c","parent_id":null,"timestamp":"t","summary":"s","tokens_before":0,"retained_tail":[],"from_hook":false})");
    CHECK_FALSE(
        as_entry<CompactionEntry>(decode_entry(absent, Dialect::native)).retained_tail.has_value());
    const auto read_empty = decode_entry(empty, Dialect::native);
    REQUIRE(as_entry<CompactionEntry>(read_empty).retained_tail.has_value());
    CHECK(as_entry<CompactionEntry>(read_empty).retained_tail->empty());
}

TEST_CASE("an assistant error message goes before the timestamp natively and last for pi",
          "[codec]") {
    AssistantMessage a;
    a.api = "x";
    a.provider = "p";
    a.model = "m";
    a.stop_reason = "error";
    a.error_message = "overloaded";
    a.timestamp = 7;
    a.extra = Json::parse(R"({"responseId":"r"})");
    const std::string usage_pi =
        R"({"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}})";
    const std::string usage_native =
        R"({"input":0,"output":0,"cache_read":0,"cache_write":0,"total_tokens":0,"cost":{"input":0,"output":0,"cache_read":0,"cache_write":0,"total":0}})";
    CHECK(
        dump_json(message_to_json(a, Dialect::native)) ==
        R"({"role":"assistant","content":[],"api":"x","provider":"p","model":"m","usage":)" +
            usage_native +
            R"(,"stop_reason":"error","error_message":"overloaded","timestamp":7,"responseId":"r"})");
    CHECK(
        dump_json(message_to_json(a, Dialect::pi)) ==
        R"({"role":"assistant","content":[],"api":"x","provider":"p","model":"m","usage":)" +
            usage_pi +
            R"(,"stopReason":"error","timestamp":7,"responseId":"r","errorMessage":"overloaded"})");
}

TEST_CASE(
    "a pi error message built as one literal reads, and is written back with errorMessage last",
    "[codec]") {
    // pi-agent-core's handleRunFailure builds the message with errorMessage before timestamp;
    // its providers (the common case: aborts, API errors) assign errorMessage last. The model
    // keeps no key order, so the first kind is rewritten in the second's order.
    constexpr std::string_view literal =
        R"({"role":"assistant","content":[{"type":"text","text":""}],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"error","errorMessage":"boom","timestamp":3})";
    const AgentMessage m = message_from_json(Json::parse(literal), Dialect::pi);
    CHECK(std::get<AssistantMessage>(m).error_message == "boom");
    CHECK(std::get<AssistantMessage>(m).extra.is_null());
    CHECK(
        dump_json(message_to_json(m, Dialect::pi)) ==
        R"({"role":"assistant","content":[{"type":"text","text":""}],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"error","timestamp":3,"errorMessage":"boom"})");
}

TEST_CASE("a decoded line may end with its newline", "[codec]") {
    const std::string line = std::string(pairs[0].native) + "\n";
    CHECK(encode_entry(decode_entry(line, Dialect::native), Dialect::native) == pairs[0].native);
}

// ---------------------------------------------------------------------------------------------
// The header

TEST_CASE("pi headers read and write back byte for byte", "[codec]") {
    constexpr std::string_view plain =
        R"({"type":"session","version":3,"id":"01a23615-a172-73cb-995b-8f5618fe1929","timestamp":"2026-12-02T09:28:36.979Z","cwd":"/home/u/proj"})";
    Dialect d = Dialect::native;
    const SessionHeader h = decode_header(plain, &d);
    CHECK(d == Dialect::pi);
    CHECK(h.version == 3);
    CHECK(h.id == "01a23615-a172-73cb-995b-8f5618fe1929");
    CHECK(h.timestamp == "2026-12-02T09:28:36.979Z");
    CHECK(h.cwd == "/home/u/proj");
    CHECK_FALSE(h.parent_session.has_value());
    CHECK(h.metadata == Json::object());
    CHECK(h.extra.is_null());
    CHECK(encode_header(h, Dialect::pi) == plain);
    CHECK(
        encode_header(h, Dialect::native) ==
        R"({"type":"session","version":3,"id":"01a23615-a172-73cb-995b-8f5618fe1929","timestamp":"2026-12-02T09:28:36.979Z","cwd":"/home/u/proj","parent_session":null,"metadata":{}})");

    constexpr std::string_view forked =
        R"({"type":"session","version":3,"id":"s2","timestamp":"2026-12-02T09:28:36.979Z","cwd":"/w","parentSession":"/home/u/.pi/agent/sessions/--w--/a_s1.jsonl","branchedFrom":"x"})";
    const SessionHeader f = decode_header(forked);
    CHECK(f.parent_session == "/home/u/.pi/agent/sessions/--w--/a_s1.jsonl");
    CHECK(f.extra == Json::parse(R"({"branchedFrom":"x"})"));
    CHECK(encode_header(f, Dialect::pi) == forked);
}

TEST_CASE("native headers always carry parent_session and metadata", "[codec]") {
    constexpr std::string_view plain =
        R"({"type":"session","version":3,"id":"s1","timestamp":"2026-12-02T07:43:23.123Z","cwd":"/w","parent_session":null,"metadata":{}})";
    Dialect d = Dialect::pi;
    const SessionHeader h = decode_header(plain, &d);
    CHECK(d == Dialect::native);
    CHECK_FALSE(h.parent_session.has_value());
    CHECK(encode_header(h, Dialect::native) == plain);
    CHECK(
        encode_header(h, Dialect::pi) ==
        R"({"type":"session","version":3,"id":"s1","timestamp":"2026-12-02T07:43:23.123Z","cwd":"/w"})");

    constexpr std::string_view full =
        R"({"type":"session","version":3,"id":"s2","timestamp":"2026-12-02T07:43:23.123Z","cwd":"/w","parent_session":"s1","metadata":{"title":"x","n":2},"x_future":[1]})";
    const SessionHeader f = decode_header(full);
    CHECK(f.parent_session == "s1");
    CHECK(f.metadata == Json::parse(R"({"title":"x","n":2})"));
    CHECK(f.extra == Json::parse(R"({"x_future":[1]})"));
    CHECK(encode_header(f, Dialect::native) == full);
    const std::string as_pi = encode_header(f, Dialect::pi);
    CHECK(
        as_pi ==
        R"({"type":"session","version":3,"id":"s2","timestamp":"2026-12-02T07:43:23.123Z","cwd":"/w","parentSession":"s1","metadata":{"title":"x","n":2},"x_future":[1]})");
    CHECK(encode_header(decode_header(as_pi), Dialect::native) == full);
}

TEST_CASE("the dialect is told by the parent_session key alone", "[codec]") {
    CHECK(detect_dialect(Json::parse(R"({"type":"session","parent_session":null})")) ==
          Dialect::native);
    CHECK(detect_dialect(Json::parse(R"({"type":"session","parent_session":"x"})")) ==
          Dialect::native);
    CHECK(detect_dialect(Json::parse(R"({"type":"session","parentSession":"x"})")) == Dialect::pi);
    CHECK(detect_dialect(Json::parse(R"({"type":"session","metadata":{}})")) == Dialect::pi);
    CHECK(detect_dialect(Json::parse("[]")) == Dialect::pi);
}

TEST_CASE("a header without a version is format version 1 and older versions read", "[codec]") {
    const SessionHeader v1 =
        decode_header(R"({"type":"session","id":"s","timestamp":"t","cwd":"/w"})");
    CHECK(v1.version == 1);
    CHECK(decode_header(R"({"type":"session","version":2,"id":"s","timestamp":"t","cwd":"/w"})")
              .version == 2);
    CHECK(encode_header(v1, Dialect::pi) ==
          R"({"type":"session","version":1,"id":"s","timestamp":"t","cwd":"/w"})");
    const SessionHeader old = decode_header(R"({"type":"session","id":"s","timestamp":"t"})");
    CHECK(old.cwd.empty());
}

TEST_CASE("a header of a newer format version is refused", "[codec]") {
    try {
        decode_header(R"({"type":"session","version":4,"id":"s","timestamp":"t","cwd":"/w"})");
        FAIL("no error");
    } catch (const SessionError& e) {
        CHECK(e.code() == ErrorCode::invalid_session);
        CHECK(std::string(e.what()).find("unsupported session format version 4") !=
              std::string::npos);
    }
}
