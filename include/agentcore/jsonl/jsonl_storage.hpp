#pragma once
// JsonlSessionStorage: a session kept in one JSONL file (SPEC §3, §6).
//
// Opening does not decode payloads. The file is mapped (a read-only open maps only the part no
// writer can cut any more and reads its last lines, see uncuttable_prefix), its lines are found
// with memchr, each line's JSON syntax and UTF-8 are checked by a hand-written scanner that also
// returns the raw text of `type`, `id`, the parent id and the usage fields, and the codec's field
// rules are checked on the raw text (codec_check.hpp), so that a line the open accepts always
// decodes later; only labels, session_info and leaf entries (which change the bookkeeping) are
// decoded at open. Every other entry is decoded by the codec when it is first read; it stays
// decoded while a handle to it lives, and the newest decoded entries stay cached up to a budget of
// line bytes (decoded_cache_bytes).
//
// Appends write one complete line (and by default fdatasync it) before anything in memory
// changes; a failed write is cut away again, a failed sync poisons the storage.
//
// Not thread-safe: one storage is used by one thread at a time (reads too: they fill a cache).

#include <agentcore/codec.hpp>
#include <agentcore/detail/atomic_file.hpp>
#include <agentcore/detail/bytes.hpp>
#include <agentcore/detail/codec_batch.hpp>
#include <agentcore/detail/codec_check.hpp>
#include <agentcore/detail/file_lock.hpp>
#include <agentcore/detail/file_ops.hpp>
#include <agentcore/detail/json_scan.hpp>
#include <agentcore/detail/line_index.hpp>
#include <agentcore/detail/threads.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/ids.hpp>
#include <agentcore/indexed_storage.hpp>
#include <agentcore/json.hpp>
#include <agentcore/storage.hpp>
#include <agentcore/tree_index.hpp>

#include <fcntl.h>
#include <sys/stat.h>

#include <agentcore/detail/chrono.hpp>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace agentcore {

/// When an append counts as safe (SPEC §6).
enum class Durability {
    durable,      ///< fdatasync after each append: acknowledged entries survive power loss
    os_buffered,  ///< left to the OS: acknowledged entries survive a crash of the process only
};

/// How a JSONL storage opens and writes its file.
struct JsonlStorageOptions {
    Durability durability = Durability::durable;
    /// How long a writing open waits for another writer to let go (zero: fail at once, `locked`).
    std::chrono::milliseconds lock_wait{0};
    /// Skip bad interior lines (and entries that break the tree) instead of failing the open;
    /// they are reported by problems().
    bool lenient = false;
    /// The dialect of new files; an existing file keeps its own.
    Dialect dialect = Dialect::native;
    /// Clock and randomness (entry ids, timestamps, quarantine names).
    Environment environment = Environment::system();
    /// The file operations to use; null: the real system calls. Tests inject faults here.
    const detail::FileOps* file_ops = nullptr;
    /// How much line text (in bytes) of entries decoded on read stays decoded after the last
    /// handle to it is gone, so that rebuilding a context does not decode its path again. The
    /// oldest decoded entries are let go first. Zero: keep only what handles keep alive.
    std::size_t decoded_cache_bytes = std::size_t{64} << 20;
    /// Keep a resume index beside the file (`<path>.index`, 0600): what an open learnt from the
    /// file's lines (the position, id and state of every entry, labels, name, leaf, stats), so
    /// that the next open of an unchanged file reads the index instead of the lines. It is a
    /// cache, never the source of truth: used only while the file still holds the bytes it
    /// covers (same header, same last 64 KiB up to where it ends), extended with the lines
    /// appended since (by this library or by pi; those are validated as always), rebuilt when
    /// it does not match. Writing opens write it (atomically: a temporary file renamed); read-only
    /// opens use it without writing. Lenient opens and repairs ignore it.
    bool resume_index = false;
    /// How many threads an open scans the file's lines with (their syntax and the codec's field
    /// rules; the lines are still indexed in file order, and a bad line is reported as by one
    /// thread). Zero: as many as the machine runs at once, at most 8; one: the opening thread
    /// alone. Files under about 100 KiB are scanned by the opening thread alone.
    std::size_t open_threads = 0;
};

/// A line a lenient open (or a repair) skipped.
struct LineProblem {
    std::size_t line = 0;  ///< 1-based line number
    std::string reason;    ///< why, naming ids and columns, never the text
};

/// What repair did.
struct RepairReport {
    bool changed = false;                        ///< false: the file was clean, nothing written
    std::vector<LineProblem> problems;           ///< the lines dropped
    std::optional<std::string> backup_path;      ///< the original, kept beside the session
    std::optional<std::string> quarantine_path;  ///< the dropped bytes
    std::size_t entries_kept = 0;
};

/// A session storage over one JSONL file: IndexedStorage over the file's lines. Models
/// SessionStorage. Always used as JsonlSessionStorage: a class template only so that its code
/// compiles in the programs that use it.
///
/// Complexity: open O(file size) without decoding payloads; append O(line) plus one write (and
/// by default one fdatasync); get_entry O(1) plus the decode of that entry the first time;
/// path O(depth) decodes; stats, leaf, labels and name O(1).
template <class Tag = void>
class BasicJsonlSessionStorage : public IndexedStorage<BasicJsonlSessionStorage<Tag>> {
    using Base = IndexedStorage<BasicJsonlSessionStorage<Tag>>;
    friend Base;
    // A type named through Tag: what is done with it compiles only where the storage is used
    // (see detail/dependent.hpp).
    template <class X>
    using Dep = detail::dependent<X, Tag>;

public:
    /// Creates a new session file holding `header` (and `entries`, in order), written to a
    /// temporary file beside `path`, synced, moved into place without replacing anything, the
    /// folder synced; returns it opened for writing. In a pi file a `leaf` entry that no entry
    /// hangs under is placed under its target, as set_leaf_id writes it. An existing file:
    /// already_exists. Entries that do not form a tree (duplicate id, unknown parent):
    /// already_exists / invalid_entry, nothing created.
    static BasicJsonlSessionStorage create(std::string path, SessionHeader header,
                                           JsonlStorageOptions options = {},
                                           Dep<std::vector<SessionTreeEntry>> entries = {}) {
        return create(std::move(path), std::move(header), std::move(options), std::move(entries),
                      [] {});
    }

