// Property tests of the pairing invariant (SPEC §8): random sessions — branching, tool calls
// answered at once, late or on another branch, compactions at find_cut_point's cuts, moves with
// summaries, forks — keep, after every operation, a context where every tool result follows its
// call and at most one compaction summary leads; and no compaction breaks a call/result pair that
// the context held before it.
#include "support/builders.hpp"
#include "support/catch.hpp"
#include "support/sizes.hpp"

#include <cstdio>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>

using namespace agentcore;
using namespace agentcore::testing;

namespace {

class RandomSession {
public:
    explicit RandomSession(std::uint64_t seed)
        : rng_(seed),
          repo_(Environment::deterministic(1796197403123, seed)),
          session_(create(repo_)) {}

    void run(int operations) {
        for (int i = 0; i < operations; ++i) {
            step();
            check_context();
            if (!failure_.empty()) return;
        }
        check_verify();
    }

    [[nodiscard]] const std::string& failure() const noexcept { return failure_; }
    [[nodiscard]] const std::string& log() const noexcept { return log_; }
    [[nodiscard]] int compactions() const noexcept { return compactions_; }

private:
    std::size_t pick(std::size_t n) {
        return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
    }
    bool chance(int percent) { return static_cast<int>(pick(100)) < percent; }

    std::string words(std::size_t max_chars) { return std::string(pick(max_chars + 1), 'w'); }

    AssistantMessage reply(std::string text) {
        AssistantMessage m;
        if (!text.empty()) m.content.push_back(TextContent{std::move(text), {}});
        m.provider = "anthropic";
        m.model = "claude";
        if (chance(50)) m.usage = usage(static_cast<std::int64_t>(pick(5000)) + 1, 50, 0, 0, 0.01);
        if (chance(5)) m.stop_reason = "aborted";
        return m;
    }

    void note(const std::string& what) { log_ += what + "; "; }

    // A random entry id of the session that is not a leaf entry.
    std::optional<std::string> random_entry() {
        const auto& all = session_.storage().entries();
        if (all.empty()) return std::nullopt;
        for (int tries = 0; tries < 8; ++tries) {
            const auto& e = all[pick(all.size())];
            if (!std::holds_alternative<LeafEntry>(*e)) return id_of(*e);
        }
        return std::nullopt;
    }

    void step() {
        const std::size_t op = pick(100);
        if (op < 18) {
            note("user");
            append_message(session_, user(words(800)));
        } else if (op < 30) {
            note("reply");
            append_message(session_, reply(words(800)));
        } else if (op < 52) {
            tool_turn();
        } else if (op < 57) {
            late_result();
        } else if (op < 65) {
            side_entry();
        } else if (op < 73) {
            note("move");
            move_to(session_, chance(90) ? random_entry() : std::nullopt);
        } else if (op < 80) {
            move_with_summary();
        } else if (op < 93) {
            compaction();
        } else {
            fork_session();
        }
    }

    void tool_turn() {
        static const char* names[] = {"read", "write", "edit", "bash"};
        AssistantMessage m = reply(chance(50) ? words(200) : "");
        m.stop_reason = "tool_use";
        std::vector<std::string> ids;
        for (std::size_t n = 1 + pick(3); n > 0; --n) {
            std::string id = "call" + std::to_string(next_call_++);
            m.content.push_back(ToolCallContent{
                id, names[pick(4)], Json{{"path", "f" + std::to_string(pick(5))}}, {}});
            ids.push_back(id);
        }
        note("tools(" + std::to_string(ids.size()) + ")");
        append_message(session_, m);
        if (chance(10)) append_message(session_, user(words(100)));  // typed while the tools ran
        if (chance(10)) append_thinking_level_change(session_, "high");
        for (auto& id : ids) {
            if (chance(80))
                append_message(session_, tool_result(id, "read", words(1200)));
            else
                pending_.push_back(id);
        }
    }

    // A result for some earlier call, wherever the leaf is now: a late answer on the same
    // branch, or an answer on another branch (an orphan by ancestry).
    void late_result() {
        if (pending_.empty()) return;
        const std::size_t i = pick(pending_.size());
        note("late " + pending_[i]);
        late_.insert(append_message(session_, tool_result(pending_[i], "read", words(300))));
        late_calls_.insert(pending_[i]);
        pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
    }

