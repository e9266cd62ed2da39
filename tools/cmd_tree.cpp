// `agentcore tree FILE` (or REPOSITORY SESSION): the session tree drawn with box characters, one
// line per entry.
//
// A linear run stays in one column; a branch point draws its children with ├─ / └─. The path
// from the root to the leaf is marked ●, the leaf "← leaf". Filters hide entries; a hidden
// entry's children hang from its nearest shown ancestor. Past 16 nested branch levels a line
// starts with «N», the number of outer levels not drawn: output stays linear in the entries.

#include "cli_common.hpp"
#include "commands.hpp"
#include "preview.hpp"
#include "session_file.hpp"

#include <iostream>
#include <unordered_map>
#include <unordered_set>

namespace agentcore::tool {

namespace {

constexpr std::size_t preview_chars = 72;
constexpr std::size_t json_preview_chars = 200;
constexpr std::size_t id_chars = 64;  // ids are shown whole up to this length
// A linear run longer than this is folded, keeping `fold_keep` entries at each end.
constexpr std::size_t fold_above = 12;
constexpr std::size_t fold_keep = 3;
// Branches nested deeper than this many levels are drawn with their innermost levels only.
constexpr std::size_t max_levels = 16;

struct Node {
    EntryHandle entry;
    std::optional<std::size_t> parent;
    std::vector<std::size_t> children;
    std::optional<std::string> label;
    bool on_path = false;
};

struct Tree {
    std::vector<Node> nodes;
    std::vector<std::size_t> roots;
    std::optional<std::size_t> leaf;  ///< the shown node that stands for the leaf
};

bool shown(const SessionTreeEntry& entry, TreeFilter filter,
           const std::optional<std::string>& label) {
    switch (filter) {
        case TreeFilter::all: return true;
        case TreeFilter::standard:
            return !std::holds_alternative<LabelEntry>(entry) &&
                   !std::holds_alternative<LeafEntry>(entry);
        case TreeFilter::user_only: {
            const auto* m = message_of(entry);
            return m != nullptr && std::holds_alternative<UserMessage>(*m);
        }
        case TreeFilter::labeled: return label.has_value();
    }
    return true;
}

template <SessionStorage S>
Tree build_tree(const S& storage, TreeFilter filter) {
    Tree tree;
    const auto leaf_id = storage.get_leaf_id();
    const auto path = ancestry(storage, leaf_id);
    const std::unordered_set<std::string> on_path(path.begin(), path.end());
    // Entry id -> the nearest shown ancestor-or-self (parents always come first in a file).
    std::unordered_map<std::string, std::optional<std::size_t>> shown_as;
    for (const auto& entry : storage.get_entries({})) {
        const std::string& id = id_of(*entry);
        const auto& parent_id = parent_id_of(*entry);
        std::optional<std::size_t> anchor;
        if (parent_id) {
            auto it = shown_as.find(*parent_id);
            if (it != shown_as.end()) anchor = it->second;
        }
        auto label = storage.get_label(id);
        if (!shown(*entry, filter, label)) {
            shown_as[id] = anchor;
            continue;
        }
        const std::size_t index = tree.nodes.size();
        tree.nodes.push_back(Node{entry, anchor, {}, std::move(label), on_path.count(id) != 0});
        (anchor ? tree.nodes[*anchor].children : tree.roots).push_back(index);
        shown_as[id] = index;
    }
    if (leaf_id) {
        auto it = shown_as.find(*leaf_id);
        if (it != shown_as.end()) tree.leaf = it->second;
    }
    return tree;
}

const char* kind_colour(std::string_view kind) {
    if (kind == "user") return "1;36";
    if (kind == "assistant") return "32";
    if (kind == "tool_result" || kind == "bash_execution") return "34";
    if (kind == "compaction" || kind == "branch_summary" || kind == "compaction_summary")
        return "33";
    if (kind == "custom_message" || kind == "custom") return "35";
    return "2";
}

class Printer {
public:
    Printer(const Tree& tree, const TreeOptions& options, Style style)
        : tree_(tree), options_(options), style_(style) {}

    void print_all() {
        // Depth-first with an explicit stack (a session may nest deeply). A frame holds its depth,
        // not its graphics: the graphics come from `levels_`, one flag per branch level of the
        // line being drawn (true: "│  ", a later sibling follows; false: "   "), so memory stays
        // linear and no line grows past max_levels levels, whatever the nesting.
        struct Frame {
            std::size_t node;
            std::size_t depth;      ///< branch levels above this subtree
            const char* connector;  ///< "├─ ", "└─ " or "" (a lone root)
        };
        std::vector<Frame> stack;
        push_children(stack, tree_.roots, 0);
        while (!stack.empty()) {
            const Frame frame = stack.back();
            stack.pop_back();
            levels_.resize(frame.depth);
            const std::string first = level_graphics() + frame.connector;
            std::size_t depth = frame.depth;
            if (*frame.connector != '\0') {
                levels_.push_back(std::string_view(frame.connector) == "├─ ");
                ++depth;
            }
            // The linear run from this node: every node but the last has exactly one child.
            std::vector<std::size_t> run{frame.node};
            while (tree_.nodes[run.back()].children.size() == 1)
                run.push_back(tree_.nodes[run.back()].children[0]);
            print_run(run, first, level_graphics());
            push_children(stack, tree_.nodes[run.back()].children, depth);
        }
    }

private:
    template <class Stack>
    static void push_children(Stack& stack, const std::vector<std::size_t>& children,
                              std::size_t depth) {
        if (children.size() == 1) {
            stack.push_back({children[0], depth, ""});
            return;
        }
        for (std::size_t i = children.size(); i-- > 0;)
            stack.push_back({children[i], depth, i + 1 == children.size() ? "└─ " : "├─ "});
    }