    /// The same, calling `before_publish()` once the content is written and synced, right
    /// before the file gets its name. A repository takes its lock there and checks that the
    /// session id is still free; whatever it throws abandons the create (nothing is left).
    template <class BeforePublish>
    static BasicJsonlSessionStorage create(std::string path, SessionHeader header,
                                           JsonlStorageOptions options,
                                           Dep<std::vector<SessionTreeEntry>> entries,
                                           BeforePublish&& before_publish) {
        BasicJsonlSessionStorage s(std::move(path), std::move(options), false);
        if (header.metadata.is_null()) header.metadata = Json::object();
        s.dialect_ = s.options_.dialect;
        std::string content = encode_header(header, s.dialect_);
        content.push_back('\n');
        if (s.dialect_ == Dialect::pi) {
            // As set_leaf_id writes them in a pi file: a `leaf` entry nothing hangs under goes
            // under its target, where pi (which continues from the last line) follows it.
            Dep<std::unordered_set<std::string>> parents;
            for (const auto& e : entries)
                if (const auto& parent = parent_id_of(e)) parents.insert(*parent);
            for (auto& e : entries)
                if (auto* leaf = std::get_if<LeafEntry>(&e); leaf && parents.count(leaf->id) == 0)
                    leaf->parent_id = leaf->target_id;
        }
        Dep<TreeIndex> check;
        Dep<std::vector<EntryHandle>> handles;
        handles.reserve(entries.size());
        // The temporary file is locked from its creation on, and the lock comes with it when it
        // gets its name: no other writer can get in between. Whatever fails before it is
        // published removes it.
        detail::TempFile temp(*s.ops_, s.path_);
        // A batch of entries at a time: encoded on several threads first (an entry that could
        // not be is encoded again after its tree check, which reports what is wrong in the order
        // of the entries), then checked and added to `content`, which goes to the file whenever
        // it holds a few MiB: memory holds a batch's lines, not the whole file's.
        constexpr std::size_t batch = 4096;
        constexpr std::size_t flush_bytes = std::size_t{4} << 20;
        for (std::size_t first = 0; first < entries.size(); first += batch) {
            const std::size_t last = std::min(entries.size(), first + batch);
            auto lines =
                detail::encode_lines(entries, first, last, s.dialect_, s.scan_helpers() + 1);
            for (std::size_t i = first; i < last; ++i) {
                auto& e = entries[i];
                check.check_append(e);
                auto& line = lines[i - first];
                content += line ? *line : encode_entry(e, s.dialect_);
                line.reset();
                content.push_back('\n');
                auto handle = std::make_shared<const SessionTreeEntry>(std::move(e));
                check.record(*handle);
                handles.push_back(std::move(handle));
                if (content.size() >= flush_bytes) {
                    temp.write(content);
                    content.clear();
                }
            }
        }
        temp.write(content);
        temp.sync();
        before_publish();
        s.fd_ = temp.publish(false);
        s.mutable_metadata() = std::move(header);
        s.file_size_ = temp.size();
        s.lines_ = 1;
        for (auto& handle : handles) {
            s.slots_.push_back(Slot{0, 0, ++s.lines_, {}, {}, handle});
            s.mutable_index().record(*handle);
        }
        return s;
    }

    /// Opens a session file for writing: takes the writer lock (`locked` when another writer
    /// holds it after `lock_wait`; not_found when the file was removed while this open waited
    /// for it; a file replaced meanwhile is opened again), cuts off a torn last line (its bytes
    /// copied to a quarantine file first), adds a missing final newline. A missing file: not_found;
    /// a bad header: invalid_session; a bad interior line: invalid_entry naming file and line
    /// (unless lenient).
    static BasicJsonlSessionStorage open(std::string path, JsonlStorageOptions options = {}) {
        BasicJsonlSessionStorage s(std::move(path), std::move(options), false);
        s.read_file();
        return s;
    }

    /// Opens a session file for reading: no lock, the file is never changed, a torn last line
    /// is ignored. Appends throw `storage`.
    static BasicJsonlSessionStorage open_read_only(std::string path,
                                                   JsonlStorageOptions options = {}) {
        BasicJsonlSessionStorage s(std::move(path), std::move(options), true);
        s.read_file();
        return s;
    }

    /// Rewrites a damaged session file cleanly (SPEC §6): takes the writer lock, drops bad
    /// lines, a torn tail and entries that break the tree (their bytes go to a quarantine file
    /// beside the session), keeps the original as `<path>.bak-<time>`, and moves the clean copy
    /// into place atomically. A clean file is left as it is. A file without a valid header:
    /// invalid_session. Temporary files that killed repairs of this file left beside it are
    /// removed (detail::sweep_temp_files).
    static RepairReport repair(const std::string& path, JsonlStorageOptions options = {}) {
        options.lenient = true;
        BasicJsonlSessionStorage s(path, std::move(options), false);
        Dep<RepairReport> report;
        std::string clean;
        std::string dropped;
        s.read_file(&clean, &dropped, &report);
        detail::sweep_temp_files(*s.ops_, detail::parent_folder(s.path_),
                                 detail::file_name(s.path_));
        return report;
    }

    BasicJsonlSessionStorage(BasicJsonlSessionStorage&&) noexcept = default;
    BasicJsonlSessionStorage& operator=(BasicJsonlSessionStorage&&) noexcept = default;
    BasicJsonlSessionStorage(const BasicJsonlSessionStorage&) = delete;
    BasicJsonlSessionStorage& operator=(const BasicJsonlSessionStorage&) = delete;
    ~BasicJsonlSessionStorage() = default;

    // -- SessionStorage ------------------------------------------------------------------------
    //
    // IndexedStorage implements the concept over the hooks below (persist, load): metadata,
    // environment, get_leaf_id, set_leaf_id, create_entry_id, append_entry, get_entry,
    // find_entries, get_label, get_session_name, get_path_to_root_or_compaction, get_entries,
    // get_session_stats, get_state_entries, entry_count.
    //
    // set_leaf_id: in a native file the `leaf` entry's parent is the previous leaf (SPEC §4.2).
    // In a pi file it is the target itself (none: a root): pi does not know `leaf` entries and
    // continues from a file's last line, so a `leaf` entry under the target leads pi down the
    // target's branch — its context is the target's, its next append a child on that branch —
    // and agentcore reads the move as it wrote it.
    //
    // append_entry writes one line (and syncs it when durable) before memory changes.
    // already_exists / invalid_entry as for every storage; `storage` when the file cannot be
    // written (the partial line is cut away, memory unchanged), when the storage is read-only,
    // poisoned by an earlier failed sync, or when its file no longer has a name (unlinked while
    // open: the entry is not acknowledged, and neither is any later one).
    //
    // get_state_entries: O(1) on the index, plus decoding those (at most three) entries.

    /// The text of the entry at `pos` (append order, from 0) as its line in the file holds it,
    /// undecoded; nullopt for an entry that is kept decoded (appended by this storage, or
    /// decoded at open) or past the end. Lets a reader look at the bytes before it decodes them.
    /// Throws `storage` when the file cannot be read.
    [[nodiscard]] std::optional<std::string> entry_line(std::size_t pos) const {
        if (pos >= slots_.size() || slots_[pos].pinned) return std::nullopt;
        const Slot& slot = slots_[pos];
        std::string text(static_cast<std::size_t>(slot.length), '\0');
        if (const int err =
                detail::pread_all(*ops_, fd_.get(), text.data(), text.size(), slot.offset))
            throw detail::io_error("reading line " + std::to_string(slot.line) + " of", path_, err);
        return text;
    }

