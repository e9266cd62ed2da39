#pragma once
// The last mile to an LLM and back (includes only): convert_to_llm, the request builders and
// response parsers of OpenAI Chat Completions, OpenAI Responses and Anthropic Messages. The
// library builds JSON and reads replies; the application sends requests with its own HTTP
// client. Not part of session.hpp.

#include <agentcore/llm/anthropic.hpp>
#include <agentcore/llm/convert_to_llm.hpp>
#include <agentcore/llm/openai_chat.hpp>
#include <agentcore/llm/openai_responses.hpp>
#include <agentcore/llm/reply.hpp>
#include <agentcore/llm/request.hpp>
#include <agentcore/llm/sse.hpp>
#include <agentcore/llm/usage.hpp>
