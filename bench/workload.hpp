#pragma once
// A deterministic, seeded workload: realistic agent sessions as a sequence of operations applied
// to a Session<S> through the public API, so that the same workload runs on every storage.
//
// A session is a series of turns: a user prompt (50–500 characters); assistant steps with
// thinking, text and 1–3 tool calls (read/write/edit/bash), each answered by a tool result of
// 200 B–20 KB (log-normal; about 1 % of them 20–200 KB); a final assistant answer. Between turns:
// occasional model and thinking-level changes, labels and a session name; a compaction when the
// estimated context (characters / 4 since the last compaction) passes the threshold; a branch
// (move_to a turn or two back, with a branch summary) every ~200 entries.
//
// The PRNG and the samplers are our own (splitmix64 + xoshiro256**, Box–Muller) rather than
// <random>'s distributions, whose output differs between standard libraries: the same seed must
// give the same session everywhere.

#include <agentcore/session.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace agentcore_bench {

using namespace agentcore;

// ---------------------------------------------------------------------------------------------
// Randomness

/// xoshiro256** seeded through splitmix64.
class Rng {
public:
    explicit Rng(std::uint64_t seed) {
        for (auto& s : state_) s = splitmix64(seed);
    }

    std::uint64_t next() noexcept {
        const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
        const std::uint64_t t = state_[1] << 17;
        state_[2] ^= state_[0];
        state_[3] ^= state_[1];
        state_[1] ^= state_[2];
        state_[0] ^= state_[3];
        state_[2] ^= t;
        state_[3] = rotl(state_[3], 45);
        return result;
    }

    /// Uniform in [0, 1).
    double uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

    /// Uniform in [0, n) (n > 0).
    std::size_t below(std::size_t n) noexcept {
        return static_cast<std::size_t>(next() % static_cast<std::uint64_t>(n));
    }

    /// Uniform in [lo, hi].
    std::int64_t between(std::int64_t lo, std::int64_t hi) noexcept {
        return lo + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(hi - lo + 1));
    }

    bool chance(double p) noexcept { return uniform() < p; }

    /// Standard normal (Box–Muller).
    double normal() noexcept {
        const double u1 = 1.0 - uniform();  // (0, 1]
        const double u2 = uniform();
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    }

    /// Log-normal with the given median and shape, truncated to [lo, hi] (drawn again when
    /// outside, so that no lump of values gathers at the bounds).
    std::size_t log_normal(double median, double sigma, double lo, double hi) noexcept {
        double v = median * std::exp(sigma * normal());
        for (int tries = 0; tries < 16 && (v < lo || v > hi); ++tries)
            v = median * std::exp(sigma * normal());
        return static_cast<std::size_t>(std::clamp(v, lo, hi));
    }

    /// Log-uniform in [lo, hi].
    std::size_t log_uniform(double lo, double hi) noexcept {
        return static_cast<std::size_t>(lo * std::exp(uniform() * std::log(hi / lo)));
    }

private:
    static std::uint64_t splitmix64(std::uint64_t& x) noexcept {
        std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    static std::uint64_t rotl(std::uint64_t x, int k) noexcept {
        return (x << k) | (x >> (64 - k));
    }

    std::uint64_t state_[4]{};
};

// ---------------------------------------------------------------------------------------------
// Text that looks like text

/// Prose, code, logs and paths built from a small vocabulary.
class TextMaker {
public:
    explicit TextMaker(Rng& rng) : rng_(rng) {}

    std::string_view word() noexcept { return words()[rng_.below(words().size())]; }

