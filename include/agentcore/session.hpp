#pragma once
// agentcore: an AI agent's conversation as a tree of entries — stored, branched, forked,
// compacted, and turned into the context an application sends to its LLM.
//
// The umbrella header: includes only.

#include <agentcore/branch_summary.hpp>
#include <agentcore/compaction.hpp>
#include <agentcore/context.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/fork.hpp>
#include <agentcore/indexed_storage.hpp>
#include <agentcore/ids.hpp>
#include <agentcore/json.hpp>
#include <agentcore/jsonl_repo.hpp>
#include <agentcore/jsonl_storage.hpp>
#include <agentcore/memory_repo.hpp>
#include <agentcore/memory_storage.hpp>
#include <agentcore/messages.hpp>
#include <agentcore/repo.hpp>
#include <agentcore/session_ops.hpp>
#include <agentcore/storage.hpp>
#include <agentcore/tokens.hpp>
#include <agentcore/tree_index.hpp>
#include <agentcore/verify.hpp>
#include <agentcore/version.hpp>
