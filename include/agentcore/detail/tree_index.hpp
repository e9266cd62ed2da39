#pragma once
// The tree index is public now: agentcore/tree_index.hpp. This header keeps 0.1's include path.

#include <agentcore/tree_index.hpp>