    /// Sentences of prose, about `n` characters, with a paragraph break now and then.
    std::string prose(std::size_t n) {
        std::string out;
        out.reserve(n + 16);
        bool start = true;
        std::size_t in_sentence = 0;
        while (out.size() < n) {
            std::string_view w = word();
            if (!out.empty() && out.back() != '\n') out.push_back(' ');
            const std::size_t at = out.size();
            out.append(w);
            if (start) out[at] = static_cast<char>(out[at] - ('a' - 'A'));
            start = false;
            if (++in_sentence >= 6 && rng_.chance(0.18)) {
                out.push_back(rng_.chance(0.1) ? ':' : '.');
                in_sentence = 0;
                start = true;
                if (rng_.chance(0.12)) {
                    out.append("\n\n");
                    start = true;
                    continue;
                }
            } else if (rng_.chance(0.05)) {
                out.push_back(',');
            }
        }
        while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
        if (!out.empty() && out.back() != '.') out.push_back('.');
        return out;
    }

    /// Source code lines, about `n` characters.
    std::string code(std::size_t n) {
        std::string out;
        out.reserve(n + 96);
        int depth = 0;
        while (out.size() < n) {
            out.append(static_cast<std::size_t>(4 * depth), ' ');
            switch (rng_.below(8)) {
                case 0:
                    out.append("const ")
                        .append(word())
                        .append("_")
                        .append(word())
                        .append(" = ")
                        .append(word())
                        .append("(")
                        .append(word())
                        .append(", ")
                        .append(word())
                        .append(");\n");
                    break;
                case 1:
                    out.append("if (")
                        .append(word())
                        .append(".")
                        .append(word())
                        .append("()) return ")
                        .append(word())
                        .append(";\n");
                    break;
                case 2: out.append("// ").append(prose(30 + rng_.below(50))).append("\n"); break;
                case 3:
                    if (depth < 4) {
                        out.append("for (const auto& ")
                            .append(word())
                            .append(" : ")
                            .append(word())
                            .append("s) {\n");
                        ++depth;
                    }
                    break;
                case 4:
                    if (depth > 0) {
                        --depth;
                        out.resize(out.size() - 4);
                        out.append("}\n");
                    }
                    break;
                case 5:
                    out.append("export function ")
                        .append(word())
                        .append(word().substr(0, 1))
                        .append("(")
                        .append(word())
                        .append(": string): number {\n");
                    ++depth;
                    break;
                default:
                    out.append(word())
                        .append(".")
                        .append(word())
                        .append("(\"")
                        .append(word())
                        .append("\", ")
                        .append(std::to_string(rng_.below(1000)))
                        .append(");\n");
            }
        }
        return out;
    }

    /// Command output: log lines, test results.
    std::string log(std::size_t n) {
        std::string out;
        out.reserve(n + 96);
        while (out.size() < n) {
            switch (rng_.below(4)) {
                case 0:
                    out.append("PASS tests/")
                        .append(word())
                        .append("_")
                        .append(word())
                        .append(".test.ts (")
                        .append(std::to_string(rng_.below(900) + 3))
                        .append(" ms)\n");
                    break;
                case 1:
                    out.append("[")
                        .append(std::to_string(rng_.below(100000)))
                        .append("] INFO ")
                        .append(word())
                        .append(": ")
                        .append(prose(20 + rng_.below(60)))
                        .append("\n");
                    break;
                case 2:
                    out.append(path())
                        .append(":")
                        .append(std::to_string(rng_.below(800) + 1))
                        .append(":")
                        .append(std::to_string(rng_.below(80) + 1))
                        .append(" warning: ")
                        .append(prose(30 + rng_.below(40)))
                        .append("\n");
                    break;
                default:
                    out.append("  ")
                        .append(word())
                        .append(" ")
                        .append(word())
                        .append(" ")
                        .append(std::to_string(rng_.below(100)))
                        .append("%\n");
            }
        }
        return out;
    }

    /// A source file path.
    std::string path() {
        std::string p = "src/";
        p.append(word()).append("/").append(word()).append("_").append(word());
        static constexpr std::string_view ext[] = {".ts", ".cpp", ".hpp", ".py", ".md", ".json"};
        p.append(ext[rng_.below(std::size(ext))]);
        return p;
    }