    // -- The file ------------------------------------------------------------------------------

    [[nodiscard]] const std::string& path() const noexcept { return path_; }
    [[nodiscard]] Dialect dialect() const noexcept { return dialect_; }
    [[nodiscard]] bool read_only() const noexcept { return read_only_; }

    /// Ends writing while the storage (and every Session copy sharing it) stays readable: the
    /// writer lock is released at once, so another process may open the file for writing;
    /// appends then throw `storage`. Reads go on from what this storage indexed. Closing again,
    /// or closing a read-only storage, does nothing. Throws `storage` when the unlock fails (the
    /// storage is closed for writing all the same).
    void close() {
        if (read_only_ || closed_) return;
        closed_ = true;
        read_only_ = true;
        if (ops_->flock(fd_.get(), LOCK_UN) != 0) throw detail::io_error("unlocking", path_, errno);
    }
    /// True after close().
    [[nodiscard]] bool closed() const noexcept { return closed_; }
    /// True after a failed sync: appends throw `storage` until the file is opened again.
    [[nodiscard]] bool poisoned() const noexcept { return poisoned_; }
    /// The file's size as this storage knows it (what it read plus what it appended).
    [[nodiscard]] std::uint64_t file_size() const noexcept { return file_size_; }
    /// The lines a lenient open skipped (empty for a strict open).
    [[nodiscard]] const std::vector<LineProblem>& problems() const noexcept { return problems_; }
    /// Where the torn tail cut off by a writing open went, if there was one.
    [[nodiscard]] const std::optional<std::string>& quarantine_path() const noexcept {
        return quarantine_path_;
    }
    /// How many lines of the file the open took from the resume index instead of reading them
    /// (0: none; see JsonlStorageOptions::resume_index).
    [[nodiscard]] std::size_t resumed_lines() const noexcept { return resumed_lines_; }
    /// Where the resume index of the session file at `path` is kept.
    static std::string resume_index_path(const std::string& path) { return path + ".index"; }
    /// True when the file ended in a torn line (ignored when reading, cut off when writing).
    [[nodiscard]] bool had_torn_tail() const noexcept { return torn_tail_; }
    /// The open descriptor (for tests: close-on-exec, lock state).
    [[nodiscard]] int native_handle() const noexcept { return fd_.get(); }

private:
    struct Slot {
        std::uint64_t offset = 0;  ///< the line's text in the file (appended entries: unused)
        std::uint64_t length = 0;
        std::size_t line = 0;  ///< 1-based line number
        mutable std::weak_ptr<const SessionTreeEntry> cache;
        mutable EntryHandle held;  ///< kept by the decoded-entry cache (see decoded_cache_bytes)
        EntryHandle pinned;        ///< entries decoded at open or appended stay in memory
    };

    // Keeps a decoded entry alive within the cache's budget, letting go of the oldest first.
    void hold_decoded(std::size_t pos, const EntryHandle& handle) const {
        const std::size_t budget = options_.decoded_cache_bytes;
        const Slot& slot = slots_[pos];
        if (budget == 0 || slot.length > budget) return;
        slot.held = handle;
        held_order_.push_back(pos);
        held_bytes_ += static_cast<std::size_t>(slot.length);
        while (held_bytes_ > budget && !held_order_.empty()) {
            const Slot& old = slots_[held_order_.front()];
            held_order_.pop_front();
            held_bytes_ -= static_cast<std::size_t>(old.length);
            old.held.reset();
        }
    }

    BasicJsonlSessionStorage(std::string path, JsonlStorageOptions options, bool read_only)
        : Base(SessionHeader{}, options.environment),
          path_(std::move(path)),
          options_(std::move(options)),
          ops_(&detail::ops_or_real(options_.file_ops)),
          read_only_(read_only) {}

    // -- IndexedStorage's hooks ----------------------------------------------------------------

    void check_writable() const {
        if (closed_)
            throw SessionError(ErrorCode::storage,
                               "session file '" + path_ + "' was closed for writing");
        if (read_only_)
            throw SessionError(ErrorCode::storage,
                               "session file '" + path_ + "' is open read-only");
        if (removed_) throw removed_error();
        if (poisoned_)
            throw SessionError(
                ErrorCode::storage,
                "session file '" + path_ +
                    "' refuses appends after a failed sync; reopen it to see what is on disk");
    }

    [[nodiscard]] std::optional<std::string> leaf_parent(
        const std::optional<std::string>& target) const {
        return dialect_ == Dialect::pi ? target : this->get_leaf_id();
    }

    // Writes the entry's line (synced when durable); memory changes only once it is written.
    // IndexedStorage::append_entry has checked the entry's nesting.
    void persist(const EntryHandle& entry) {
        // Encoded into a buffer kept from one append to the next (one that grew past 1 MiB for a
        // large entry is given back afterwards).
        struct Release {
            std::string& buffer;
            ~Release() {
                if (buffer.capacity() > (std::size_t{1} << 20)) std::string().swap(buffer);
            }
        } release{line_buffer_};
        std::string& line = line_buffer_;
        line.clear();
        detail::encode_checked_entry_to(line, *entry, dialect_);
        line.push_back('\n');
        make_room();
        if (const int err = detail::pwrite_all(*ops_, fd_.get(), line, file_size_)) {
            cut_back();
            throw detail::io_error("appending to", path_, err);
        }
        if (options_.durability == Durability::durable) {
            if (const int err = detail::sync_file(*ops_, fd_.get(), true)) {
                poisoned_ = true;
                cut_back();
                throw detail::io_error("syncing (the storage now refuses appends)", path_, err);
            }
        }
        // Checked after the write: a file unlinked before or during it (by anything but
        // remove, which waits for the writer lock) would take the entry with it.
        struct stat st {};
        if (ops_->fstat(fd_.get(), &st) != 0) {
            const int err = errno;
            cut_back();
            throw detail::io_error("stat of", path_, err);
        }
        if (st.st_nlink == 0) {
            removed_ = true;
            throw removed_error();
        }
        file_size_ += line.size();
        slots_.push_back(Slot{0, 0, ++lines_, {}, {}, entry});
        last_line_bytes_ = line.size();
    }

    // The index could not record the newest entry (out of memory): its line is cut away again.
    void unpersist_last() noexcept {
        file_size_ -= last_line_bytes_;
        --lines_;
        slots_.pop_back();
        cut_back();
    }

    [[nodiscard]] EntryHandle load(std::size_t position) const { return materialise(position); }

