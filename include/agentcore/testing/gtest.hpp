#pragma once
// The GoogleTest adapter of agentcore/testing/fixtures.hpp (GoogleTest and GoogleMock 1.10+):
//   - printers for AgentMessage, MessageHandle, SessionTreeEntry, EntryHandle and SessionContext,
//     so that a failed EXPECT shows roles, ids and text as `agentcore tree` does instead of bytes
//     or a pointer;
//   - matchers for EXPECT_THAT / ASSERT_THAT:
//       RolesAre({"user", "assistant"})   a SessionContext whose messages have these roles
//       HoldsToolPair("ls")               a SessionContext holding a call of `ls` and its result
//       PassesThrough(id)                 a path (std::vector<EntryHandle>) holding that entry
//       MatchesGolden("name.txt")         a std::string equal to the golden file (check_golden)
//
// Link GTest::gmock (the matchers need GoogleMock). Include this header in every test file that
// prints these types: a printer that one translation unit sees and another does not makes two
// different definitions of the same GoogleTest template.
//
// Example:
//
//     #include <agentcore/testing/gtest.hpp>
//     using namespace agentcore::fixtures;
//
//     TEST(Agent, AnswersWithTheTool) {
//         auto fx = session_from("user: ls?\nassistant:\n-> ls\ntool ls: a.txt");
//         EXPECT_THAT(build_context(fx.session), HoldsToolPair("ls"));
//     }

#include <agentcore/testing/fixtures.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace agentcore {

// Found by GoogleTest through argument-dependent lookup; beat its generic pointer printers.
inline void PrintTo(const MessageHandle& message, std::ostream* os) {
    *os << (message ? fixtures::describe_message(*message) : std::string("(null message)"));
}
inline void PrintTo(const EntryHandle& entry, std::ostream* os) {
    *os << (entry ? fixtures::describe_entry(*entry) : std::string("(null entry)"));
}
inline void PrintTo(const SessionContext& context, std::ostream* os) {
    *os << fixtures::describe_context(context);
}

}  // namespace agentcore

// AgentMessage and SessionTreeEntry are std::variants, which GoogleTest prints with a printer
// class of its own instead of asking PrintTo: these specialisations of that class take over.
namespace testing::internal {

template <>
class UniversalPrinter<agentcore::AgentMessage> {
public:
    static void Print(const agentcore::AgentMessage& message, ::std::ostream* os) {
        *os << agentcore::fixtures::describe_message(message);
    }
};

template <>
class UniversalPrinter<agentcore::SessionTreeEntry> {
public:
    static void Print(const agentcore::SessionTreeEntry& entry, ::std::ostream* os) {
        *os << agentcore::fixtures::describe_entry(entry);
    }
};

}  // namespace testing::internal

namespace agentcore::fixtures {

// An inline namespace of its own: the Catch2 adapter's matchers have the same names.
inline namespace gtest_matchers {

/// Matches a SessionContext whose messages have exactly these roles, in order.
class RolesAreMatcher final : public ::testing::MatcherInterface<const SessionContext&> {
public:
    explicit RolesAreMatcher(std::vector<std::string> roles) : roles_(std::move(roles)) {}
    bool MatchAndExplain(const SessionContext& context,
                         ::testing::MatchResultListener* listener) const override {
        const auto roles = roles_of(context);
        *listener << "whose roles are " << bracketed(roles);
        return roles == roles_;
    }
    void DescribeTo(std::ostream* os) const override {
        *os << "has the roles " << bracketed(roles_);
    }
    void DescribeNegationTo(std::ostream* os) const override {
        *os << "does not have the roles " << bracketed(roles_);
    }

private:
    std::vector<std::string> roles_;
};

/// Matches a SessionContext that holds a call of tool `name` and, later, its result.
class HoldsToolPairMatcher final : public ::testing::MatcherInterface<const SessionContext&> {
public:
    explicit HoldsToolPairMatcher(std::string name) : name_(std::move(name)) {}
    bool MatchAndExplain(const SessionContext& context,
                         ::testing::MatchResultListener* listener) const override {
        *listener << "whose tool pairs are " << bracketed(tool_pair_names(context));
        return holds_tool_pair(context, name_);
    }
    void DescribeTo(std::ostream* os) const override {
        *os << "holds a call of tool '" << name_ << "' and its result";
    }
    void DescribeNegationTo(std::ostream* os) const override {
        *os << "does not hold a call of tool '" << name_ << "' with its result";
    }

private:
    std::string name_;
};

/// Matches a list of entries (a path, a branch) that holds the entry with this id.
class PassesThroughMatcher final
    : public ::testing::MatcherInterface<const std::vector<EntryHandle>&> {
public:
    explicit PassesThroughMatcher(std::string id) : id_(std::move(id)) {}
    bool MatchAndExplain(const std::vector<EntryHandle>& path,
                         ::testing::MatchResultListener* listener) const override {
        *listener << "whose ids are " << bracketed(ids_of(path));
        return passes_through(path, id_);
    }
    void DescribeTo(std::ostream* os) const override { *os << "passes through entry " << id_; }
    void DescribeNegationTo(std::ostream* os) const override {
        *os << "does not pass through entry " << id_;
    }

private:
    std::string id_;
};

/// Matches a text equal to the golden file (see check_golden: AGENTCORE_UPDATE_GOLDEN=1 writes
/// it). On a mismatch the explanation holds the line diff.
class MatchesGoldenMatcher final : public ::testing::MatcherInterface<const std::string&> {
public:
    explicit MatchesGoldenMatcher(std::string name) : name_(std::move(name)) {}
    bool MatchAndExplain(const std::string& actual,
                         ::testing::MatchResultListener* listener) const override {
        const GoldenResult result = check_golden(actual, name_);
        if (!result.matched) *listener << result.message;
        return result.matched;
    }
    void DescribeTo(std::ostream* os) const override {
        *os << "matches the golden file '" << golden_path(name_) << "'";
    }
    void DescribeNegationTo(std::ostream* os) const override {
        *os << "differs from the golden file '" << golden_path(name_) << "'";
    }

private:
    std::string name_;
};

inline ::testing::Matcher<const SessionContext&> RolesAre(std::vector<std::string> roles) {
    return ::testing::MakeMatcher(new RolesAreMatcher(std::move(roles)));
}
inline ::testing::Matcher<const SessionContext&> HoldsToolPair(std::string name) {
    return ::testing::MakeMatcher(new HoldsToolPairMatcher(std::move(name)));
}
inline ::testing::Matcher<const std::vector<EntryHandle>&> PassesThrough(std::string id) {
    return ::testing::MakeMatcher(new PassesThroughMatcher(std::move(id)));
}
inline ::testing::Matcher<const std::string&> MatchesGolden(std::string name) {
    return ::testing::MakeMatcher(new MatchesGoldenMatcher(std::move(name)));
}

}  // namespace gtest_matchers

}  // namespace agentcore::fixtures