    /// `n` characters of base64-looking text (signatures).
    std::string base64(std::size_t n) {
        static constexpr char alphabet[] =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        std::string out(n, 'A');
        for (auto& c : out) c = alphabet[rng_.below(64)];
        return out;
    }

private:
    static const std::vector<std::string_view>& words() {
        static const std::vector<std::string_view> list = {
            "the",        "a",        "to",        "of",       "and",      "in",        "is",
            "it",         "that",     "for",       "this",     "with",     "on",        "we",
            "be",         "not",      "as",        "file",     "function", "test",      "error",
            "value",      "return",   "session",   "entry",    "branch",   "context",   "message",
            "tool",       "result",   "call",      "path",     "build",    "check",     "update",
            "change",     "add",      "remove",    "fix",      "use",      "read",      "write",
            "edit",       "run",      "output",    "input",    "config",   "option",    "parser",
            "token",      "model",    "state",     "leaf",     "tree",     "node",      "parent",
            "child",      "index",    "cache",     "buffer",   "stream",   "line",      "json",
            "string",     "number",   "array",     "object",   "type",     "field",     "handler",
            "request",    "response", "server",    "client",   "user",     "assistant", "summary",
            "compaction", "storage",  "memory",    "disk",     "sync",     "lock",      "queue",
            "worker",     "task",     "should",    "would",    "could",    "will",      "can",
            "need",       "now",      "then",      "next",     "first",    "after",     "before",
            "because",    "so",       "but",       "if",       "when",     "where",     "which",
            "also",       "here",     "there",     "all",      "each",     "every",     "some",
            "new",        "old",      "current",   "previous", "missing",  "empty",     "invalid",
            "valid",      "failing",  "passing",   "slow",     "fast",     "correct",   "wrong",
            "simple",     "small",    "large",     "looks",    "seems",    "means",     "works",
            "fails",      "returns",  "calls",     "reads",    "writes",   "keeps",     "makes",
            "takes",      "gives",    "let",       "me",       "look",     "at",        "how",
            "what",       "why",      "see",       "test",     "suite",    "case",      "module",
            "import",     "export",   "class",     "method",   "loop",     "count",     "size",
            "limit",      "offset",   "range",     "start",    "end",      "time",      "date",
            "id",         "name",     "label",     "flag",     "mode",     "level",     "default",
            "timeout",    "retry",    "log",       "debug",    "trace",    "warning",   "layout",
            "render",     "view",     "component", "props",    "route",    "query",     "schema",
            "migration",  "database", "table",     "column",   "row",      "key",       "map",
            "set",        "list"};
        return list;
    }

    Rng& rng_;
};

// ---------------------------------------------------------------------------------------------
// Operations

/// A message appended at the leaf.
struct MessageOp {
    AgentMessage message;
};
struct ModelChangeOp {
    std::string provider;
    std::string model_id;
};
struct ThinkingLevelOp {
    std::string level;
};
struct ActiveToolsOp {
    std::vector<std::string> names;
};
/// A label on the entry made by operation `target_op`.
struct LabelOp {
    std::size_t target_op = 0;
    std::string label;
};
struct SessionNameOp {
    std::string name;
};
/// A compaction whose first kept entry is the one made by operation `first_kept_op`.
struct CompactionOp {
    std::string summary;
    std::size_t first_kept_op = 0;
    std::int64_t tokens_before = 0;
    Json details;
    Usage usage;
};
/// move_to the entry made by operation `target_op`, with a branch summary (two entries: the
/// leaf entry and the branch summary).
struct BranchOp {
    std::size_t target_op = 0;
    BranchSummaryInput summary;
};

using Op = std::variant<MessageOp, ModelChangeOp, ThinkingLevelOp, ActiveToolsOp, LabelOp,
                        SessionNameOp, CompactionOp, BranchOp>;

/// How many entries an operation appends.
inline std::size_t entries_of(const Op& op) noexcept {
    return std::holds_alternative<BranchOp>(op) ? 2 : 1;
}

// ---------------------------------------------------------------------------------------------
// The generator

