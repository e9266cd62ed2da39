#pragma once
// Storages chosen at run time: AnyStorage (any SessionStorage behind one type), AnyRepository
// (any SessionRepository behind one type) and open_repository(url), which picks the repository
// from a string such as a configuration value:
//
//     auto repo = agentcore::open_repository("sqlite:sessions.db");   // or "memory:", or a folder
//     auto session = create(repo, {});
//     append_message(session, ...);                                  // every free function works
//
// URLs: a folder path (JSONL files, the default: "sessions", "./a:b", "/var/lib/agent"), an
// explicit "jsonl:PATH", "memory:" (nothing stored), "sqlite:PATH" (needs the target
// agentcore::sqlite and #include <agentcore/sqlite/sqlite_repo.hpp>, which registers the scheme).
// Other backends register their scheme with register_repository_scheme.

#include <agentcore/detail/dependent.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/fork.hpp>
#include <agentcore/ids.hpp>
#include <agentcore/jsonl/jsonl_repo.hpp>
#include <agentcore/memory/memory_repo.hpp>
#include <agentcore/repo.hpp>
#include <agentcore/search.hpp>
#include <agentcore/session_ops.hpp>
#include <agentcore/storage.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentcore {

/// Any SessionStorage behind one type: each call is one virtual call to the storage it holds
/// (shared with the session it came from). Models SessionStorage.
class AnyStorage {
public:
    /// Wraps a shared storage.
    template <SessionStorage S>
    explicit AnyStorage(std::shared_ptr<S> storage)
        : impl_(std::make_shared<Model<S>>(std::move(storage))) {}

    [[nodiscard]] const SessionHeader& metadata() const { return impl_->metadata(); }
    [[nodiscard]] const Environment& environment() const { return impl_->environment(); }
    [[nodiscard]] std::optional<std::string> get_leaf_id() const { return impl_->get_leaf_id(); }
    void set_leaf_id(std::optional<std::string> id) { impl_->set_leaf_id(std::move(id)); }
    [[nodiscard]] std::string create_entry_id() { return impl_->create_entry_id(); }
    template <class Entry = SessionTreeEntry>
    void append_entry(detail::dependent<SessionTreeEntry, Entry> entry) {
        impl_->append_entry(std::move(entry));
    }
    [[nodiscard]] EntryHandle get_entry(std::string_view id) const { return impl_->get_entry(id); }
    [[nodiscard]] std::vector<EntryHandle> find_entries(std::string_view type) const {
        return impl_->find_entries(type);
    }
    [[nodiscard]] std::optional<std::string> get_label(std::string_view id) const {
        return impl_->get_label(id);
    }
    [[nodiscard]] std::optional<std::string> get_session_name() const {
        return impl_->get_session_name();
    }
    [[nodiscard]] std::vector<EntryHandle> get_path_to_root_or_compaction(
        std::optional<std::string_view> start) const {
        return impl_->get_path_to_root_or_compaction(start);
    }
    [[nodiscard]] std::vector<EntryHandle> get_entries(EntriesQuery query = {}) const {
        return impl_->get_entries(query);
    }
    [[nodiscard]] SessionStats get_session_stats() const { return impl_->get_session_stats(); }
    [[nodiscard]] std::size_t entry_count() const { return impl_->entry_count(); }
    /// The dialect of the storage held (dialect_of): native for one that keeps no lines.
    [[nodiscard]] Dialect dialect() const { return impl_->dialect(); }
    /// The entries of a context's state at `leaf` (has_state_entries): the held storage's own
    /// answer where it keeps them (every built-in storage does), else a walk of the ancestry.
    [[nodiscard]] StateEntries get_state_entries(std::optional<std::string_view> leaf) const {
        return impl_->get_state_entries(leaf);
    }

