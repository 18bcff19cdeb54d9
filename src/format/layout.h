// Names and sizes that define where a checkpoint's bytes live inside a tier:
// one directory per (checkpoint name, version), one part file, one manifest
// and any routed files per rank. docs/format.md documents the same layout.
// Thread-safety: pure functions.
#ifndef CAIRN_FORMAT_LAYOUT_H_
#define CAIRN_FORMAT_LAYOUT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"

namespace cairn {

// Of the manifest and the ECC sidecar; the part file has its own
// (kPartFormatVersion, format/part.h).
inline constexpr uint32_t kFormatVersion = 1;
// Every stored byte is covered by a CRC32C of a block of at most this size.
inline constexpr uint32_t kBlockSize = 64 * 1024;
// Large regions start at multiples of this in a part file (mmap- and
// O_DIRECT-friendly; format/part.h).
inline constexpr uint32_t kRegionAlign = 4096;
inline constexpr size_t kMaxNameLength = 128;

// Checkpoint names and routed-file names: 1..128 characters of [A-Za-z0-9._-],
// not starting with '.', so they can never leave their directory.
Status ValidateName(const std::string& what, const std::string& name);

// Every file of rank 3 in a version directory starts with "r000003.".
std::string RankFilePrefix(int rank);                        // "r000003."
std::string PartFileName(int rank);                          // "r000003.part"
std::string ManifestFileName(int rank);                      // "r000003.manifest"
std::string RoutedFileName(int rank, const std::string& logical);  // "r000003.f.<logical>"
// The rank whose file this is, if `name` starts with a rank's file-name prefix.
std::optional<int> ParseRankFilePrefix(const std::string& name);
// The rank whose manifest this is, if `name` is a manifest file name.
std::optional<int> ParseManifestFileName(const std::string& name);

inline uint64_t AlignUp(uint64_t n, uint64_t align) { return (n + align - 1) / align * align; }
inline uint64_t BlockCount(uint64_t length) { return (length + kBlockSize - 1) / kBlockSize; }

}  // namespace cairn

#endif  // CAIRN_FORMAT_LAYOUT_H_
