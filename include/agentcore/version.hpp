#pragma once
// agentcore version, as numbers and as a string.

#define AGENTCORE_VERSION_MAJOR 0
#define AGENTCORE_VERSION_MINOR 1
#define AGENTCORE_VERSION_PATCH 0

namespace agentcore {

/// The library version as "major.minor.patch".
inline constexpr const char* version_string = "0.1.0";

}  // namespace agentcore