    /// The storage held, when it is an S; null otherwise.
    template <SessionStorage S>
    [[nodiscard]] S* target() const noexcept {
        auto* model = dynamic_cast<Model<S>*>(impl_.get());
        return model ? model->storage.get() : nullptr;
    }

private:
    struct Concept {
        virtual ~Concept() = default;
        virtual const SessionHeader& metadata() const = 0;
        virtual const Environment& environment() const = 0;
        virtual std::optional<std::string> get_leaf_id() const = 0;
        virtual void set_leaf_id(std::optional<std::string>) = 0;
        virtual std::string create_entry_id() = 0;
        virtual void append_entry(SessionTreeEntry) = 0;
        virtual EntryHandle get_entry(std::string_view) const = 0;
        virtual std::vector<EntryHandle> find_entries(std::string_view) const = 0;
        virtual std::optional<std::string> get_label(std::string_view) const = 0;
        virtual std::optional<std::string> get_session_name() const = 0;
        virtual std::vector<EntryHandle> get_path_to_root_or_compaction(
            std::optional<std::string_view>) const = 0;
        virtual std::vector<EntryHandle> get_entries(EntriesQuery) const = 0;
        virtual SessionStats get_session_stats() const = 0;
        virtual std::size_t entry_count() const = 0;
        virtual Dialect dialect() const = 0;
        virtual StateEntries get_state_entries(std::optional<std::string_view>) const = 0;
    };
    template <class S>
    struct Model final : Concept {
        explicit Model(std::shared_ptr<S> s) : storage(std::move(s)) {}
        const SessionHeader& metadata() const override { return storage->metadata(); }
        const Environment& environment() const override { return storage->environment(); }
        std::optional<std::string> get_leaf_id() const override { return storage->get_leaf_id(); }
        void set_leaf_id(std::optional<std::string> id) override {
            storage->set_leaf_id(std::move(id));
        }
        std::string create_entry_id() override { return storage->create_entry_id(); }
        void append_entry(SessionTreeEntry e) override { storage->append_entry(std::move(e)); }
        EntryHandle get_entry(std::string_view id) const override { return storage->get_entry(id); }
        std::vector<EntryHandle> find_entries(std::string_view t) const override {
            return storage->find_entries(t);
        }
        std::optional<std::string> get_label(std::string_view id) const override {
            return storage->get_label(id);
        }
        std::optional<std::string> get_session_name() const override {
            return storage->get_session_name();
        }
        std::vector<EntryHandle> get_path_to_root_or_compaction(
            std::optional<std::string_view> s) const override {
            return storage->get_path_to_root_or_compaction(s);
        }
        std::vector<EntryHandle> get_entries(EntriesQuery q) const override {
            return storage->get_entries(q);
        }
        SessionStats get_session_stats() const override { return storage->get_session_stats(); }
        std::size_t entry_count() const override { return storage->entry_count(); }
        Dialect dialect() const override { return dialect_of(*storage); }
        StateEntries get_state_entries(std::optional<std::string_view> leaf) const override {
            if constexpr (has_state_entries<S>) {
                return storage->get_state_entries(leaf);
            } else {
                const S& s = *storage;
                return detail::walk_state_entries(
                    leaf, s.entry_count(), [&s](std::string_view id) { return s.get_entry(id); });
            }
        }
        std::shared_ptr<S> storage;
    };
    std::shared_ptr<Concept> impl_;
};

static_assert(SessionStorage<AnyStorage>);
static_assert(has_dialect<AnyStorage>);
static_assert(has_state_entries<AnyStorage>);

/// A session of any storage, as a Session<AnyStorage> sharing its storage and context options.
template <SessionStorage S>
Session<AnyStorage> erase_session(const Session<S>& session) {
    return Session<AnyStorage>(std::make_shared<AnyStorage>(session.shared_storage()),
                               session.context_build_options());
}

namespace detail {

// The repository functions by argument-dependent lookup, so that an application's repository
// in its own namespace is found too.
template <class R>
auto any_create(R& r, CreateOptions o) {
    return create(r, std::move(o));
}
template <class R>
auto any_open(R& r, std::string_view id) {
    return open(r, id);
}
template <class R>
auto any_open_read_only(const R& r, std::string_view id) {
    return open_read_only(r, id);
}
template <class R>
SessionList any_list(const R& r, const ListOptions& o) {
    return list(r, o);
}
template <class R>
void any_remove(R& r, std::string_view id) {
    remove(r, id);
}
template <class R>
auto any_fork(R& r, std::string_view id, const ForkOptions& o) {
    return fork(r, id, o);
}
template <class R>
auto any_import(R& r, SessionHeader h, std::vector<SessionTreeEntry> e, Dialect d) {
    return import_session(r, std::move(h), std::move(e), d);
}
template <class R>
void any_search_each(const R& r, const SearchQuery& q, const SearchOptions& o,
                     const SearchHitSink& sink) {
    search_each(r, q, o, sink);
}
template <class R>
SearchResult any_search(const R& r, const SearchQuery& q, const SearchOptions& o) {
    return search(r, q, o);
}

}  // namespace detail