struct WorkloadOptions {
    std::size_t entries = 100000;  ///< exactly this many entries are appended
    std::uint64_t seed = 1;
    std::int64_t start_ms = 1767225600000;    ///< 2026-01-01T00:00:00Z
    std::int64_t step_ms = 1500;              ///< clock advance per entry
    std::int64_t compact_at_tokens = 160000;  ///< 0: never compact
    std::int64_t keep_recent_tokens = 20000;  ///< first kept entry about this far back
    std::size_t branch_every = 200;           ///< entries between branches (jittered); 0: never
    double tool_result_median = 1330;         ///< bytes; log-normal, truncated to 200 B–20 KB
    double tool_result_sigma = 1.1;
    double huge_tool_result_share = 0.01;  ///< share of results of 20–200 KB
    std::string cwd = "/home/dev/projects/agentcore";
};

/// The session of a benchmark's command line: `--entries N` (100,000 by default, at least 10)
/// and `--seed S`; none, after a message on stderr, when N is too small. `Args` is
/// bench_util.hpp's.
template <class Args>
std::optional<WorkloadOptions> workload_options_from(const Args& args) {
    WorkloadOptions options;
    options.entries = args.number("--entries", 100000);
    options.seed = args.number("--seed", 1);
    if (options.entries < 10) {
        std::cerr << "error: --entries must be at least 10\n";
        return std::nullopt;
    }
    return options;
}

/// The environment (clock, ids) that makes a storage deterministic for a workload.
inline Environment workload_environment(const WorkloadOptions& options) {
    return Environment::deterministic(options.start_ms, options.seed ^ 0x5eed5eed5eed5eedULL,
                                      options.step_ms);
}

/// A session header for a workload (its id a UUIDv7 from the workload's clock and seed).
inline SessionHeader workload_header(const WorkloadOptions& options) {
    Environment env = Environment::deterministic(options.start_ms - 1000, options.seed, 1);
    SessionHeader header;
    header.id = make_uuid_v7(env);
    header.timestamp = format_timestamp(options.start_ms - 1000);
    header.cwd = options.cwd;
    return header;
}

/// Produces the operations of one session, one at a time, deterministically from the seed.
class WorkloadGenerator {
public:
    explicit WorkloadGenerator(WorkloadOptions options)
        : options_(std::move(options)), rng_(options_.seed), text_(rng_) {
        next_branch_at_ = jittered_branch_gap();
    }

    /// True when every entry of the workload has been handed out.
    [[nodiscard]] bool done() {
        fill();
        return queue_.empty();
    }

    /// The next operation (call only while !done()).
    Op next() {
        fill();
        Op op = std::move(queue_.front());
        queue_.pop_front();
        return op;
    }

    [[nodiscard]] const WorkloadOptions& options() const noexcept { return options_; }

private:
    enum class Kind { user, assistant, tool_result, other };
    struct Node {
        std::size_t op;
        std::size_t chars;
        Kind kind;
        bool turn_end;  // the last entry of a turn: a good place to branch back to
    };
    struct Model {
        const char* api;
        const char* provider;
        const char* id;
        double in, out, cache_read, cache_write;  // dollars per million tokens
    };
    static constexpr Model models_[] = {
        {"anthropic-messages", "anthropic", "claude-sonnet-4-5", 3.0, 15.0, 0.30, 3.75},
        {"openai-responses", "openai", "gpt-5", 1.25, 10.0, 0.125, 0.0},
        {"google-generative-ai", "google", "gemini-2.5-pro", 1.25, 10.0, 0.31, 0.0},
    };
    static constexpr const char* levels_[] = {"off", "minimal", "low", "medium", "high"};

    [[nodiscard]] std::size_t remaining() const noexcept { return options_.entries - generated_; }

    std::size_t jittered_branch_gap() {
        if (options_.branch_every == 0) return static_cast<std::size_t>(-1);
        const auto b = static_cast<std::int64_t>(options_.branch_every);
        return static_cast<std::size_t>(rng_.between(b - b / 4, b + b / 4));
    }

    std::int64_t now() const noexcept {
        return options_.start_ms + static_cast<std::int64_t>(generated_) * options_.step_ms;
    }