    void side_entry() {
        switch (pick(6)) {
            case 0: append_thinking_level_change(session_, "medium"); break;
            case 1: append_model_change(session_, "openai", "gpt"); break;
            case 2: {
                auto target = random_entry();
                if (target) append_label(session_, *target, std::string("l"));
                break;
            }
            case 3: append_custom_entry(session_, "state", Json{{"n", 1}}); break;
            case 4: append_custom_message_entry(session_, "note", words(200)); break;
            default: {
                BashExecutionMessage b;
                b.command = "make";
                b.output = words(400);
                append_message(session_, b);
            }
        }
        note("side");
    }

    std::optional<SummaryResult> scripted(std::string summary) {
        if (chance(8)) return std::nullopt;
        if (chance(4)) throw std::runtime_error("summariser failed");
        return SummaryResult{
            std::move(summary),
            chance(50) ? std::optional<Usage>(usage(10, 5, 0, 0, 0.001)) : std::nullopt};
    }

    void move_with_summary() {
        auto target = chance(90) ? random_entry() : std::nullopt;
        note("move+summary");
        const auto before = session_.storage().entry_count();
        const auto leaf = get_leaf_id(session_);
        try {
            auto r = move_to_with_summary(session_, target, [&](const BranchSummaryRequest& req) {
                return scripted(req.messages.empty() ? ""
                                                     : "B" + std::to_string(req.messages.size()));
            });
            if (!r.moved &&
                (session_.storage().entry_count() != before || get_leaf_id(session_) != leaf))
                failure_ = "a cancelled branch summary wrote something";
        } catch (const std::runtime_error&) {
            if (session_.storage().entry_count() != before)
                failure_ = "a failed branch summary wrote something";
        }
    }

    void compaction() {
        CompactionSettings settings{true, 0, static_cast<std::int64_t>(50 + pick(600))};
        auto prep = prepare_compaction(session_, settings);
        if (!prep) return;
        // The preparation's cut is find_cut_point's: the kept part starts at a valid cut point.
        if (prep->first_kept_entry_id) {
            const AgentMessage* first =
                message_of(*get_entry(session_, *prep->first_kept_entry_id));
            if (first && std::holds_alternative<ToolResultMessage>(*first))
                failure_ = "kept part starts at a tool result";
        }
        note("compact");
        const auto before = session_.storage().entry_count();
        // The pairs the context holds before: a compaction may summarise a pair or keep it, never
        // keep a result whose call it summarised.
        std::set<std::string> paired;
        for (const auto& m : build_context(session_).messages)
            if (const auto* r = std::get_if<ToolResultMessage>(&*m)) paired.insert(r->tool_call_id);
        try {
            auto id = compact(
                session_, *prep,
                [&](const SummaryRequest&) { return scripted("C" + std::to_string(compactions_)); },
                CompactOptions{chance(30), 2000});
            if (id)
                ++compactions_;
            else if (session_.storage().entry_count() != before)
                failure_ = "a cancelled compaction wrote something";
            if (id)
                for (const auto& d : build_context(session_).dropped)
                    if (d.reason == DropReason::orphan_tool_result &&
                        paired.count(d.tool_call_id) != 0)
                        failure_ = "the compaction broke the intact pair of call " + d.tool_call_id;
        } catch (const std::runtime_error&) {
            if (session_.storage().entry_count() != before)
                failure_ = "a failed compaction wrote something";
        }
    }

    void fork_session() {
        ForkOptions options;
        if (chance(70)) {
            options.entry_id = random_entry();
            options.position = ForkPosition::at;
            if (options.entry_id && chance(50)) {
                const AgentMessage* m = message_of(*get_entry(session_, *options.entry_id));
                if (m && std::holds_alternative<UserMessage>(*m))
                    options.position = ForkPosition::before;
            }
        }
        note("fork");
        session_ = fork(repo_, session_.storage().metadata().id, options);
    }

    void check_context() {
        for (bool provider_ready : {false, true}) {
            const SessionContext ctx =
                build_context(session_, ContextBuildOptions{{}, {}, provider_ready});
            std::set<std::string> calls;
            std::size_t summaries = 0;
            for (std::size_t i = 0; i < ctx.messages.size(); ++i) {
                const AgentMessage& m = *ctx.messages[i];
                if (const auto* a = std::get_if<AssistantMessage>(&m)) {
                    for (const auto& b : a->content)
                        if (const auto* c = std::get_if<ToolCallContent>(&b)) calls.insert(c->id);
                } else if (const auto* r = std::get_if<ToolResultMessage>(&m)) {
                    if (calls.count(r->tool_call_id) == 0)
                        failure_ = "tool result without its call: " + r->tool_call_id;
                } else if (std::holds_alternative<CompactionSummaryMessage>(m)) {
                    ++summaries;
                    if (i != 0) failure_ = "a compaction summary that does not lead the context";
                }
            }
            if (summaries > 1) failure_ = "more than one compaction summary";
            if (provider_ready) check_no_trailing_dangling(ctx);
        }
    }