    // The most bytes of consecutive lines load_range reads with one call.
    static constexpr std::uint64_t range_read_bytes = std::uint64_t{4} << 20;

    // load for positions first .. first + n - 1: the lines not kept decoded are read a run of
    // consecutive lines at a time (one pread for up to range_read_bytes) and decoded together,
    // on several threads for a large run. A line that cannot be read or decoded goes through
    // materialise, which reports it as load would.
    [[nodiscard]] std::vector<EntryHandle> load_range(std::size_t first, std::size_t n) const {
        std::vector<EntryHandle> out(n);
        std::size_t i = 0;
        while (i < n) {
            // A run: the next lines to read, while their bytes fit in one read.
            std::vector<std::size_t> run;
            std::uint64_t start = 0;
            for (; i < n; ++i) {
                const Slot& slot = slots_[first + i];
                if (EntryHandle kept = kept_entry(slot)) {
                    out[i] = std::move(kept);
                    continue;
                }
                if (run.empty()) {
                    start = slot.offset;
                } else if (slot.offset < start ||
                           slot.offset + slot.length - start > range_read_bytes) {
                    break;
                }
                run.push_back(i);
            }
            if (run.empty()) break;
            if (run.size() == 1) {
                out[run.front()] = materialise(first + run.front());
                continue;
            }
            const Slot& last = slots_[first + run.back()];
            std::string bytes;
            std::vector<std::string_view> lines;
            try {
                bytes.resize(static_cast<std::size_t>(last.offset + last.length - start));
                if (detail::pread_all(*ops_, fd_.get(), bytes.data(), bytes.size(), start) == 0) {
                    lines.reserve(run.size());
                    for (const std::size_t k : run) {
                        const Slot& slot = slots_[first + k];
                        lines.emplace_back(bytes.data() + (slot.offset - start),
                                           static_cast<std::size_t>(slot.length));
                    }
                }
            } catch (const std::bad_alloc&) {
                lines.clear();
            }
            // Nothing read (an error, or not enough memory for the run): line by line.
            auto decoded = lines.empty()
                               ? std::vector<EntryHandle>(run.size())
                               : detail::decode_lines(lines, dialect_, scan_helpers() + 1);
            for (std::size_t k = 0; k < run.size(); ++k) {
                const std::size_t pos = first + run[k];
                if (!decoded[k]) {
                    out[run[k]] = materialise(pos);
                    continue;
                }
                slots_[pos].cache = decoded[k];
                hold_decoded(pos, decoded[k]);
                out[run[k]] = std::move(decoded[k]);
            }
        }
        return out;
    }

    [[noreturn]] void fail_line(ErrorCode code, std::size_t line, std::string_view reason,
                                const ErrorLocation& inner = {}) const {
        throw SessionError(
            code, "'" + path_ + "' line " + std::to_string(line) + ": " + std::string(reason),
            inner.merged(ErrorLocation{.file = path_, .line = line}));
    }

    // The detail of a library error, without its "[agentcore.<code>] " prefix.
    static std::string detail_of(const SessionError& e) { return std::string(e.detail()); }

    // Cuts a failed append away again; when even that fails, the file's end is unknown and the
    // storage refuses further appends.
    void cut_back() noexcept {
        if (detail::truncate_file(*ops_, fd_.get(), file_size_) != 0) poisoned_ = true;
    }

    // The line's entry when it is in memory (pinned, held by the cache, or still alive
    // elsewhere); null when it must be read.
    static EntryHandle kept_entry(const Slot& slot) {
        if (slot.pinned) return slot.pinned;
        if (slot.held) return slot.held;
        return slot.cache.lock();
    }

    EntryHandle materialise(std::size_t pos) const {
        const Slot& slot = slots_[pos];
        if (EntryHandle kept = kept_entry(slot)) return kept;
        EntryHandle handle;
        try {
            std::string text(static_cast<std::size_t>(slot.length), '\0');
            if (const int err =
                    detail::pread_all(*ops_, fd_.get(), text.data(), text.size(), slot.offset))
                throw detail::io_error("reading line " + std::to_string(slot.line) + " of", path_,
                                       err);
            handle = std::make_shared<const SessionTreeEntry>(decode_entry(text, dialect_));
        } catch (const SessionError& e) {
            if (e.code() == ErrorCode::storage) throw;
            fail_line(e.code(), slot.line, detail_of(e), e.location());
        } catch (const std::bad_alloc&) {
            // A line too large for this process's memory: the file is fine, the reader is not.
            fail_line(
                ErrorCode::storage, slot.line,
                "not enough memory to read the entry (" + std::to_string(slot.length) + " bytes)");
        }
        slot.cache = handle;
        hold_decoded(pos, handle);
        return handle;
    }

    // What the open reads of one line before it touches the index: everything that depends on
    // the line alone (its syntax, the codec's field rules, its id, parent, type and usage; the
    // decoded entry of a bookkeeping line). It reads nothing but the line and the dialect, so
    // several threads scan the lines of a batch at once (BatchScan); record_line then adds
    // them to the index in file order.
    struct LineScan {
        bool blank = false;
        std::string reason;  ///< not empty: the line is not an entry, and why
        // Reasons the single-line open finds later than the ones before (after the parent's
        // check; the decode's after the duplicate id's), kept apart so that a line with two
        // faults is reported as it always was.
        std::string usage_reason, decode_reason;
        std::string_view type, id;
        std::optional<std::string_view> parent;
        std::string type_scratch, id_scratch, parent_scratch;  ///< unescaped values, if any
        bool bookkeeping = false;
        bool assistant = false;
        bool out_of_memory = false;  ///< decoding the bookkeeping entry ran out of memory
        Dep<std::optional<Usage>> usage;
        EntryHandle handle;        ///< a bookkeeping line's entry
        std::exception_ptr error;  ///< what scanning threw (rethrown when the line is recorded)
    };

    // Fills `out` (a fresh LineScan) for the line `text`. Never throws: what a scan on another
    // thread throws is kept in out.error.
    void scan_line(std::string_view text, LineScan& out) const noexcept {
        try {
            if (detail::blank_line(text)) {
                out.blank = true;
                return;
            }
            out.reason = scan_fields(text, out);
        } catch (...) {
            out.error = std::current_exception();
        }
    }