    // Queues an operation; returns its index, or none when the workload is complete.
    std::optional<std::size_t> push(Op op, Kind kind, std::size_t chars, bool on_path = true) {
        const std::size_t n = entries_of(op);
        if (remaining() < n) return std::nullopt;
        generated_ += n;
        queue_.push_back(std::move(op));
        const std::size_t index = ops_++;
        if (on_path) {
            path_.push_back(Node{index, chars, kind, false});
            context_chars_ += chars;
        }
        return index;
    }

    void fill() {
        while (queue_.empty() && remaining() > 0) turn();
    }

    Usage usage_for(std::int64_t input, std::int64_t output, std::int64_t cache_read,
                    std::int64_t cache_write) const {
        const Model& m = models_[model_];
        Usage u;
        u.input = input;
        u.output = output;
        u.cache_read = cache_read;
        u.cache_write = cache_write;
        u.total_tokens = input + output + cache_read + cache_write;
        u.cost.input = static_cast<double>(input) * m.in / 1e6;
        u.cost.output = static_cast<double>(output) * m.out / 1e6;
        u.cost.cache_read = static_cast<double>(cache_read) * m.cache_read / 1e6;
        u.cost.cache_write = static_cast<double>(cache_write) * m.cache_write / 1e6;
        u.cost.total = u.cost.input + u.cost.output + u.cost.cache_read + u.cost.cache_write;
        return u;
    }

    std::string tool_call_id() {
        static constexpr char alnum[] =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        std::string id = models_[model_].provider[0] == 'a' ? "toolu_01" : "call_";
        for (int i = 0; i < 22; ++i) id.push_back(alnum[rng_.below(62)]);
        return id;
    }

    std::size_t tool_result_size() {
        if (rng_.chance(options_.huge_tool_result_share)) return rng_.log_uniform(20000, 200000);
        return rng_.log_normal(options_.tool_result_median, options_.tool_result_sigma, 200, 20000);
    }

    // One turn: settings now and then, maybe a branch or a compaction, then a prompt, the
    // assistant's tool-using steps and its answer.
    void turn() {
        if (turns_ == 0) {
            push(ModelChangeOp{models_[model_].provider, models_[model_].id}, Kind::other, 0);
            push(ThinkingLevelOp{levels_[level_]}, Kind::other, 0);
            push(ActiveToolsOp{{"read", "write", "edit", "bash"}}, Kind::other, 0);
        }
        if (turns_ > 0 && rng_.chance(1.0 / 60)) {
            model_ = (model_ + 1 + rng_.below(std::size(models_) - 1)) % std::size(models_);
            push(ModelChangeOp{models_[model_].provider, models_[model_].id}, Kind::other, 0);
        }
        if (turns_ > 0 && rng_.chance(1.0 / 80)) {
            level_ = rng_.below(std::size(levels_));
            push(ThinkingLevelOp{levels_[level_]}, Kind::other, 0);
        }
        if (generated_ >= next_branch_at_) branch();
        if (options_.compact_at_tokens > 0 &&
            static_cast<std::int64_t>(context_chars_ / 4) > options_.compact_at_tokens)
            compact();

        const std::size_t prompt_chars = static_cast<std::size_t>(rng_.between(50, 500));
        std::string prompt = text_.prose(prompt_chars);
        const std::size_t prompt_len = prompt.size();
        Content content;
        if (rng_.chance(0.1))
            content = std::vector<ContentBlock>{TextContent{std::move(prompt), {}}};
        else
            content = std::move(prompt);
        auto prompt_op =
            push(MessageOp{UserMessage{std::move(content), now(), {}}}, Kind::user, prompt_len);
        if (!prompt_op) return;
        if (turns_ == 0 || rng_.chance(1.0 / 500))
            push(SessionNameOp{text_.prose(static_cast<std::size_t>(rng_.between(15, 50)))},
                 Kind::other, 0);

        const std::size_t steps = rng_.log_normal(3.0, 0.7, 1, 25);
        for (std::size_t step = 0; step < steps && remaining() > 0; ++step) {
            const bool last = step + 1 == steps;
            assistant_step(last ? 0 : 1 + rng_.below(3));
        }
        if (!path_.empty()) path_.back().turn_end = true;
        if (rng_.chance(0.05))
            push(LabelOp{*prompt_op, "checkpoint-" + std::to_string(turns_)}, Kind::other, 0);
        ++turns_;
    }

