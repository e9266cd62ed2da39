#pragma once
// 0.1's include path: the header is <agentcore/memory/memory_repo.hpp> now (a folder per storage).

#include <agentcore/memory/memory_repo.hpp>