    // scan_line's work: returns the reason the line is not an entry, or an empty string.
    std::string scan_fields(std::string_view text, LineScan& out) const {
        detail::ScannedEntry scanned;
        std::string reason;
        // Where the line's long values end, found by the scan, so that the field check below
        // reads none of them again.
        detail::SkipMemo memo;
        if (!detail::JsonScanner::scan_entry(text, dialect_, scanned, reason, &memo)) return reason;
        if (scanned.type.empty()) return "field 'type': missing";
        if (!detail::JsonScanner::string_value(scanned.type, out.type_scratch, out.type))
            return "field 'type': expected a string";
        if (scanned.id.empty()) return "field 'id': missing";
        if (!detail::JsonScanner::string_value(scanned.id, out.id_scratch, out.id))
            return "field 'id': expected a string";
        if (out.id.empty()) return "field 'id': empty";
        const std::string_view type = out.type;
        out.bookkeeping = needs_decoding(type);
        std::string_view parent_raw = scanned.parent_id;
        if (!out.bookkeeping) {
            // The codec's field rules on the raw text: a line that opens decodes when it is read.
            try {
                const detail::CheckedEntry checked =
                    detail::check_entry_fields(text, type, dialect_, &memo);
                if (!checked.unknown_parent.empty()) parent_raw = checked.unknown_parent;
            } catch (const SessionError& e) {
                return detail_of(e);
            }
        }
        if (!parent_raw.empty() && parent_raw != "null") {
            std::string_view p;
            if (!detail::JsonScanner::string_value(parent_raw, out.parent_scratch, p))
                return "field '" + std::string(detail::keys::parent_id(dialect_)) +
                       "': expected a string or null";
            out.parent = p;
        }
        if (out.bookkeeping) {
            try {
                out.handle = std::make_shared<const SessionTreeEntry>(decode_entry(text, dialect_));
            } catch (const SessionError& e) {
                out.decode_reason = detail_of(e);
            } catch (const std::bad_alloc&) {
                out.out_of_memory = true;
            }
            return {};
        }
        std::string_view usage_raw;
        if (type == MessageEntry::type) {
            if (scanned.message_role == "\"assistant\"") usage_raw = scanned.message_usage;
        } else if (type == CompactionEntry::type || type == BranchSummaryEntry::type) {
            usage_raw = scanned.usage;
        }
        if (!usage_raw.empty() && usage_raw != "null") {
            try {
                out.usage = fast_usage(usage_raw);
                if (!out.usage)
                    out.usage = usage_from_json(
                        detail::parse_line(usage_raw, ErrorCode::invalid_entry, "usage"), dialect_);
            } catch (const SessionError& e) {
                out.usage_reason = detail_of(e);
                return {};
            }
        }
        std::string role_scratch;
        std::string_view role;
        out.assistant =
            type == MessageEntry::type && !scanned.message_role.empty() &&
            detail::JsonScanner::string_value(scanned.message_role, role_scratch, role) &&
            role == "assistant";
        return {};
    }

    // Adds a scanned line (not blank) to the index; returns an empty string when it was
    // recorded, else the reason it was not (and the index is unchanged).
    std::string record_line(LineScan& scan, std::uint64_t offset, std::size_t length,
                            std::size_t line_no) {
        if (scan.error) std::rethrow_exception(scan.error);
        if (!scan.reason.empty()) return std::move(scan.reason);
        const std::string_view id = scan.id;
        auto duplicate = [&] {
            return "entry id '" + detail::printable_id(id) + "' already appears on line " +
                   std::to_string(slots_[*this->index().position(id)].line);
        };
        if (scan.parent && !this->index().contains(*scan.parent))
            return "entry '" + detail::printable_id(id) + "' names parent '" +
                   detail::printable_id(*scan.parent) +
                   "', which does not appear on an earlier line";

        if (scan.bookkeeping) {
            if (this->index().contains(id)) return duplicate();
            if (!scan.decode_reason.empty()) return std::move(scan.decode_reason);
            if (scan.out_of_memory)
                fail_line(
                    ErrorCode::storage, line_no,
                    "not enough memory to read the entry (" + std::to_string(length) + " bytes)");
            const EntryHandle& handle = scan.handle;
            if (const auto* leaf = std::get_if<LeafEntry>(handle.get()))
                if (leaf->target_id && !this->index().contains(*leaf->target_id))
                    return "leaf entry '" + detail::printable_id(id) + "' targets '" +
                           detail::printable_id(*leaf->target_id) +
                           "', which does not appear on an earlier line";
            slots_.push_back(Slot{offset, length, line_no, {}, {}, handle});
            this->mutable_index().record(*handle);
            return {};
        }
        if (!scan.usage_reason.empty()) return std::move(scan.usage_reason);
        make_room();
        if (!this->mutable_index().record_undecoded(id, scan.type, scan.parent, scan.assistant,
                                                    scan.usage ? &*scan.usage : nullptr))
            return duplicate();
        slots_.push_back(Slot{offset, length, line_no, {}, {}, nullptr});
        return {};
    }

    // A batch of lines and their scans (scan_line), in file order.
    struct ScanBatch {
        Dep<std::vector<detail::LineSpan>> lines;
        Dep<std::vector<LineScan>> scans;
        std::size_t bytes = 0;
    };

    // How the open batches lines: the first batch is small, so that the next one is scanned
    // while it is recorded early on; each batch after it doubles, up to max_batch_bytes. A
    // batch holds at most max_batch_lines lines (their scans take ~250 bytes each).
    static constexpr std::size_t first_batch_bytes = std::size_t{256} << 10;
    static constexpr std::size_t max_batch_bytes = std::size_t{4} << 20;
    static constexpr std::size_t max_batch_lines = 16384;
    // Smaller batches are scanned by the opening thread alone: starting a thread would cost
    // about what scanning them does.
    static constexpr std::size_t min_parallel_bytes = std::size_t{96} << 10;
    // How many lines a thread takes at a time.
    static constexpr std::size_t scan_chunk_lines = 16;

    // Reads the next lines into `batch` (emptied first), up to `bytes` of them; false when the
    // file has no more lines.
    static bool fill_batch(detail::LineReader& reader, ScanBatch& batch, std::size_t bytes) {
        batch.lines.clear();
        batch.scans.clear();
        batch.bytes = 0;
        detail::LineSpan line;
        while (batch.bytes < bytes && batch.lines.size() < max_batch_lines && reader.next(line)) {
            batch.lines.push_back(line);
            batch.bytes += line.end - line.offset;
        }
        batch.scans.resize(batch.lines.size());
        return !batch.lines.empty();
    }

    // The work the threads scanning a batch share: chunks of lines, taken in turn.
    struct BatchScan {
        const BasicJsonlSessionStorage* storage;
        const detail::LineReader* reader;
        ScanBatch* batch;
        detail::SharedCounter<std::size_t> next{0};

        void operator()() noexcept {
            const std::size_t n = batch->lines.size();
            for (;;) {
                const std::size_t first = next.fetch_add(scan_chunk_lines);
                if (first >= n) return;
                const std::size_t last = std::min(n, first + scan_chunk_lines);
                for (std::size_t i = first; i < last; ++i)
                    storage->scan_line(reader->text(batch->lines[i]), batch->scans[i]);
            }
        }
    };