    // The graphics of the current levels. Past max_levels, the outer levels are not drawn:
    // "«N» " says how many are left out, and the innermost max_levels - 1 follow.
    std::string level_graphics() const {
        std::string out;
        std::size_t from = 0;
        if (levels_.size() > max_levels) {
            from = levels_.size() - (max_levels - 1);
            out = "«" + std::to_string(from) + "» ";
        }
        for (std::size_t i = from; i < levels_.size(); ++i) out += levels_[i] ? "│  " : "   ";
        return out;
    }

    bool pinned(std::size_t index) const {
        const Node& node = tree_.nodes[index];
        return node.label || tree_.leaf == index ||
               std::holds_alternative<CompactionEntry>(*node.entry) ||
               std::holds_alternative<BranchSummaryEntry>(*node.entry);
    }

    void print_run(const std::vector<std::size_t>& run, const std::string& first_graphics,
                   const std::string& graphics) {
        std::vector<bool> keep(run.size(), true);
        if (options_.fold && run.size() > fold_above) {
            for (std::size_t i = fold_keep; i + fold_keep < run.size(); ++i)
                keep[i] = pinned(run[i]);
        }
        for (std::size_t i = 0; i < run.size();) {
            std::size_t j = i;
            while (j < run.size() && !keep[j]) ++j;
            if (j - i >= 2) {
                print_fold(j - i, tree_.nodes[run[i]].on_path, graphics);
                i = j;
                continue;
            }
            print_node(run[i], i == 0 ? first_graphics : graphics);
            ++i;
        }
    }

    std::string mark(bool on_path) const { return on_path ? style_.paint("1;32", "●") : " "; }

    void print_fold(std::size_t count, bool on_path, const std::string& graphics) {
        std::string line = mark(on_path) + " " + std::string(8, ' ') + " ";
        if (options_.timestamps) line += std::string(24, ' ') + " ";
        line += style_.paint("2", graphics) +
                style_.paint("2", "… " + std::to_string(count) + " more entries");
        std::cout << line << "\n";
    }

    void print_node(std::size_t index, const std::string& graphics) {
        const Node& node = tree_.nodes[index];
        const SessionTreeEntry& entry = *node.entry;
        std::string id = escaped(id_of(entry), id_chars);
        if (id.size() < 8) id.resize(8, ' ');
        std::string line = mark(node.on_path) + " " + style_.paint("2", id) + " ";
        if (options_.timestamps) {
            std::string ts = escaped(base_of(entry).timestamp, 40);
            if (ts.size() < 24) ts.resize(24, ' ');
            line += style_.paint("2", ts) + " ";
        }
        const std::string kind = entry_kind(entry);
        line += style_.paint("2", graphics) + style_.paint(kind_colour(kind), escaped(kind, 40));
        const std::string text = one_line(entry_text(entry), preview_chars);
        if (!text.empty()) line += ": " + text;
        if (node.label) line += "  " + style_.paint("1;33", "[" + escaped(*node.label, 40) + "]");
        if (tree_.leaf == index) line += "  " + style_.paint("1;32", "← leaf");
        std::cout << line << "\n";
    }

    const Tree& tree_;
    const TreeOptions& options_;
    Style style_;
    std::vector<bool> levels_;
};

const char* filter_name(TreeFilter filter) {
    switch (filter) {
        case TreeFilter::standard: return "default";
        case TreeFilter::all: return "all";
        case TreeFilter::user_only: return "user-only";
        case TreeFilter::labeled: return "labeled";
    }
    return "default";
}

}  // namespace

int run_tree(const TreeOptions& options) {
    return with_session(
        resolve_source(options.source), false, [&](const auto& session, const FileInfo& file) {
            const Tree tree = build_tree(session.storage(), options.filter);
            if (options.json) {
                Json entries = Json::array();
                for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
                    const Node& node = tree.nodes[i];
                    const SessionTreeEntry& entry = *node.entry;
                    entries.push_back(
                        {{"id", id_of(entry)},
                         {"parent_id",
                          node.parent ? Json(id_of(*tree.nodes[*node.parent].entry)) : Json()},
                         {"type", type_of(entry)},
                         {"kind", entry_kind(entry)},
                         {"timestamp", base_of(entry).timestamp},
                         {"text", one_line(entry_text(entry), json_preview_chars)},
                         {"label", node.label ? Json(*node.label) : Json()},
                         {"on_path", node.on_path},
                         {"leaf", tree.leaf == i}});
                }
                const auto leaf = session.storage().get_leaf_id();
                std::cout << pretty_json({{"file", file.path},
                                          {"filter", filter_name(options.filter)},
                                          {"leaf", leaf ? Json(*leaf) : Json()},
                                          {"entries", std::move(entries)}});
                return exit_ok;
            }
            if (tree.nodes.empty()) {
                std::cout << "(no entries)\n";
                return exit_ok;
            }
            Printer(tree, options, Style(colours_wanted())).print_all();
            return exit_ok;
        });
}

}  // namespace agentcore::tool
