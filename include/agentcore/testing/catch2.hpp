#pragma once
// The Catch2 adapter of agentcore/testing/fixtures.hpp (Catch2 2.13 and Catch2 3):
//   - Catch::StringMaker for AgentMessage, MessageHandle, SessionTreeEntry, EntryHandle and
//     SessionContext, so that a failed CHECK shows roles, ids and text as `agentcore tree` does
//     instead of "{?}";
//   - matchers for CHECK_THAT / REQUIRE_THAT:
//       RolesAre({"user", "assistant"})   a SessionContext whose messages have these roles
//       HoldsToolPair("ls")               a SessionContext holding a call of `ls` and its result
//       PassesThrough(id)                 a path (std::vector<EntryHandle>) holding that entry
//       MatchesGolden("name.txt")         a std::string equal to the golden file (check_golden)
//
// Include it instead of Catch2's own header (it brings in Catch2 itself), in every test file
// that prints these types: a StringMaker that one translation unit sees and another does not
// makes two different definitions of the same Catch2 template. Needs Catch2 in the include path;
// the core library does not.
//
// Example:
//
//     #include <agentcore/testing/catch2.hpp>
//     using namespace agentcore::fixtures;
//
//     TEST_CASE("the branch holds the tool pair") {
//         auto fx = session_from("user: ls?\nassistant:\n-> ls\ntool ls: a.txt");
//         CHECK_THAT(build_context(fx.session), HoldsToolPair("ls"));
//     }

#include <agentcore/testing/fixtures.hpp>

#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_tostring.hpp>
#include <catch2/matchers/catch_matchers.hpp>
#define AGENTCORE_FIXTURES_CATCH2_3 1
#else
#include <catch2/catch.hpp>
#endif

#include <string>
#include <utility>
#include <vector>

namespace Catch {

template <>
struct StringMaker<agentcore::AgentMessage> {
    static std::string convert(const agentcore::AgentMessage& message) {
        return agentcore::fixtures::describe_message(message);
    }
};

template <>
struct StringMaker<agentcore::MessageHandle> {
    static std::string convert(const agentcore::MessageHandle& message) {
        return message ? agentcore::fixtures::describe_message(*message)
                       : std::string("(null message)");
    }
};

template <>
struct StringMaker<agentcore::SessionTreeEntry> {
    static std::string convert(const agentcore::SessionTreeEntry& entry) {
        return agentcore::fixtures::describe_entry(entry);
    }
};

template <>
struct StringMaker<agentcore::EntryHandle> {
    static std::string convert(const agentcore::EntryHandle& entry) {
        return entry ? agentcore::fixtures::describe_entry(*entry) : std::string("(null entry)");
    }
};

template <>
struct StringMaker<agentcore::SessionContext> {
    static std::string convert(const agentcore::SessionContext& context) {
        return agentcore::fixtures::describe_context(context);
    }
};

}  // namespace Catch

namespace agentcore::fixtures {

// An inline namespace of its own: the GoogleTest adapter's matchers have the same names.
inline namespace catch2_matchers {

namespace detail {
#ifdef AGENTCORE_FIXTURES_CATCH2_3
template <class T>
using MatcherBase = Catch::Matchers::MatcherBase<T>;
#else
template <class T>
using MatcherBase = Catch::MatcherBase<T>;
#endif
}  // namespace detail

/// Matches a SessionContext whose messages have exactly these roles, in order.
class RolesAreMatcher final : public detail::MatcherBase<SessionContext> {
public:
    explicit RolesAreMatcher(std::vector<std::string> roles) : roles_(std::move(roles)) {}
    bool match(const SessionContext& context) const override {
        actual_ = roles_of(context);
        return actual_ == roles_;
    }
    std::string describe() const override {
        return "has the roles " + bracketed(roles_) + " (its roles: " + bracketed(actual_) + ")";
    }

private:
    std::vector<std::string> roles_;
    mutable std::vector<std::string> actual_;
};

/// Matches a SessionContext that holds a call of tool `name` and, later, its result.
class HoldsToolPairMatcher final : public detail::MatcherBase<SessionContext> {
public:
    explicit HoldsToolPairMatcher(std::string name) : name_(std::move(name)) {}
    bool match(const SessionContext& context) const override {
        pairs_ = tool_pair_names(context);
        return holds_tool_pair(context, name_);
    }
    std::string describe() const override {
        return "holds a call of tool '" + name_ +
               "' and its result (its pairs: " + bracketed(pairs_) + ")";
    }

private:
    std::string name_;
    mutable std::vector<std::string> pairs_;
};

/// Matches a list of entries (a path, a branch) that holds the entry with this id.
class PassesThroughMatcher final : public detail::MatcherBase<std::vector<EntryHandle>> {
public:
    explicit PassesThroughMatcher(std::string id) : id_(std::move(id)) {}
    bool match(const std::vector<EntryHandle>& path) const override {
        return passes_through(path, id_);
    }
    std::string describe() const override { return "passes through entry " + id_; }

private:
    std::string id_;
};

/// Matches a text equal to the golden file (see check_golden: AGENTCORE_UPDATE_GOLDEN=1 writes
/// it). On a mismatch the description holds the line diff.
class MatchesGoldenMatcher final : public detail::MatcherBase<std::string> {
public:
    explicit MatchesGoldenMatcher(std::string name) : name_(std::move(name)) {}
    bool match(const std::string& actual) const override {
        result_ = check_golden(actual, name_);
        return result_.matched;
    }
    std::string describe() const override {
        return result_.matched ? "matches the golden file '" + result_.path + "'"
                               : "matches the golden file: " + result_.message;
    }

private:
    std::string name_;
    mutable GoldenResult result_;
};

inline RolesAreMatcher RolesAre(std::vector<std::string> roles) {
    return RolesAreMatcher(std::move(roles));
}
inline HoldsToolPairMatcher HoldsToolPair(std::string name) {
    return HoldsToolPairMatcher(std::move(name));
}
inline PassesThroughMatcher PassesThrough(std::string id) {
    return PassesThroughMatcher(std::move(id));
}
inline MatchesGoldenMatcher MatchesGolden(std::string name) {
    return MatchesGoldenMatcher(std::move(name));
}

}  // namespace catch2_matchers

}  // namespace agentcore::fixtures