/// Any SessionRepository behind one type; its sessions are Session<AnyStorage>. Copies share the
/// repository. Models SessionRepository and ImportingRepository (an import into a repository
/// that is not an ImportingRepository throws `storage`).
class AnyRepository {
public:
    using storage_type = AnyStorage;
    using session_type = Session<AnyStorage>;

    template <SessionRepository R>
    explicit AnyRepository(R repo, std::string url = {})
        : impl_(std::make_shared<Model<R>>(std::move(repo))), url_(std::move(url)) {}

    /// The URL it was opened from (empty when made from a repository directly).
    [[nodiscard]] const std::string& url() const noexcept { return url_; }

    /// The repository held, when it is an R; null otherwise.
    template <SessionRepository R>
    [[nodiscard]] R* target() const noexcept {
        auto* model = dynamic_cast<Model<R>*>(impl_.get());
        return model ? &model->repo : nullptr;
    }

    friend session_type create(AnyRepository& r, CreateOptions o = {}) {
        return r.impl_->create(std::move(o));
    }
    friend session_type open(AnyRepository& r, std::string_view id) { return r.impl_->open(id); }
    friend session_type open_read_only(const AnyRepository& r, std::string_view id) {
        return r.impl_->open_read_only(id);
    }
    friend SessionList list(const AnyRepository& r, const ListOptions& o = {}) {
        return r.impl_->list(o);
    }
    friend void remove(AnyRepository& r, std::string_view id) { r.impl_->remove(id); }
    friend session_type fork(AnyRepository& r, std::string_view id, const ForkOptions& o = {}) {
        return r.impl_->fork(id, o);
    }
    friend session_type import_session(AnyRepository& r, SessionHeader header,
                                       std::vector<SessionTreeEntry> entries,
                                       Dialect dialect = Dialect::native) {
        return r.impl_->import_session(std::move(header), std::move(entries), dialect);
    }
    /// The search_each of the repository held (its index or scan; search.hpp).
    friend void search_each(const AnyRepository& r, const SearchQuery& query,
                            const SearchOptions& options, const SearchHitSink& sink) {
        r.impl_->search_each(query, options, sink);
    }
    /// The search of the repository held (a database's may read fewer candidates for a page).
    friend SearchResult search(const AnyRepository& r, const SearchQuery& query,
                               const SearchOptions& options = {}) {
        return r.impl_->search(query, options);
    }

private:
    struct Concept {
        virtual ~Concept() = default;
        virtual session_type create(CreateOptions) = 0;
        virtual session_type open(std::string_view) = 0;
        virtual session_type open_read_only(std::string_view) const = 0;
        virtual SessionList list(const ListOptions&) const = 0;
        virtual void remove(std::string_view) = 0;
        virtual session_type fork(std::string_view, const ForkOptions&) = 0;
        virtual session_type import_session(SessionHeader, std::vector<SessionTreeEntry>,
                                            Dialect) = 0;
        virtual void search_each(const SearchQuery&, const SearchOptions&,
                                 const SearchHitSink&) const = 0;
        virtual SearchResult search(const SearchQuery&, const SearchOptions&) const = 0;
    };
    template <class R>
    struct Model final : Concept {
        explicit Model(R r) : repo(std::move(r)) {}
        session_type create(CreateOptions o) override {
            return erase_session(detail::any_create(repo, std::move(o)));
        }
        session_type open(std::string_view id) override {
            return erase_session(detail::any_open(repo, id));
        }
        session_type open_read_only(std::string_view id) const override {
            return erase_session(detail::any_open_read_only(repo, id));
        }
        SessionList list(const ListOptions& o) const override { return detail::any_list(repo, o); }
        void remove(std::string_view id) override { detail::any_remove(repo, id); }
        session_type fork(std::string_view id, const ForkOptions& o) override {
            return erase_session(detail::any_fork(repo, id, o));
        }
        session_type import_session(SessionHeader h, std::vector<SessionTreeEntry> e,
                                    Dialect d) override {
            if constexpr (ImportingRepository<R>) {
                return erase_session(detail::any_import(repo, std::move(h), std::move(e), d));
            } else {
                throw SessionError(
                    ErrorCode::storage,
                    "session '" + h.id +
                        "' cannot be imported: the repository has no import_session");
            }
        }
        void search_each(const SearchQuery& q, const SearchOptions& o,
                         const SearchHitSink& sink) const override {
            detail::any_search_each(repo, q, o, sink);
        }
        SearchResult search(const SearchQuery& q, const SearchOptions& o) const override {
            return detail::any_search(repo, q, o);
        }
        R repo;
    };
    std::shared_ptr<Concept> impl_;
    std::string url_;
};

