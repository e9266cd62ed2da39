#pragma once
// The JSON value type of the API.
//
// An insertion-ordered JSON keeps the key order of every field the model does not know (details,
// tool arguments, provider extras), so that reading a file and writing it again gives the same
// bytes. Values of plain nlohmann::json convert to it implicitly.

#include <nlohmann/json.hpp>

namespace agentcore {

/// JSON value used for free-form fields (details, data, tool arguments, unknown fields).
using Json = nlohmann::ordered_json;

/// The two spellings of the JSONL format (SPEC §3).
enum class Dialect {
    native,  ///< snake_case, the default for new files
    pi,      ///< the camelCase files of the pi coding agent
};

namespace detail {

/// a == b for two JSON values. Spelled as a call so that a template comparing values of a
/// known type defers the look-up of `==` to its instantiation: that look-up weighs every
/// `operator==` of the namespaces std and nlohmann against basic_json's conversion operator,
/// a noticeable part of a translation unit's compile time, paid where no comparison runs.
template <class J>
bool json_equal(const J& a, const J& b) {
    return a == b;
}

}  // namespace detail

}  // namespace agentcore
