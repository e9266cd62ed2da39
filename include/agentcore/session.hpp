#pragma once
// agentcore: an AI agent's conversation as a tree of entries — stored, branched, forked,
// compacted, and turned into the context an application sends to its LLM.
//
// The umbrella header: includes only. It includes every public header of the core (they need
// nothing but nlohmann/json and the C++ and POSIX headers), so that one include serves the
// README's examples. Left out, each included on its own where used: <agentcore/llm.hpp> (request
// bodies and reply parsers of LLM providers, a layer above the sessions), the database storages
// (<agentcore/sqlite/...>, <agentcore/postgres/...>: they need SQLite and libpq) and the test
// fixtures (<agentcore/testing/...>).
//
// The folders show the layers: the data model, codec, concepts, session operations and search
// at the top level; a folder per storage (memory/, jsonl/, sqlite/, postgres/) with its storage,
// repository and internals; llm/ above the sessions; testing/ for applications' tests; detail/
// for internals several layers share. 0.1's paths (<agentcore/jsonl_storage.hpp>, ...) still
// work: they include the header from its folder.
//
// Compile time: most functions of the library are function templates with an unused parameter,
// `template <class = void>`, although none needs one. A template's body is compiled only in a
// program that calls it; an inline function's body is compiled in every translation unit that
// includes its header, along with every template it uses (visits of the entry and message
// variants, nlohmann/json conversions), whether called or not. bench/compile_time.py measures what
// including this header costs beside nlohmann/json alone. Calls are written as before; only taking
// such a function's address needs the empty argument list: `&f<>` (`&C::f<>` for a member).
// Inside such templates, clang still compiles what an expression of known types names (the
// constexpr members of std::vector, std::optional and std::variant in C++20); so the heavier
// bodies take their entries, messages and JSON values through the template parameter — a
// parameter type `detail::dependent<SessionTreeEntry, T>` (the same type, deduced from nothing,
// so calls and conversions are as before), locals declared the same way, or a parameter
// defaulted to the type itself, `template <class Entry = SessionTreeEntry>` — and compare JSON
// values through detail::json_equal. Default member initializers spell an empty JSON object
// `Json(Json::value_t::object)`: Json::object() would make every translation unit compile the
// initializer-list constructor of the ordered JSON. Classes whose member functions use their
// members (the tree index, the JSONL storage) are class templates used through an alias
// (`using TreeIndex = BasicTreeIndex<>`), with the members' types named through the parameter.
// <thread>, <mutex>, <atomic> and <random> are not included (detail/threads.hpp, ids.hpp).

#include <agentcore/any_repo.hpp>
#include <agentcore/branch_summary.hpp>
#include <agentcore/codec.hpp>
#include <agentcore/compaction.hpp>
#include <agentcore/context.hpp>
#include <agentcore/convert.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/fork.hpp>
#include <agentcore/ids.hpp>
#include <agentcore/indexed_storage.hpp>
#include <agentcore/json.hpp>
#include <agentcore/jsonl/jsonl_repo.hpp>
#include <agentcore/jsonl/jsonl_storage.hpp>
#include <agentcore/memory/memory_repo.hpp>
#include <agentcore/memory/memory_storage.hpp>
#include <agentcore/messages.hpp>
#include <agentcore/pi_migrate.hpp>
#include <agentcore/repo.hpp>
#include <agentcore/search.hpp>
#include <agentcore/session_ops.hpp>
#include <agentcore/storage.hpp>
#include <agentcore/tokens.hpp>
#include <agentcore/tree_index.hpp>
#include <agentcore/verify.hpp>
#include <agentcore/version.hpp>