    void assistant_step(std::size_t calls) {
        const Model& m = models_[model_];
        AssistantMessage a;
        a.api = m.api;
        a.provider = m.provider;
        a.model = m.id;
        std::size_t chars = 0;
        if (level_ != 0 || rng_.chance(0.3)) {
            ThinkingContent t{text_.prose(rng_.log_normal(500, 0.7, 80, 4000)), {}};
            chars += t.thinking.size();
            if (m.provider[0] == 'a')
                t.extra = Json{{"thinkingSignature",
                                text_.base64(static_cast<std::size_t>(rng_.between(75, 175)) * 4)}};
            a.content.emplace_back(std::move(t));
        }
        if (calls == 0 || rng_.chance(0.5)) {
            TextContent t{text_.prose(calls == 0 ? rng_.log_normal(500, 0.8, 40, 6000)
                                                 : rng_.log_normal(120, 0.6, 20, 600)),
                          {}};
            chars += t.text.size();
            a.content.emplace_back(std::move(t));
        }
        static constexpr const char* tools[] = {"read", "bash", "edit", "write"};
        std::vector<std::pair<std::string, std::string>> pending;  // id, tool name
        for (std::size_t c = 0; c < calls; ++c) {
            const std::size_t pick = rng_.below(10);
            const char* tool = tools[pick < 4 ? 0 : pick < 7 ? 1 : pick < 9 ? 2 : 3];
            ToolCallContent call;
            call.id = tool_call_id();
            call.name = tool;
            const std::string path = text_.path();
            if (call.name == "read") {
                call.arguments = Json{{"path", path}};
                if (rng_.chance(0.3)) call.arguments["offset"] = rng_.below(400) + 1;
            } else if (call.name == "bash") {
                call.arguments =
                    Json{{"command", "npm test -- " + path + " 2>&1 | tail -n 80"}, {"path", path}};
            } else if (call.name == "edit") {
                call.arguments = Json{{"path", path},
                                      {"oldText", text_.code(rng_.log_normal(200, 0.8, 20, 3000))},
                                      {"newText", text_.code(rng_.log_normal(240, 0.8, 20, 3000))}};
            } else {
                call.arguments =
                    Json{{"path", path},
                         {"content", text_.code(rng_.log_normal(1500, 0.9, 100, 20000))}};
            }
            chars += call.arguments.dump().size();
            pending.emplace_back(call.id, call.name);
            a.content.emplace_back(std::move(call));
        }
        a.stop_reason = calls > 0 ? "tool_use" : "stop";
        a.timestamp = now();
        const auto context_tokens = static_cast<std::int64_t>(context_chars_ / 4);
        const auto fresh = static_cast<std::int64_t>(since_assistant_chars_ / 4);
        a.usage = usage_for(rng_.between(3, 20), static_cast<std::int64_t>(chars / 4) + 20,
                            std::max<std::int64_t>(0, context_tokens - fresh), fresh);
        since_assistant_chars_ = chars;
        if (!push(MessageOp{std::move(a)}, Kind::assistant, chars)) return;

        for (auto& [id, name] : pending) {
            const std::size_t size = tool_result_size();
            ToolResultMessage r;
            r.tool_call_id = std::move(id);
            r.tool_name = name;
            r.content.emplace_back(TextContent{name == "bash"   ? text_.log(size)
                                               : name == "read" ? text_.code(size)
                                                                : text_.prose(size),
                                               {}});
            r.is_error = rng_.chance(0.03);
            r.timestamp = now();
            since_assistant_chars_ += size;
            if (!push(MessageOp{std::move(r)}, Kind::tool_result, size)) return;
        }
    }