    void check_no_trailing_dangling(const SessionContext& ctx) {
        std::set<std::string> answered;
        for (std::size_t i = ctx.messages.size(); i-- > 0;) {
            const AgentMessage& m = *ctx.messages[i];
            if (const auto* r = std::get_if<ToolResultMessage>(&m)) {
                answered.insert(r->tool_call_id);
                continue;
            }
            if (const auto* a = std::get_if<AssistantMessage>(&m))
                for (const auto& b : a->content)
                    if (const auto* c = std::get_if<ToolCallContent>(&b);
                        c && answered.count(c->id) == 0)
                        failure_ = "provider_ready left the trailing call " + c->id +
                                   " unanswered in " + describe_all(ctx);
            return;
        }
    }

    // The last quoted name of an issue's detail: the tool call id.
    static std::string quoted_call(const std::string& detail) {
        const auto close = detail.rfind('\'');
        const auto open = close == std::string::npos || close == 0 ? std::string::npos
                                                                   : detail.rfind('\'', close - 1);
        return open == std::string::npos ? std::string()
                                         : detail.substr(open + 1, close - open - 1);
    }

    static std::string describe_all(const SessionContext& ctx) {
        std::string out;
        for (const auto& m : ctx.messages) {
            out += std::string(role_of(*m));
            if (const auto* a = std::get_if<AssistantMessage>(&*m))
                for (const auto& b : a->content)
                    if (const auto* c = std::get_if<ToolCallContent>(&b)) out += " " + c->id;
            if (const auto* r = std::get_if<ToolResultMessage>(&*m)) out += " " + r->tool_call_id;
            out += " | ";
        }
        return out;
    }

    // Only results created late (or on another branch) may lack their call (a fork keeps ids, so
    // late_ covers their copies); the tree is sound. A fork copies the labels on its path even
    // when they name entries of other branches, which it does not copy.
    void check_verify() {
        const VerifyReport report = verify(session_);
        const bool forked = session_.storage().metadata().parent_session.has_value();
        for (const auto& issue : report.issues) {
            const bool pairing = issue.kind == IssueKind::orphan_tool_result ||
                                 issue.kind == IssueKind::context_orphan_tool_result;
            if (forked && issue.kind == IssueKind::label_target_missing) continue;
            if (!pairing)
                failure_ = "verify: " + std::string(to_string(issue.kind)) + " " + issue.detail;
            else if (late_.count(issue.entry_id) == 0 &&
                     late_calls_.count(quoted_call(issue.detail)) == 0)
                failure_ = "verify: an on-time tool result lost its call: " + issue.entry_id + " " +
                           std::string(to_string(issue.kind)) + " " + issue.detail;
        }
    }

    std::mt19937_64 rng_;
    InMemorySessionRepo repo_;
    InMemorySessionRepo::session_type session_;
    std::vector<std::string> pending_;
    std::set<std::string> late_;        // late results' entry ids
    std::set<std::string> late_calls_;  // their tool call ids (a retained tail copies the result)
    int next_call_ = 0;
    int compactions_ = 0;
    std::string failure_;
    std::string log_;
};

}  // namespace

TEST_CASE(
    "random sessions keep every tool result after its call, with at most one leading compaction "
    "summary",
    "[property][pairing]") {
    constexpr std::uint64_t sessions = sized(2000);
    constexpr int operations = 40;
    int compactions = 0;
    for (std::uint64_t seed = 1; seed <= sessions; ++seed) {
        RandomSession s(seed);
        s.run(operations);
        compactions += s.compactions();
        if (!s.failure().empty()) {
            INFO("seed " << seed << ": " << s.log());
            FAIL(s.failure());
        }
    }
    // The generator really compacts: a property over sessions that never compact proves little.
    CHECK(compactions > static_cast<int>(sessions));
    std::printf("reliability: pairing property: %llu sessions x %d operations, %d compactions\n",
                static_cast<unsigned long long>(sessions), operations, compactions);
}