static_assert(SessionRepository<AnyRepository>);
static_assert(ImportingRepository<AnyRepository>);

/// Opens the repository of a URL's scheme; `rest` is what follows "scheme:".
using RepositoryOpener = std::function<AnyRepository(std::string_view rest)>;

namespace detail {

template <class = void>
std::map<std::string, RepositoryOpener, std::less<>>& repository_schemes() {
    static std::map<std::string, RepositoryOpener, std::less<>> schemes{
        {"memory",
         [](std::string_view rest) {
             if (!rest.empty())
                 throw SessionError(ErrorCode::invalid_session,
                                    "repository URL 'memory:" + std::string(rest) +
                                        "': memory: takes nothing after the colon");
             return AnyRepository(InMemorySessionRepo(), "memory:");
         }},
        {"jsonl",
         [](std::string_view rest) {
             if (rest.empty())
                 throw SessionError(ErrorCode::invalid_session,
                                    "repository URL 'jsonl:': no folder after the colon");
             return AnyRepository(JsonlSessionRepo(std::string(rest)),
                                  "jsonl:" + std::string(rest));
         }},
    };
    return schemes;
}

// The scheme of a URL: letters, digits, '+', '-', '.' before the first ':', starting with a
// letter; anything else (a '/' or '.' first, no ':') is a folder path.
template <class = void>
std::optional<std::string_view> url_scheme(std::string_view url) {
    const auto colon = url.find(':');
    if (colon == std::string_view::npos || colon == 0) return std::nullopt;
    const std::string_view scheme = url.substr(0, colon);
    const auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
    if (!letter(scheme.front())) return std::nullopt;
    for (char c : scheme)
        if (!letter(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.')
            return std::nullopt;
    return scheme;
}

}  // namespace detail

/// Registers (or replaces) the opener of a URL scheme, for backends that live in headers of
/// their own. Returns true, so that a header can register at static initialisation.
template <class = void>
bool register_repository_scheme(std::string scheme, RepositoryOpener opener) {
    detail::repository_schemes().insert_or_assign(std::move(scheme), std::move(opener));
    return true;
}

/// The URL schemes open_repository knows, sorted: "jsonl", "memory", and those registered.
template <class = void>
std::vector<std::string> known_repository_schemes() {
    std::vector<std::string> out;
    for (const auto& [name, opener] : detail::repository_schemes()) out.push_back(name);
    return out;
}

/// The repository a URL names (see the top of this header). An empty URL, an unknown scheme,
/// or a scheme whose backend is not compiled in: invalid_session naming the URL and the schemes
/// known; the repository's own errors as its constructor throws them.
template <class = void>
AnyRepository open_repository(std::string_view url) {
    if (url.empty()) throw SessionError(ErrorCode::invalid_session, "empty repository URL");
    const auto scheme = detail::url_scheme(url);
    if (!scheme) return AnyRepository(JsonlSessionRepo(std::string(url)), std::string(url));
    const auto& schemes = detail::repository_schemes();
    const auto it = schemes.find(*scheme);
    if (it == schemes.end()) {
        std::string known;
        for (const auto& [name, opener] : schemes)
            known += (known.empty() ? "" : ", ") + name + ":";
        std::string hint;
        if (*scheme == "sqlite")
            hint =
                " (sqlite: needs #include <agentcore/sqlite/sqlite_repo.hpp> and the target "
                "agentcore::sqlite)";
        throw SessionError(ErrorCode::invalid_session,
                           "repository URL '" + std::string(url) + "': unknown scheme '" +
                               std::string(*scheme) + "'" + hint + "; known: " + known +
                               ", or a folder path");
    }
    AnyRepository repo = it->second(url.substr(scheme->size() + 1));
    return repo;
}

}  // namespace agentcore