    // move_to the end of a turn one or two turns back, with a branch summary.
    void branch() {
        next_branch_at_ = generated_ + jittered_branch_gap();
        if (remaining() < 2) return;
        std::vector<std::size_t> ends;  // indexes into path_
        for (std::size_t i = path_.size(); i-- > 0 && ends.size() < 3;)
            if (path_[i].turn_end) ends.push_back(i);
        if (ends.size() < 2) return;
        const std::size_t at = ends[1 + rng_.below(ends.size() - 1)];
        BranchSummaryInput summary;
        summary.summary = text_.prose(rng_.log_normal(600, 0.6, 100, 4000));
        summary.details = Json{{"readFiles", Json::array({text_.path(), text_.path()})},
                               {"modifiedFiles", Json::array({text_.path()})}};
        summary.usage = usage_for(static_cast<std::int64_t>(context_chars_ / 16),
                                  static_cast<std::int64_t>(summary.summary.size() / 4), 0, 0);
        const std::size_t chars = summary.summary.size();
        const std::size_t target = path_[at].op;
        path_.resize(at + 1);
        context_chars_ = 0;
        for (const auto& n : path_) context_chars_ += n.chars;
        since_assistant_chars_ = 0;
        push(BranchOp{target, std::move(summary)}, Kind::other, chars);
        path_.back().turn_end = true;
    }

    // Replace the history before ~keep_recent_tokens with a summary.
    void compact() {
        const auto keep_chars = static_cast<std::size_t>(options_.keep_recent_tokens * 4);
        if (path_.empty()) return;
        std::size_t kept = 0;
        std::size_t i = path_.size();
        while (i > 0 && kept < keep_chars) kept += path_[--i].chars;
        while (i > 0 && path_[i].kind != Kind::user && path_[i].kind != Kind::assistant) --i;
        if (i == 0 && path_[0].kind != Kind::user && path_[0].kind != Kind::assistant) return;
        CompactionOp c;
        c.summary = "## Goal\n" + text_.prose(rng_.log_normal(400, 0.4, 100, 2000)) +
                    "\n\n## Progress\n" + text_.prose(rng_.log_normal(2500, 0.4, 500, 10000)) +
                    "\n\n## Next steps\n" + text_.prose(rng_.log_normal(500, 0.4, 100, 2000));
        c.first_kept_op = path_[i].op;
        c.tokens_before = static_cast<std::int64_t>(context_chars_ / 4);
        Json read = Json::array(), modified = Json::array();
        for (int k = 0; k < 8; ++k) read.push_back(text_.path());
        for (int k = 0; k < 4; ++k) modified.push_back(text_.path());
        c.details = Json{{"readFiles", std::move(read)}, {"modifiedFiles", std::move(modified)}};
        c.usage = usage_for(c.tokens_before, static_cast<std::int64_t>(c.summary.size() / 4), 0, 0);
        const std::size_t chars = c.summary.size();
        std::vector<Node> tail(path_.begin() + static_cast<std::ptrdiff_t>(i), path_.end());
        if (remaining() < 1) return;
        path_ = std::move(tail);
        context_chars_ = 0;
        for (const auto& n : path_) context_chars_ += n.chars;
        push(std::move(c), Kind::other, chars);
        path_.back().turn_end = true;
    }

    WorkloadOptions options_;
    Rng rng_;
    TextMaker text_;
    std::deque<Op> queue_;
    std::size_t generated_ = 0;  // entries queued so far
    std::size_t ops_ = 0;        // operations queued so far
    std::size_t turns_ = 0;
    std::size_t model_ = 0;
    std::size_t level_ = 2;
    std::size_t next_branch_at_ = 0;
    std::vector<Node> path_;         // the current branch since the governing compaction
    std::size_t context_chars_ = 0;  // characters on path_
    std::size_t since_assistant_chars_ = 0;
};

/// All operations of a workload, generated up front (to time the appends alone).
inline std::vector<Op> generate_workload(const WorkloadOptions& options) {
    WorkloadGenerator gen(options);
    std::vector<Op> ops;
    while (!gen.done()) ops.push_back(gen.next());
    return ops;
}

