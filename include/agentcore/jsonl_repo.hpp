#pragma once
// 0.1's include path: the header is <agentcore/jsonl/jsonl_repo.hpp> now (a folder per storage).

#include <agentcore/jsonl/jsonl_repo.hpp>