    // How many threads besides the opening one scan lines (JsonlStorageOptions::open_threads).
    std::size_t scan_helpers() const noexcept {
        const std::size_t wanted = options_.open_threads != 0
                                       ? options_.open_threads
                                       : std::min<std::size_t>(detail::online_cpus(), 8);
        return wanted - 1;
    }

    static std::size_t helpers_for(const ScanBatch& batch, std::size_t helpers) noexcept {
        return batch.bytes >= min_parallel_bytes ? helpers : 0;
    }

    // The counts the stats need, read straight from a usage object's text; none when a field
    // is not a plain number (the codec then reads it, and reports what is wrong).
    std::optional<Usage> fast_usage(std::string_view raw) const {
        Usage u;
        bool ok = raw.size() >= 2 && raw.front() == '{';
        auto integer = [&](std::string_view text, std::int64_t& out) {
            const auto r = std::from_chars(text.data(), text.data() + text.size(), out);
            if (r.ec != std::errc() || r.ptr != text.data() + text.size()) ok = false;
        };
        detail::JsonScanner::for_each_member(
            raw, [&](std::string_view key, std::string_view value) {
                if (key == "input")
                    integer(value, u.input);
                else if (key == "output")
                    integer(value, u.output);
                else if (key == detail::keys::cache_read(dialect_))
                    integer(value, u.cache_read);
                else if (key == detail::keys::cache_write(dialect_))
                    integer(value, u.cache_write);
                else if (key == "cost") {
                    if (value.empty() || value.front() != '{') {
                        ok = false;
                        return;
                    }
                    detail::JsonScanner::for_each_member(value, [&](std::string_view k,
                                                                    std::string_view v) {
                        if (k != "total") return;
                        const auto r = std::from_chars(v.data(), v.data() + v.size(), u.cost.total);
                        if (r.ec != std::errc() || r.ptr != v.data() + v.size()) ok = false;
                    });
                } else if (key.find('\\') != std::string_view::npos) {
                    ok = false;  // an escaped key: let the codec decide what it names
                }
            });
        if (!ok) return std::nullopt;
        return u;
    }

    // Grows the slots geometrically, so that the push_back after a write cannot throw.
    void make_room() {
        if (slots_.size() == slots_.capacity())
            slots_.reserve(std::max<std::size_t>(64, slots_.capacity() * 2));
    }

    // True when a line is one JSON object (a last line that is not is a torn tail).
    bool parses(std::string_view text) const {
        detail::ScannedEntry unused;
        std::string syntax;
        return detail::JsonScanner::scan_entry(text, dialect_, unused, syntax);
    }

    // How much of the file no writer can cut any more: everything before its last line and
    // before the run of non-blank lines that do not parse just before it. A writing open cuts
    // only a last line that is torn (unterminated or not JSON), and a failed append only its own
    // line, always the last; a lenient writer keeps a bad line, and once the line after it is cut
    // a later writing open cuts it in turn. The lines are read from the end with pread; a file
    // found shorter than `size` (cut meanwhile) gives 0: all of it is read, none mapped.
    std::uint64_t uncuttable_prefix(std::uint64_t size) const {
        constexpr std::uint64_t chunk = 64 << 10;
        std::string buffer;
        // Where the line ending at `end` starts; none when the file is shorter than `end`.
        auto line_start = [&](std::uint64_t end) -> std::optional<std::uint64_t> {
            std::uint64_t pos = end > 0 ? end - 1 : 0;  // before the line's own newline
            while (pos > 0) {
                const std::uint64_t from = pos > chunk ? pos - chunk : 0;
                buffer.resize(static_cast<std::size_t>(pos - from));
                if (detail::pread_all(*ops_, fd_.get(), buffer.data(), buffer.size(), from) != 0)
                    return std::nullopt;
                for (std::size_t i = buffer.size(); i > 0; --i)
                    if (buffer[i - 1] == '\n') return from + i;
                pos = from;
            }
            return std::uint64_t{0};
        };
        auto start = line_start(size);
        if (!start) return 0;
        std::uint64_t stable = *start;
        while (stable > 0) {
            const auto previous = line_start(stable);
            if (!previous) return 0;
            if (*previous == 0) return stable;  // the header: a file without one is never written
            std::string text(static_cast<std::size_t>(stable - *previous), '\0');
            if (detail::pread_all(*ops_, fd_.get(), text.data(), text.size(), *previous) != 0)
                return 0;
            text.pop_back();  // its newline
            if (!text.empty() && text.back() == '\r') text.pop_back();
            if (detail::blank_line(text) || parses(text)) return stable;
            stable = *previous;
        }
        return 0;
    }

    SessionError removed_error() const {
        return SessionError(ErrorCode::storage,
                            "session file '" + path_ +
                                "' was removed while open for writing; the entry is not stored");
    }

    // Opens the file and, for writing, takes its lock. A writing open then writes only to the
    // file that is at the path once it holds the lock: the one it opened may have been removed
    // meanwhile (not_found) or replaced by a repair (opened again).
    void open_and_lock() {
        for (int attempt = 0;; ++attempt) {
            fd_ = detail::open_regular_file(*ops_, path_, read_only_ ? O_RDONLY : O_RDWR,
                                            "session file");
            if (!fd_) {
                const int err = errno;
                if (err == ENOENT)
                    throw SessionError(ErrorCode::not_found,
                                       "session file '" + path_ + "' not found");
                if (err == ELOOP)
                    throw SessionError(ErrorCode::storage,
                                       "session file '" + path_ + "' is a symbolic link; refused");
                throw detail::io_error("opening", path_, err);
            }
            if (read_only_) return;
            detail::lock_exclusive(*ops_, fd_.get(), options_.lock_wait, path_);
            switch (detail::file_at_path(*ops_, fd_.get(), path_)) {
                case detail::FileAtPath::same: return;
                case detail::FileAtPath::gone:
                    throw SessionError(ErrorCode::not_found,
                                       "session file '" + path_ +
                                           "' was removed while waiting for its writer lock");
                case detail::FileAtPath::replaced:
                    if (attempt >= 100)
                        throw SessionError(ErrorCode::storage,
                                           "session file '" + path_ + "' keeps being replaced");
                    break;
            }
        }
    }