// ---------------------------------------------------------------------------------------------
// Applying operations to a session

/// Applies operations, in order, to a session through the public API; remembers the id each
/// operation produced so that later operations can name earlier entries.
template <SessionStorage S>
class WorkloadRunner {
public:
    explicit WorkloadRunner(Session<S>& session) : session_(session) {}

    void apply(Op op) {
        std::string id = std::visit([&](auto&& o) { return run(std::move(o)); }, std::move(op));
        ids_.push_back(std::move(id));
    }

    /// The id of the entry operation `op` produced (for a branch: its branch summary).
    [[nodiscard]] const std::string& id_of_op(std::size_t op) const { return ids_.at(op); }
    [[nodiscard]] std::size_t op_count() const noexcept { return ids_.size(); }

private:
    std::string run(MessageOp&& o) { return append_message(session_, std::move(o.message)); }
    std::string run(ModelChangeOp&& o) {
        return append_model_change(session_, std::move(o.provider), std::move(o.model_id));
    }
    std::string run(ThinkingLevelOp&& o) {
        return append_thinking_level_change(session_, std::move(o.level));
    }
    std::string run(ActiveToolsOp&& o) {
        return append_active_tools_change(session_, std::move(o.names));
    }
    std::string run(LabelOp&& o) {
        return append_label(session_, ids_.at(o.target_op), std::move(o.label));
    }
    std::string run(SessionNameOp&& o) { return append_session_name(session_, o.name); }
    std::string run(CompactionOp&& o) {
        return append_compaction(session_, std::move(o.summary), ids_.at(o.first_kept_op),
                                 o.tokens_before, std::move(o.details), false, std::move(o.usage));
    }
    std::string run(BranchOp&& o) {
        return move_to(session_, ids_.at(o.target_op), std::move(o.summary))
            .value_or(std::string{});
    }

    Session<S>& session_;
    std::vector<std::string> ids_;
};

/// Generates and applies a whole workload, one operation at a time (no up-front copy).
template <SessionStorage S>
void run_workload(Session<S>& session, const WorkloadOptions& options) {
    WorkloadGenerator gen(options);
    WorkloadRunner<S> runner(session);
    while (!gen.done()) runner.apply(gen.next());
}

/// An in-memory session holding a generated workload.
inline Session<InMemorySessionStorage<>> make_memory_session(const WorkloadOptions& options) {
    Session<InMemorySessionStorage<>> session(
        InMemorySessionStorage<>(workload_header(options), workload_environment(options)));
    run_workload(session, options);
    return session;
}

// ---------------------------------------------------------------------------------------------
// Many small sessions (for listing)

/// The options of small session `index` (of a set made from `seed`): 80–120 entries, a few
/// working directories, one session started every ~20 minutes.
inline WorkloadOptions small_session_options(std::uint64_t seed, std::size_t index) {
    Rng rng(seed * 0x9e3779b97f4a7c15ULL + index);
    static constexpr const char* cwds[] = {"/home/dev/projects/agentcore",
                                           "/home/dev/projects/web-app", "/home/dev/projects/infra",
                                           "/home/dev/notes", "/srv/build/ci-runner"};
    WorkloadOptions o;
    o.entries = static_cast<std::size_t>(rng.between(80, 120));
    o.seed = rng.next();
    o.start_ms =
        1767225600000 + static_cast<std::int64_t>(index) * 1200000 + rng.between(0, 600000);
    o.cwd = cwds[rng.below(std::size(cwds))];
    return o;
}

/// Calls `sink(options, session)` for each of `count` small in-memory sessions.
template <class Sink>
void for_each_small_session(std::size_t count, std::uint64_t seed, Sink&& sink) {
    for (std::size_t i = 0; i < count; ++i) {
        const WorkloadOptions o = small_session_options(seed, i);
        auto session = make_memory_session(o);
        sink(o, session);
    }
}

}  // namespace agentcore_bench
