#pragma once
// Assertions on the library's errors: the code a call throws, or its message.

#include "support/catch.hpp"

#include <agentcore/error.hpp>

#include <string>

namespace agentcore::testing {

/// The code of the SessionError that `f` throws; fails the test when it throws none.
template <class F>
ErrorCode error_of(F&& f) {
    try {
        f();
    } catch (const SessionError& e) {
        return e.code();
    }
    FAIL("expected a SessionError");
    return ErrorCode::storage;
}

/// The what() of the SessionError that `f` throws; fails the test when it throws none.
template <class F>
std::string message_of_error(F&& f) {
    try {
        f();
    } catch (const SessionError& e) {
        return e.what();
    }
    FAIL("expected a SessionError");
    return {};
}

}  // namespace agentcore::testing
