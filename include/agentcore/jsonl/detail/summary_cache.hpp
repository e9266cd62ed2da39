#pragma once
// The summary file of a JSONL repository's cwd folder: what a listing with summaries learnt of
// each session file (SessionSummary), so that the next listing reads again only the files that
// changed. `<folder>/.agentcore-summaries`, mode 0600, written to a temporary file and renamed.
//
// It is a cache, never the source of truth. A record is used only while its file is the one it
// was made from: the same device and inode, size and modification time, and the same last 4 KiB
// (a hash). Anything else — a file that grew, was cut, rewritten or replaced — is read again,
// and the record replaced. The whole file has a checksum: a torn, altered or foreign file is
// ignored and written anew. Records of files that are gone are dropped when the folder is next
// listed.
//
// Layout (integers in the machine's byte order, see detail/bytes.hpp): magic "acsumry1", a
// byte-order word, the record count, the records (file name, device, inode, size, mtime in ns,
// tail hash, entry count, message count, the three token sums, cost, name flag and name, last
// activity), and a hash of everything before it.

#include <agentcore/detail/atomic_file.hpp>
#include <agentcore/detail/bytes.hpp>
#include <agentcore/detail/file_ops.hpp>
#include <agentcore/repo.hpp>

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentcore::detail {

/// What ties a summary to the bytes of the file it was made from.
struct ListedFile {
    std::uint64_t device = 0;
    std::uint64_t inode = 0;
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
    std::uint64_t tail_hash = 0;  ///< hash_bytes of the last summary_tail_bytes bytes

    bool operator==(const ListedFile&) const = default;
};

/// How many bytes at a file's end its ListedFile hashes.
inline constexpr std::size_t summary_tail_bytes = 4096;

/// The ListedFile of the open file `fd` (`path` names it in errors).
template <class = void>
ListedFile listed_file(const FileOps& ops, int fd, const std::string& path) {
    struct stat st {};
    if (ops.fstat(fd, &st) != 0) throw io_error("stat of", path, errno);
    ListedFile out;
    out.device = static_cast<std::uint64_t>(st.st_dev);
    out.inode = static_cast<std::uint64_t>(st.st_ino);
    out.size = static_cast<std::uint64_t>(st.st_size);
    out.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 +
                   static_cast<std::int64_t>(st.st_mtim.tv_nsec);
    const auto tail =
        static_cast<std::size_t>(std::min<std::uint64_t>(out.size, summary_tail_bytes));
    char buf[summary_tail_bytes];
    if (const int err = pread_all(ops, fd, buf, tail, out.size - tail))
        throw io_error("reading", path, err);
    out.tail_hash = hash_bytes(std::string_view(buf, tail));
    return out;
}

/// The summary records of one cwd folder (see the top of this header). A template only so that
/// its members compile in the programs that list with summaries; use SummaryCache.
template <class = void>
class BasicSummaryCache {
public:
    static constexpr std::string_view file_name = ".agentcore-summaries";

    /// The cache of `folder`: empty when it has none, or one that cannot be read or trusted.
    static BasicSummaryCache load(const FileOps& ops, const std::string& folder) {
        BasicSummaryCache cache;
        try {
            const std::string path = folder + "/" + std::string(file_name);
            const FileHandle fd = open_regular_file(ops, path, O_RDONLY, "summary file");
            if (!fd) return cache;
            const std::uint64_t size = file_size(ops, fd.get(), path);
            if (size < magic.size() + 8 || size > (std::uint64_t{1} << 30)) return cache;
            std::string bytes(static_cast<std::size_t>(size), '\0');
            if (pread_all(ops, fd.get(), bytes.data(), bytes.size(), 0) != 0) return cache;
            cache.parse(bytes);
        } catch (...) {
            cache.records_.clear();  // not readable, not a regular file: written anew
        }
        return cache;
    }

    /// The summary recorded for the file `name` while it is still `file`; null otherwise.
    [[nodiscard]] const SessionSummary* find(std::string_view name, const ListedFile& file) const {
        const auto it = records_.find(name);
        return it != records_.end() && it->second.file == file ? &it->second.summary : nullptr;
    }

    /// Records (or replaces) the summary of the file `name`.
    void put(std::string name, const ListedFile& file, SessionSummary summary) {
        records_.insert_or_assign(std::move(name), Record{file, std::move(summary)});
        changed_ = true;
    }

    /// Drops the records of files not in `names` (the folder's session files now; sorted here).
    void keep_only(std::vector<std::string>& names) {
        std::sort(names.begin(), names.end());
        for (auto it = records_.begin(); it != records_.end();) {
            if (!std::binary_search(names.begin(), names.end(), it->first)) {
                it = records_.erase(it);
                changed_ = true;
            } else {
                ++it;
            }
        }
    }

    [[nodiscard]] bool changed() const noexcept { return changed_; }
    [[nodiscard]] std::size_t size() const noexcept { return records_.size(); }

    /// Writes the cache into `folder` when it changed (best effort: a listing that cannot
    /// write it has lost nothing but the next listing's head start).
    void save(const FileOps& ops, const std::string& folder) const noexcept {
        if (!changed_) return;
        try {
            std::string out(magic);
            ByteWriter w(out);
            w.put(byte_order);
            w.put(static_cast<std::uint64_t>(records_.size()));
            for (const auto& [name, record] : records_) {
                w.put_string(name);
                const ListedFile& f = record.file;
                w.put(f.device);
                w.put(f.inode);
                w.put(f.size);
                w.put(f.mtime_ns);
                w.put(f.tail_hash);
                const SessionSummary& s = record.summary;
                w.put(static_cast<std::uint64_t>(s.entry_count));
                w.put(static_cast<std::uint64_t>(s.stats.message_count));
                w.put(s.stats.cached_tokens);
                w.put(s.stats.uncached_tokens);
                w.put(s.stats.total_tokens);
                w.put(s.stats.cost_total);
                w.put(static_cast<std::uint8_t>(s.name ? 1 : 0));
                w.put_string(s.name ? std::string_view(*s.name) : std::string_view());
                w.put_string(s.last_activity);
            }
            w.put(hash_bytes(out));
            TempFile temp(ops, folder + "/" + std::string(file_name));
            temp.write(out);
            temp.publish(true);
        } catch (...) {
        }
    }

private:
    struct Record {
        ListedFile file;
        SessionSummary summary;
    };

    static constexpr std::string_view magic = "acsumry1";
    static constexpr std::uint32_t byte_order = 0x01020304;

    // Takes every record of `bytes`, or none when anything in it does not check.
    void parse(std::string_view bytes) {
        if (bytes.substr(0, magic.size()) != magic) return;
        std::uint64_t body_hash = 0;
        ByteReader trailer(bytes.substr(bytes.size() - 8));
        if (!trailer.get(body_hash) || hash_bytes(bytes.substr(0, bytes.size() - 8)) != body_hash)
            return;
        ByteReader in(bytes.substr(magic.size(), bytes.size() - 8 - magic.size()));
        std::uint32_t order = 0;
        std::uint64_t count = 0;
        if (!in.get(order) || order != byte_order || !in.get(count)) return;
        std::map<std::string, Record, std::less<>> records;
        for (std::uint64_t i = 0; i < count; ++i) {
            std::string_view name, session_name, last_activity;
            Record r;
            std::uint64_t entries = 0, messages = 0;
            std::uint8_t named = 0;
            if (!in.get_string(name) || !in.get(r.file.device) || !in.get(r.file.inode) ||
                !in.get(r.file.size) || !in.get(r.file.mtime_ns) || !in.get(r.file.tail_hash) ||
                !in.get(entries) || !in.get(messages) || !in.get(r.summary.stats.cached_tokens) ||
                !in.get(r.summary.stats.uncached_tokens) || !in.get(r.summary.stats.total_tokens) ||
                !in.get(r.summary.stats.cost_total) || !in.get(named) || named > 1 ||
                !in.get_string(session_name) || !in.get_string(last_activity))
                return;
            r.summary.entry_count = static_cast<std::size_t>(entries);
            r.summary.stats.message_count = static_cast<std::size_t>(messages);
            if (named != 0) r.summary.name = std::string(session_name);
            r.summary.last_activity = std::string(last_activity);
            records.insert_or_assign(std::string(name), std::move(r));
        }
        if (in.left() != 0) return;
        records_ = std::move(records);
    }

    std::map<std::string, Record, std::less<>> records_;
    bool changed_ = false;
};

using SummaryCache = BasicSummaryCache<>;

}  // namespace agentcore::detail
