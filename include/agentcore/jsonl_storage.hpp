#pragma once
// 0.1's include path; the header is in its storage's folder now.

#include <agentcore/jsonl/jsonl_storage.hpp>