    // Opens and indexes the file. With `clean` (a repair), also collects the clean copy and the
    // dropped bytes and publishes them.
    void read_file(std::string* clean = nullptr, std::string* dropped = nullptr,
                   Dep<RepairReport>* report = nullptr) {
        open_and_lock();
        // Size after the lock: a writer that held it may have changed the file.
        const std::uint64_t size = detail::file_size(*ops_, fd_.get(), path_);
        if (size == 0)
            throw SessionError(ErrorCode::invalid_session, "session file '" + path_ + "' is empty");

        // A writer may cut the file's end while a read-only open reads it: that part is read,
        // never mapped (a page cut from under a mapping kills its reader with SIGBUS).
        const std::uint64_t mapped = read_only_ ? uncuttable_prefix(size) : size;
        detail::FileMapping mapping(*ops_, fd_.get(), static_cast<std::size_t>(size),
                                    static_cast<std::size_t>(mapped), path_);
        const std::string_view data = mapping.view();
        detail::LineReader reader(data);
        detail::LineSpan line;
        reader.next(line);
        const std::string_view header_text = reader.text(line);
        try {
            this->mutable_metadata() = decode_header(header_text, &dialect_);
        } catch (const SessionError& e) {
            fail_line(ErrorCode::invalid_session, 1, detail_of(e), e.location());
        }
        if (this->metadata().version != current_session_version)
            fail_line(ErrorCode::invalid_session, 1,
                      "session format version " + std::to_string(this->metadata().version) +
                          " must be upgraded to version 3 before it is opened");
        if (clean != nullptr) {
            clean->append(header_text);
            clean->push_back('\n');
        }
        bool last_terminated = line.terminated;
        std::uint64_t good_end = line.end;  // end of the last line that is kept
        std::size_t last_line = 1;
        constexpr std::size_t release_step = std::size_t{16} << 20;
        std::size_t next_release = release_step;
        const bool use_index = options_.resume_index && clean == nullptr && !options_.lenient;
        if (use_index && line.terminated && resume(data, line.end)) {
            // The lines the index covers are known; the reader goes on after them.
            good_end = file_size_;
            last_line = lines_;
            reader = detail::LineReader(data, static_cast<std::size_t>(file_size_), lines_);
            next_release = static_cast<std::size_t>(file_size_) + release_step;
        }
        Dep<std::vector<std::pair<std::uint64_t, std::uint64_t>>> dropped_ranges;

        // The lines are scanned a batch at a time, by several threads (scan_line reads nothing
        // but its line), and recorded in file order by this one; the batch after the one being
        // recorded is scanned meanwhile.
        const std::size_t helpers = scan_helpers();
        ScanBatch current;
        ScanBatch ahead;
        std::size_t batch_bytes = first_batch_bytes;
        bool more = fill_batch(reader, current, batch_bytes);
        if (more) {
            BatchScan work{this, &reader, &current};
            detail::BackgroundThreads<BatchScan> threads(helpers_for(current, helpers), work);
            work();
        }
        bool torn = false;
        while (more && !torn) {
            batch_bytes = std::min(batch_bytes * 2, max_batch_bytes);
            more = fill_batch(reader, ahead, batch_bytes);
            BatchScan work{this, &reader, &ahead};
            detail::BackgroundThreads<BatchScan> threads(more ? helpers_for(ahead, helpers) : 0,
                                                         work);
            for (std::size_t i = 0; i < current.lines.size(); ++i) {
                line = current.lines[i];
                LineScan& scan = current.scans[i];
                last_line = line.number;
                if (line.offset >= next_release) {
                    mapping.release_before(line.offset);
                    next_release = line.offset + release_step;
                }
                const std::string_view text = reader.text(line);
                if (scan.blank) {
                    last_terminated = line.terminated;
                    good_end = line.end;
                    continue;
                }
                std::string reason = record_line(scan, line.offset, text.size(), line.number);
                if (reason.empty()) {
                    if (clean != nullptr) {
                        clean->append(text);
                        clean->push_back('\n');
                    }
                    last_terminated = line.terminated;
                    good_end = line.end;
                    continue;
                }
                const bool last = line.end == data.size();
                if (last && (!line.terminated || !parses(text))) {
                    torn_tail_ = true;  // the remains of an append that was never acknowledged
                    torn = true;
                    break;
                }
                if (!options_.lenient) fail_line(ErrorCode::invalid_entry, line.number, reason);
                problems_.push_back(LineProblem{line.number, std::move(reason)});
                dropped_ranges.emplace_back(line.offset, line.end);
                last_terminated = line.terminated;
                good_end = line.end;
            }
            if (torn) break;
            work();  // what the threads have not scanned yet
            threads.join();
            std::swap(current, ahead);
        }
        lines_ = torn_tail_ ? last_line - 1 : last_line;
        file_size_ = data.size();

        if (clean != nullptr) {
            finish_repair(data, good_end, last_terminated, dropped_ranges, *clean, *dropped,
                          *report);
            return;
        }
        if (read_only_) return;
        if (torn_tail_) {
            quarantine_path_ =
                detail::write_side_file(*ops_, path_, "quarantine", this->environment().now_ms(),
                                        data.substr(static_cast<std::size_t>(good_end)));
            if (const int err = detail::truncate_file(*ops_, fd_.get(), good_end))
                throw detail::io_error("cutting the torn last line of", path_, err);
            file_size_ = good_end;
        }
        if (!last_terminated && !torn_tail_) {
            if (const int err = detail::pwrite_all(*ops_, fd_.get(), "\n", file_size_)) {
                cut_back();
                throw detail::io_error("adding the final newline to", path_, err);
            }
            ++file_size_;
        }
        if (torn_tail_ || !last_terminated) {
            if (const int err = detail::sync_file(*ops_, fd_.get(), true))
                throw detail::io_error("syncing", path_, err);
        }
        if (use_index && resumed_lines_ < lines_) save_index();
    }

    // -- The resume index (JsonlStorageOptions::resume_index) ----------------------------------

    static constexpr char index_magic[8] = {'a', 'c', 'r', 'e', 's', 'u', 'm', '1'};
    static constexpr std::uint32_t index_byte_order = 0x01020304;
    static constexpr std::size_t index_head_bytes = 4096;
    static constexpr std::size_t index_tail_bytes = std::size_t{64} << 10;

    // The hashes that tie an index to the file's first `covered` bytes: its start (the header)
    // and the last 64 KiB before `covered`.
    static std::pair<std::uint64_t, std::uint64_t> covered_hashes(std::string_view data,
                                                                  std::uint64_t covered) {
        const auto n = static_cast<std::size_t>(covered);
        const std::size_t tail = std::min(n, index_tail_bytes);
        return {detail::hash_bytes(data.substr(0, std::min(n, index_head_bytes))),
                detail::hash_bytes(data.substr(n - tail, tail))};
    }

    // Writes the index of everything this open learnt (best effort: it is a cache, and a
    // failure to write it changes nothing the storage promises).
    void save_index() noexcept {
        try {
            std::string out(index_magic, sizeof index_magic);
            detail::ByteWriter w(out);
            w.put(index_byte_order);
            w.put(static_cast<std::uint8_t>(dialect_ == Dialect::pi ? 1 : 0));
            w.put(static_cast<std::uint64_t>(file_size_));
            w.put(static_cast<std::uint64_t>(lines_));
            const detail::FileMapping mapping(*ops_, fd_.get(),
                                              static_cast<std::size_t>(file_size_), path_);
            const auto [head, tail] = covered_hashes(mapping.view(), file_size_);
            w.put(head);
            w.put(tail);
            w.put(static_cast<std::uint64_t>(slots_.size()));
            for (const Slot& slot : slots_) {
                if (slot.pinned && slot.length == 0) return;  // appended here: no offset known
                if (slot.length > UINT32_MAX || slot.line > UINT32_MAX) return;
                w.put(static_cast<std::uint64_t>(slot.offset));
                w.put(static_cast<std::uint32_t>(slot.length));
                w.put(static_cast<std::uint32_t>(slot.line));
            }
            if (!this->index().save(out)) return;
            w.put(detail::hash_bytes(out));
            detail::TempFile temp(*ops_, resume_index_path(path_));
            temp.write(out);
            temp.publish(true);
        } catch (...) {
        }
    }

    // Takes the index, when there is one that matches the file (see save_index): the slots,
    // the tree index, the lines and the size it covers. False, changing nothing, otherwise.
    bool resume(std::string_view data, std::uint64_t header_end) {
        detail::FileMapping mapping;
        try {
            const std::string index_path = resume_index_path(path_);
            const detail::FileHandle fd =
                detail::open_regular_file(*ops_, index_path, O_RDONLY, "resume index");
            if (!fd) return false;
            const std::uint64_t size = detail::file_size(*ops_, fd.get(), index_path);
            if (size < sizeof index_magic + 8 || size > (std::uint64_t{1} << 32)) return false;
            mapping =
                detail::FileMapping(*ops_, fd.get(), static_cast<std::size_t>(size), index_path);
        } catch (...) {
            return false;  // not readable, not a regular file: rebuilt
        }
        const std::string_view all = mapping.view();
        if (all.substr(0, sizeof index_magic) != std::string_view(index_magic, sizeof index_magic))
            return false;
        std::uint64_t body_hash = 0;
        detail::ByteReader trailer(all.substr(all.size() - 8));
        if (!trailer.get(body_hash) ||
            detail::hash_bytes(all.substr(0, all.size() - 8)) != body_hash)
            return false;
        detail::ByteReader in(all.substr(sizeof index_magic, all.size() - 8 - sizeof index_magic));
        std::uint32_t order = 0;
        std::uint8_t dialect = 0;
        std::uint64_t covered = 0, lines = 0, head = 0, tail = 0, count = 0;
        if (!in.get(order) || order != index_byte_order || !in.get(dialect) ||
            dialect != (dialect_ == Dialect::pi ? 1 : 0) || !in.get(covered) || !in.get(lines) ||
            !in.get(head) || !in.get(tail) || !in.get(count))
            return false;
        if (covered < header_end || covered > data.size() || data[covered - 1] != '\n' ||
            covered_hashes(data, covered) != std::pair{head, tail} || count >= lines ||
            count > in.left() / 16)
            return false;
        Dep<std::vector<Slot>> slots;
        slots.reserve(static_cast<std::size_t>(count));
        std::uint64_t previous_end = header_end;
        for (std::uint64_t i = 0; i < count; ++i) {
            std::uint64_t offset = 0;
            std::uint32_t length = 0, line = 0;
            if (!in.get(offset) || !in.get(length) || !in.get(line) || offset < previous_end ||
                offset + length >= covered || line < 2 || line > lines)
                return false;
            previous_end = offset + length;
            slots.push_back(Slot{offset, length, line, {}, {}, nullptr});
        }
        auto index = Dep<TreeIndex>::restore(in);
        if (!index || index->size() != count || in.left() != 0) return false;
        slots_ = std::move(slots);
        this->mutable_index() = std::move(*index);
        lines_ = static_cast<std::size_t>(lines);
        file_size_ = covered;
        resumed_lines_ = lines_;
        return true;
    }

    void finish_repair(
        std::string_view data, std::uint64_t good_end, bool last_terminated,
        const Dep<std::vector<std::pair<std::uint64_t, std::uint64_t>>>& dropped_ranges,
        const std::string& clean, std::string& dropped, Dep<RepairReport>& report) {
        report.problems = problems_;
        report.entries_kept = slots_.size();
        for (const auto& [from, to] : dropped_ranges)
            dropped.append(
                data.substr(static_cast<std::size_t>(from), static_cast<std::size_t>(to - from)));
        if (torn_tail_) {
            dropped.append(data.substr(static_cast<std::size_t>(good_end)));
            report.problems.push_back(LineProblem{lines_, "torn last line"});
        }
        if (dropped.empty() && last_terminated && clean.size() == data.size())
            return;  // already clean
        report.changed = true;
        const std::int64_t now = this->environment().now_ms();
        if (!dropped.empty())
            report.quarantine_path =
                detail::write_side_file(*ops_, path_, "quarantine", now, dropped);
        // The original stays beside the session under a new name (a hard link: no copy).
        const std::string backup_base = path_ + ".bak-" + detail::file_stamp(now);
        for (int n = 0;; ++n) {
            std::string name = n == 0 ? backup_base : backup_base + "-" + std::to_string(n);
            if (ops_->link(path_.c_str(), name.c_str()) == 0) {
                report.backup_path = std::move(name);
                break;
            }
            if (errno != EEXIST || n > 1000)
                throw detail::io_error("keeping the original of", path_, errno);
        }
        detail::TempFile temp(*ops_, path_);
        temp.write(clean);
        temp.sync();
        temp.publish(true);
    }

    std::string path_;
    JsonlStorageOptions options_;
    const detail::FileOps* ops_;
    bool read_only_ = false;
    bool poisoned_ = false;
    bool closed_ = false;
    bool torn_tail_ = false;
    bool removed_ = false;  ///< the file lost its last name while open (see append_entry)
    Dialect dialect_ = Dialect::native;
    detail::FileHandle fd_;
    std::uint64_t file_size_ = 0;
    std::size_t lines_ = 0;            ///< lines in the file, the header included
    std::size_t last_line_bytes_ = 0;  ///< the newest appended line (see unpersist_last)
    std::size_t resumed_lines_ = 0;    ///< lines taken from the resume index
    std::string line_buffer_;          ///< the line an append encodes, reused
    std::vector<Slot> slots_;
    mutable Dep<std::deque<std::size_t>>
        held_order_;  // decoded entries the cache holds, oldest first
    mutable std::size_t held_bytes_ = 0;
    Dep<std::vector<LineProblem>> problems_;
    Dep<std::optional<std::string>> quarantine_path_;
};

/// The session storage over one JSONL file (see BasicJsonlSessionStorage).
using JsonlSessionStorage = BasicJsonlSessionStorage<>;

static_assert(SessionStorage<JsonlSessionStorage>);
static_assert(has_state_entries<JsonlSessionStorage>);

}  // namespace agentcore
