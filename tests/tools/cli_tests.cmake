# The CLI tests: every command on the deterministic fixtures (both dialects), its help, its
# error paths (exit codes and the file and line named on stderr), and colours on a terminal.

# Help and usage.
agentcore_cli_test(help EXIT 0 ARGS --help
                   STDOUT_REGEX "Subcommands:.*ls.*info.*tree.*context.*verify.*repair.*convert.*export.*copy")
foreach(command ls info tree context verify repair convert export copy search)
    agentcore_cli_test(help_${command} EXIT 0 ARGS ${command} --help STDOUT_REGEX "Usage: .*${command}")
endforeach()
agentcore_cli_test(usage_no_command EXIT 2 ARGS "" STDERR_REGEX "subcommand")
agentcore_cli_test(usage_missing_file EXIT 2 ARGS tree STDERR_REGEX "SOURCE is required")
agentcore_cli_test(usage_exclusive_filters EXIT 2 ARGS tree <FIXTURES>/native.jsonl --all --user-only
                   STDERR_REGEX "excludes")
agentcore_cli_test(usage_bad_dialect EXIT 2 ARGS convert <FIXTURES>/pi.jsonl --to klingon -o x.jsonl
                   STDERR_REGEX "klingon")

# ls
agentcore_cli_test(ls EXIT 0 ARGS ls <FIXTURES>/sessions GOLDEN ls.txt)
agentcore_cli_test(ls_json EXIT 0 ARGS ls <FIXTURES>/sessions --json GOLDEN ls.json)
agentcore_cli_test(ls_cwd EXIT 0 ARGS ls <FIXTURES>/sessions --cwd /tmp/other
                   STDOUT_REGEX "gamma-0003" NO_STDOUT_REGEX "alpha|beta")
agentcore_cli_test(ls_env_root EXIT 0 ARGS ls ENV AGENTCORE_SESSIONS=<FIXTURES>/sessions GOLDEN ls.txt)
agentcore_cli_test(ls_bad_header EXIT 1 ARGS ls <FIXTURES>/sessions-broken STDOUT_REGEX "delta-0004"
                   STDERR_REGEX "skipped .*broken-0005.jsonl' line 1: .*'id'")
agentcore_cli_test(ls_missing_root EXIT 2 ARGS ls STDERR_REGEX "./sessions: not a sessions folder")

# search: hits grouped by session, each with the command that shows it; marks as «…» when piped,
# colours on a terminal only.
agentcore_cli_test(search EXIT 0 COLOUR OFF ARGS search HELLO <FIXTURES>/sessions
                   STDOUT_REGEX "^[a-z]+-000[123]  .*\n  [0-9a-f]+  user  2026-01-01T[0-9:.]+Z  [0-9.]+\n    «Hello»\n    agentcore context [^ ]+/sessions [a-z]+-000[123] --leaf [0-9a-f]+\n"
                   NO_STDOUT_REGEX "Hi\\.")
agentcore_cli_test(search_name EXIT 0 ARGS search "alph*" <FIXTURES>/sessions
                   STDOUT_REGEX "^alpha-0001  Alpha  /home/dev/project\n  [0-9a-f]+  session_info  .*\n    «Alpha»\n"
                   NO_STDOUT_REGEX "beta|gamma")
agentcore_cli_test(search_cwd EXIT 0 ARGS search hello <FIXTURES>/sessions --cwd /tmp/other
                   STDOUT_REGEX "gamma-0003" NO_STDOUT_REGEX "alpha|beta")
agentcore_cli_test(search_role EXIT 0 ARGS search "hi" <FIXTURES>/sessions --role assistant --limit 1
                   STDOUT_REGEX "  assistant  .*\n    «Hi»\.\n.*\(more matches: raise --limit, now 1\)")
agentcore_cli_test(search_since EXIT 1 ARGS search hello <FIXTURES>/sessions --since 2027-01-01
                   STDOUT_REGEX "^no matches\n$")
agentcore_cli_test(search_json EXIT 0 ARGS search hello <FIXTURES>/sessions --json --newest
                   STDOUT_REGEX "\"entry_type\": \"message\",.*\"snippet\": \"Hello\",\n *\"marks\": .\n *.\n *0,\n *5\n.*\"open\": \"agentcore context .+/sessions [a-z]+-000[123] --leaf [0-9a-f]+\",\n"
                   NO_STDOUT_REGEX "«")
agentcore_cli_test(search_substring EXIT 0 ARGS search ell <FIXTURES>/sessions --substring
                   STDOUT_REGEX "H«ell»o")
agentcore_cli_test(search_no_match EXIT 1 ARGS search zebra <FIXTURES>/sessions STDOUT_REGEX "^no matches\n$")
agentcore_cli_test(search_invalid_query EXIT 2 ARGS search "*" <FIXTURES>/sessions
                   STDERR_REGEX "invalid_query.*no term has a letter or digit")
agentcore_cli_test(search_bad_time EXIT 2 ARGS search hello <FIXTURES>/sessions --since yesterday
                   STDERR_REGEX "invalid_query.*since 'yesterday' is not an ISO 8601")
agentcore_cli_test(search_missing_root EXIT 2 ARGS search hello missing-folder STDERR_REGEX "missing-folder")
agentcore_cli_test(search_pty_colour EXIT 0 PTY ON COLOUR ON ARGS search hello <FIXTURES>/sessions
                   STDOUT_REGEX "Hello" NO_STDOUT_REGEX "«")
# Each hit also names the command that writes its session's viewer opened at the hit.
agentcore_cli_test(search_view_command EXIT 0 ARGS search ell <FIXTURES>/sessions --substring --thinking
                   STDOUT_REGEX "--leaf [0-9a-f]+\n    agentcore export [^ ]+/sessions [a-z]+-000[123] --search ell --substring --thinking --entry [0-9a-f]+ -o hit.html\n")
agentcore_cli_test(search_view_json EXIT 0 ARGS search hello <FIXTURES>/sessions --json
                   STDOUT_REGEX "\"view\": \"agentcore export [^ ]+/sessions [a-z]+-000[123] --search hello --entry [0-9a-f]+ -o hit.html\"")

# info
agentcore_cli_test(info_native EXIT 0 ARGS info <FIXTURES>/native.jsonl GOLDEN info-native.txt)
agentcore_cli_test(info_pi EXIT 0 ARGS info <FIXTURES>/pi.jsonl GOLDEN info-pi.txt)
agentcore_cli_test(info_json EXIT 0 ARGS info <FIXTURES>/native.jsonl --json GOLDEN info-native.json)
agentcore_cli_test(info_missing EXIT 2 ARGS info missing.jsonl STDERR_REGEX "'missing.jsonl' not found")
agentcore_cli_test(info_garbage EXIT 2 ARGS info <FIXTURES>/garbage.jsonl
                   STDERR_REGEX "invalid_session.*garbage.jsonl' line 1: ")
agentcore_cli_test(info_pi_v1 EXIT 0 ARGS info <FIXTURES>/pi-v1.jsonl
                   STDOUT_REGEX "dialect: +pi, format version 1 \\(read as 3\\).*messages: +2")
agentcore_cli_test(info_header_only EXIT 0 ARGS info <FIXTURES>/header-only.jsonl STDOUT_REGEX "entries: +0")

# tree: both dialects draw the same tree.
agentcore_cli_test(tree_native EXIT 0 ARGS tree <FIXTURES>/native.jsonl GOLDEN tree.txt)
agentcore_cli_test(tree_pi EXIT 0 ARGS tree <FIXTURES>/pi.jsonl GOLDEN tree.txt)
agentcore_cli_test(tree_all EXIT 0 ARGS tree <FIXTURES>/native.jsonl --all GOLDEN tree-all.txt)
agentcore_cli_test(tree_user_only EXIT 0 ARGS tree <FIXTURES>/native.jsonl --user-only GOLDEN tree-user-only.txt)
agentcore_cli_test(tree_labeled EXIT 0 ARGS tree <FIXTURES>/pi.jsonl --labeled GOLDEN tree-labeled.txt)
agentcore_cli_test(tree_timestamps EXIT 0 ARGS tree <FIXTURES>/native.jsonl --timestamps --no-fold
                   GOLDEN tree-timestamps.txt)
agentcore_cli_test(tree_json EXIT 0 ARGS tree <FIXTURES>/native.jsonl --json GOLDEN tree.json)
agentcore_cli_test(tree_pi_v1 EXIT 0 ARGS tree <FIXTURES>/pi-v1.jsonl
                   STDOUT_REGEX "● [0-9a-f]+ user: Linear question one\n● [0-9a-f]+ assistant: Linear answer one  ← leaf")
agentcore_cli_test(tree_header_only EXIT 0 ARGS tree <FIXTURES>/header-only.jsonl STDOUT_REGEX "no entries")
agentcore_cli_test(tree_bad_line EXIT 2 ARGS tree <FIXTURES>/bad-middle.jsonl
                   STDERR_REGEX "invalid_entry.*bad-middle.jsonl' line 3: ")
agentcore_cli_test(tree_torn_tail EXIT 0 ARGS tree <FIXTURES>/torn.jsonl GOLDEN tree.txt)
# Colours only on a terminal, and never with NO_COLOR; box drawing either way.
agentcore_cli_test(tree_pty_colour EXIT 0 PTY ON COLOUR ON ARGS tree <FIXTURES>/native.jsonl
                   STDOUT_REGEX "├─ .*└─ .*← leaf")
agentcore_cli_test(tree_pty_no_color EXIT 0 PTY ON COLOUR OFF ENV NO_COLOR=1 ARGS tree <FIXTURES>/native.jsonl
                   STDOUT_REGEX "├─ .*└─ .*← leaf")
agentcore_cli_test(tree_piped_no_colour EXIT 0 COLOUR OFF ARGS tree <FIXTURES>/native.jsonl STDOUT_REGEX "├─ ")

# context
agentcore_cli_test(context_native EXIT 0 ARGS context <FIXTURES>/native.jsonl GOLDEN context.txt)
agentcore_cli_test(context_pi EXIT 0 ARGS context <FIXTURES>/pi.jsonl GOLDEN context.txt)
agentcore_cli_test(context_json_native EXIT 0 ARGS context <FIXTURES>/native.jsonl --json GOLDEN context-native.json)
agentcore_cli_test(context_json_pi EXIT 0 ARGS context <FIXTURES>/pi.jsonl --json GOLDEN context-pi.json)
agentcore_cli_test(context_leaf EXIT 0 ARGS context <FIXTURES>/native.jsonl --leaf 41677d61 GOLDEN context-branch.txt)
agentcore_cli_test(context_unknown_leaf EXIT 2 ARGS context <FIXTURES>/native.jsonl --leaf 00000000
                   STDERR_REGEX "native.jsonl: .*not_found.*'00000000'")

# verify
agentcore_cli_test(verify_ok EXIT 0 ARGS verify <FIXTURES>/pi.jsonl STDOUT_REGEX "pi.jsonl: ok \\(64 entries\\)")
agentcore_cli_test(verify_bad_line EXIT 1 ARGS verify <FIXTURES>/bad-middle.jsonl
                   STDOUT_REGEX "bad-middle.jsonl:3: .*1 problem")
agentcore_cli_test(verify_orphan_tool_result EXIT 1 ARGS verify <FIXTURES>/orphan.jsonl
                   STDOUT_REGEX "orphan.jsonl: entry 'aaaa0001': orphan_tool_result")
agentcore_cli_test(verify_torn EXIT 1 ARGS verify <FIXTURES>/torn.jsonl STDOUT_REGEX "torn last line")
agentcore_cli_test(verify_garbage EXIT 1 ARGS verify <FIXTURES>/garbage.jsonl STDOUT_REGEX "line 1: .*1 problem")
agentcore_cli_test(verify_json EXIT 1 ARGS verify <FIXTURES>/bad-middle.jsonl --json
                   STDOUT_REGEX "\"ok\": false.*\"line\": 3")
agentcore_cli_test(verify_missing EXIT 2 ARGS verify missing.jsonl STDERR_REGEX "'missing.jsonl' not found")

# repair: atomic, keeps the original; refuses while a writer holds the file.
agentcore_cli_test(repair EXIT 0 COPY bad-middle.jsonl ARGS repair <WORK>/bad-middle.jsonl
                   STDOUT_REGEX "bad-middle.jsonl:3: dropped.*repaired, 64 entries kept.*original kept as .*bak-"
                   COMPARE "<WORK>/bad-middle.jsonl;<FIXTURES>/native.jsonl")
agentcore_cli_test(repair_clean EXIT 0 COPY native.jsonl ARGS repair <WORK>/native.jsonl STDOUT_REGEX "clean")
agentcore_cli_test(repair_locked EXIT 2 COPY bad-middle.jsonl WRAP flock <WORK>/bad-middle.jsonl
                   ARGS repair <WORK>/bad-middle.jsonl STDERR_REGEX "locked.*bad-middle.jsonl")
agentcore_cli_test(repair_missing EXIT 2 ARGS repair missing.jsonl STDERR_REGEX "'missing.jsonl' not found")

# convert: each dialect into the other gives the other fixture byte for byte.
agentcore_cli_test(convert_to_native EXIT 0 ARGS convert <FIXTURES>/pi.jsonl --to native -o <WORK>/out.jsonl
                   STDOUT_REGEX "64 entries" COMPARE "<WORK>/out.jsonl;<FIXTURES>/native.jsonl")
agentcore_cli_test(convert_to_pi EXIT 0 ARGS convert <FIXTURES>/native.jsonl --to pi -o <WORK>/out.jsonl
                   STDOUT_REGEX "64 entries" COMPARE "<WORK>/out.jsonl;<FIXTURES>/pi.jsonl")
agentcore_cli_test(convert_replaces EXIT 0 COPY pi.jsonl ARGS convert <FIXTURES>/native.jsonl --to native
                   -o <WORK>/pi.jsonl COMPARE "<WORK>/pi.jsonl;<FIXTURES>/native.jsonl")
agentcore_cli_test(convert_pi_v1 EXIT 0 ARGS convert <FIXTURES>/pi-v1.jsonl --to pi -o <WORK>/out.jsonl
                   STDOUT_REGEX "2 entries written in the pi dialect \\(from pi\\).*upgraded from format version 1 to 3"
                   CHECK_FILE <WORK>/out.jsonl FILE_REGEX "\"version\":3.*\"parentId\":null")
agentcore_cli_test(convert_missing EXIT 2 ARGS convert missing.jsonl --to pi -o out.jsonl
                   STDERR_REGEX "missing.jsonl.*not found")

# export: conversation text reaches the page only as escaped JSON.
agentcore_cli_test(export EXIT 0 ARGS export <FIXTURES>/native.jsonl -o <WORK>/session.html
                   STDOUT_REGEX "session.html: 64 entries" CHECK_FILE <WORK>/session.html
                   FILE_REGEX "\\\\u003c/script\\\\u003e\\\\u003cimg src=x onerror=alert\\(1\\)\\\\u003e"
                   FILE_NO_REGEX "</script><img|<b>fn main|https?://")
agentcore_cli_test(export_bad_output EXIT 2 ARGS export <FIXTURES>/native.jsonl -o <WORK>/no/such/dir/x.html
                   STDERR_REGEX "x.html: cannot write")
# export --search/--entry: the page opens with the query and at the entry; both are checked first.
agentcore_cli_test(export_search EXIT 0 ARGS export <FIXTURES>/native.jsonl --search "rust -python" --thinking -o <WORK>/session.html
                   CHECK_FILE <WORK>/session.html
                   FILE_REGEX "\"view\":{\"query\":\"rust -python\",\"substring\":false,\"thinking\":true,\"entry\":null,\"folding\":{\"latin1_bases\":\"aaaaaaAceeee[^\"]*\",\"latin_a_bases\":\"[a-zA-Z]+\"}}")
agentcore_cli_test(export_search_invalid EXIT 2 ARGS export <FIXTURES>/native.jsonl --search "\"open" -o <WORK>/session.html
                   STDERR_REGEX "invalid_query.*has no closing")
agentcore_cli_test(export_substring_needs_search EXIT 2 ARGS export <FIXTURES>/native.jsonl --substring -o <WORK>/session.html
                   STDERR_REGEX "--substring requires --search")
agentcore_cli_test(export_entry_missing EXIT 2 ARGS export <FIXTURES>/native.jsonl --entry nope0001 -o <WORK>/session.html
                   STDERR_REGEX "native.jsonl: entry 'nope0001' not found")

# Special files: only regular files are sessions. A FIFO (which no writer ever opens) or a device
# that never ends is refused at once by every command, naming the file and what it is; `ls` skips
# and reports one inside a sessions folder and lists the rest.
foreach(command info tree context verify repair export)
    set(extra)
    if(command STREQUAL "export")
        set(extra -o <WORK>/out.html)
    endif()
    agentcore_cli_test(${command}_fifo EXIT 2 ARGS ${command} <FIXTURES>/fifo.jsonl ${extra}
                       STDERR_REGEX "fifo.jsonl': not a session file: it is a FIFO")
endforeach()
agentcore_cli_test(convert_fifo EXIT 2 ARGS convert <FIXTURES>/fifo.jsonl --to pi -o <WORK>/out.jsonl
                   STDERR_REGEX "fifo.jsonl': not a session file: it is a FIFO")
agentcore_cli_test(info_dev_zero EXIT 2 ARGS info /dev/zero
                   STDERR_REGEX "'/dev/zero': not a session file: it is a character device")
agentcore_cli_test(tree_dev_zero EXIT 2 ARGS tree /dev/zero STDERR_REGEX "it is a character device")
agentcore_cli_test(verify_folder EXIT 2 ARGS verify <FIXTURES>/sessions STDERR_REGEX "it is a folder")
agentcore_cli_test(ls_special_files EXIT 1 ARGS ls <FIXTURES>/sessions-special
                   STDOUT_REGEX "epsilon-0006.*Epsilon" NO_STDOUT_REGEX "fifo-0007|folder-0008"
                   STDERR_REGEX "skipped '[^\n]*_fifo-0007.jsonl': not a session file: it is a FIFO.*skipped '[^\n]*_folder-0008.jsonl': not a session file: it is a folder|skipped '[^\n]*_folder-0008.jsonl': not a session file: it is a folder.*skipped '[^\n]*_fifo-0007.jsonl': not a session file: it is a FIFO")

# The output is never the input, whatever its name (same device and inode), and never a session a
# writer holds (its writer lock): the command refuses, and both files stay as they were.
agentcore_cli_test(export_onto_input EXIT 2 COPY native.jsonl
                   ARGS export <WORK>/native.jsonl -o <WORK>/./native.jsonl
                   STDERR_REGEX "native.jsonl': is the input file .*choose another output"
                   COMPARE "<WORK>/native.jsonl;<FIXTURES>/native.jsonl")
agentcore_cli_test(export_onto_hard_link EXIT 2 COPY native.jsonl
                   WRAP sh -c "ln native.jsonl link.jsonl && exec \"$0\" \"$@\""
                   ARGS export <WORK>/native.jsonl -o link.jsonl
                   STDERR_REGEX "'link.jsonl': is the input file"
                   COMPARE "<WORK>/link.jsonl;<FIXTURES>/native.jsonl")
agentcore_cli_test(convert_onto_input EXIT 2 COPY pi.jsonl
                   WRAP sh -c "ln -s pi.jsonl alias.jsonl && exec \"$0\" \"$@\""
                   ARGS convert <WORK>/pi.jsonl --to native -o alias.jsonl
                   STDERR_REGEX "'alias.jsonl': is the input file"
                   COMPARE "<WORK>/pi.jsonl;<FIXTURES>/pi.jsonl")
agentcore_cli_test(convert_onto_live_session EXIT 2 COPY pi.jsonl WRAP flock <WORK>/pi.jsonl
                   ARGS convert <FIXTURES>/native.jsonl --to native -o <WORK>/pi.jsonl
                   STDERR_REGEX "pi.jsonl': is a session open for writing elsewhere \\(locked\\)"
                   COMPARE "<WORK>/pi.jsonl;<FIXTURES>/pi.jsonl")
agentcore_cli_test(export_onto_live_session EXIT 2 COPY pi.jsonl WRAP flock <WORK>/pi.jsonl
                   ARGS export <FIXTURES>/native.jsonl -o <WORK>/pi.jsonl
                   STDERR_REGEX "pi.jsonl': is a session open for writing elsewhere \\(locked\\)"
                   COMPARE "<WORK>/pi.jsonl;<FIXTURES>/pi.jsonl")

# A tree where every entry has a side branch: past 16 nested levels a line starts with «N» (the
# outer levels not drawn), so no line holds more than 16 levels and the output stays linear.
string(REPEAT "│  " 17 seventeen_levels)  # every level of this tree continues (│)
agentcore_cli_test(tree_branchy EXIT 0 ARGS tree <FIXTURES>/branchy.jsonl
                   STDOUT_REGEX "«23» (│  |   )+└─ assistant: Side 38\n" NO_STDOUT_REGEX "${seventeen_levels}")
# Its output grows linearly: at most 100 bytes per entry at 1,197 and at 11,997 entries (about 60
# are written; drawing every level, a line would grow with its depth, the output with its square).
agentcore_cli_test(tree_branchy_300 EXIT 0 ARGS tree <FIXTURES>/branchy-300.jsonl --no-fold
                   STDOUT_REGEX "assistant: Side 298\n" STDOUT_MAX_BYTES 119700)
agentcore_cli_test(tree_branchy_3000 EXIT 0 ARGS tree <FIXTURES>/branchy-3000.jsonl --no-fold
                   STDOUT_REGEX "assistant: Side 2998\n" STDOUT_MAX_BYTES 1199700)

# Strings from the file never drive the terminal: control characters, line breaks, C1 controls
# and bidirectional overrides in ids, names, labels, types, paths and messages are shown escaped.
string(ASCII 27 esc)
agentcore_cli_test(tree_hostile_ids EXIT 0 COLOUR OFF ARGS tree <FIXTURES>/hostile.jsonl --all
                   STDOUT_REGEX "\\\\x1b.31mred\\\\x1b.0m user: Hello \\\\x1b.2Jthere\n.* line\\\\nbreak user: Second\n.* rtl\\\\u202eevil custom_message: t\\\\x1b.5mype\\\\u009b: Third\n.*.built \\\\x1b.1mhere\\\\nnow."
                   NO_STDOUT_REGEX "\nbreak")
agentcore_cli_test(tree_hostile_ids_json EXIT 0 COLOUR OFF ARGS tree <FIXTURES>/hostile.jsonl --json
                   STDOUT_REGEX "\"id\": \"rtl\\\\u202eevil\".*\"text\": \"t\\\\\\\\x1b.5mype\\\\\\\\u009b: Third\"")
agentcore_cli_test(info_hostile EXIT 0 COLOUR OFF ARGS info <FIXTURES>/hostile.jsonl
                   STDOUT_REGEX "cwd: +/home/\\\\x1b.0.pwned\\\\x07dev\n.*name: +Name\\\\x1b.0.title\\\\x07 \\\\u202eevil\n")
agentcore_cli_test(context_hostile_leaf EXIT 2 ARGS context <FIXTURES>/hostile.jsonl --leaf "x${esc}c"
                   STDERR_REGEX "not_found.*'x\\\\x1bc'")

# A file holding a value nested 100,000 levels deep (an entry's data in the middle of the file, on
# its last line, or the header's metadata): every command answers at once, naming the file, the
# line and the field by its first and last steps (exit 2; verify: 1, a problem found); nothing
# recurses that deep. A deep last line is an append that was never completed, as torn.jsonl's.
set(deep_field "nesting too deep in field 'data\\[0\\]\\[0\\]\\[0\\]\\[0\\]\\[0\\]\\.\\.\\.\\([0-9]+ levels\\)\\.\\.\\.\\[0\\]\\[0\\]\\[0\\]'")
set(deep_header_field "nesting too deep in field 'metadata\\.x\\[0\\]\\[0\\]\\[0\\]\\[0\\]\\.\\.\\.\\(")
foreach(command info tree context export convert)
    set(extra)
    if(command STREQUAL "export")
        set(extra -o <WORK>/out.html)
    elseif(command STREQUAL "convert")
        set(extra --to pi -o <WORK>/out.jsonl)
    endif()
    agentcore_cli_test(${command}_deep_line EXIT 2 ARGS ${command} <FIXTURES>/deep-middle.jsonl ${extra}
                       STDERR_REGEX "invalid_entry.*deep-middle.jsonl('? line 3|:3): .*${deep_field}")
    agentcore_cli_test(${command}_deep_header EXIT 2 ARGS ${command} <FIXTURES>/deep-header.jsonl ${extra}
                       STDERR_REGEX "invalid_session.*deep-header.jsonl('? line 1|:1): .*${deep_header_field}")
endforeach()
agentcore_cli_test(verify_deep_line EXIT 1 ARGS verify <FIXTURES>/deep-middle.jsonl
                   STDOUT_REGEX "deep-middle.jsonl:3: entry 'aaaa0002': ${deep_field}.*\n.*deep-middle.jsonl: 1 problem")
agentcore_cli_test(verify_deep_header EXIT 1 ARGS verify <FIXTURES>/deep-header.jsonl
                   STDOUT_REGEX "invalid_session.*deep-header.jsonl' line 1: .*${deep_header_field}.*1 problem")
agentcore_cli_test(repair_deep_line EXIT 0 COPY deep-middle.jsonl ARGS repair <WORK>/deep-middle.jsonl
                   STDOUT_REGEX "deep-middle.jsonl:3: dropped: entry 'aaaa0002': ${deep_field}.*repaired, 2 entries kept")
agentcore_cli_test(info_deep_last_line EXIT 0 ARGS info <FIXTURES>/deep-last.jsonl STDOUT_REGEX "entries: +1\n")
agentcore_cli_test(tree_deep_last_line EXIT 0 ARGS tree <FIXTURES>/deep-last.jsonl STDOUT_REGEX "aaaa0001 user: Before  ← leaf\n$")
agentcore_cli_test(context_deep_last_line EXIT 0 ARGS context <FIXTURES>/deep-last.jsonl STDOUT_REGEX "messages: 1\n")
agentcore_cli_test(export_deep_last_line EXIT 0 ARGS export <FIXTURES>/deep-last.jsonl -o <WORK>/out.html
                   STDOUT_REGEX "out.html: 1 entries")
agentcore_cli_test(convert_deep_last_line EXIT 0 ARGS convert <FIXTURES>/deep-last.jsonl --to pi -o <WORK>/out.jsonl
                   STDOUT_REGEX "1 entries written in the pi dialect.*deep-last.jsonl:3: torn_last_line")
agentcore_cli_test(verify_deep_last_line EXIT 1 ARGS verify <FIXTURES>/deep-last.jsonl STDOUT_REGEX "torn last line")
# Repositories: every reading command takes a repository (a folder, or a URL) and a session id
# instead of a file. A folder's session is read as its file.
agentcore_cli_test(tree_folder_session EXIT 0 ARGS tree <FIXTURES>/repository tour-0001 GOLDEN tree.txt)
agentcore_cli_test(tree_jsonl_url_session EXIT 0 ARGS tree jsonl:<FIXTURES>/repository --session tour-pi-0002
                   GOLDEN tree.txt)
agentcore_cli_test(info_folder_session EXIT 0 ARGS info <FIXTURES>/repository tour-pi-0002
                   STDOUT_REGEX "file: +<FIXTURES>/repository/--home-dev-project--/[^\n]*_tour-pi-0002.jsonl .*dialect: +pi")
agentcore_cli_test(context_folder_session EXIT 0 ARGS context <FIXTURES>/repository tour-0001 GOLDEN context.txt)
agentcore_cli_test(verify_folder_session EXIT 0 ARGS verify <FIXTURES>/repository extras-0003
                   STDOUT_REGEX "_extras-0003.jsonl: ok \\(6 entries\\)")
agentcore_cli_test(info_folder_unknown_session EXIT 2 ARGS info <FIXTURES>/repository nope-0009
                   STDERR_REGEX "session 'nope-0009' not found in '[^']*/repository'")
agentcore_cli_test(info_folder_no_session EXIT 2 ARGS info <FIXTURES>/repository
                   STDERR_REGEX "repository': not a session file: it is a folder .*a repository holds many sessions: name one after it")
agentcore_cli_test(info_file_with_session EXIT 2 ARGS info <FIXTURES>/native.jsonl tour-0001
                   STDERR_REGEX "native.jsonl': a session id goes with a repository")
agentcore_cli_test(info_url_no_session EXIT 2 ARGS info sqlite:sessions.db
                   STDERR_REGEX "'sqlite:sessions.db': a repository holds many sessions: name one after it, `sqlite:sessions.db SESSION` \\(`agentcore ls sqlite:sessions.db` lists them\\)")
agentcore_cli_test(info_unknown_scheme EXIT 2 ARGS info nosuch:x.db s1 STDERR_REGEX "unknown scheme 'nosuch'")
agentcore_cli_test(info_missing_folder_url EXIT 2 ARGS info jsonl:<WORK>/none s1 STDERR_REGEX "none' not found")
agentcore_cli_test(ls_jsonl_url EXIT 0 ARGS ls jsonl:<FIXTURES>/sessions GOLDEN ls.txt)
agentcore_cli_test(ls_unknown_scheme EXIT 2 ARGS ls nosuch:x STDERR_REGEX "unknown scheme 'nosuch'")

# copy between two folders: every session, then nothing more; the files are the same bytes.
agentcore_cli_test(copy_folder_to_folder EXIT 0
                   WRAP sh -c "\"$0\" \"$@\" && diff -r -x .agentcore-summaries <FIXTURES>/repository copied >&2 && \"$0\" \"$@\""
                   ARGS copy <FIXTURES>/repository copied
                   STDOUT_REGEX "tour-0001: copied \\(64 entries\\)\n.*4 sessions copied, 0 skipped\n.*tour-0001: skipped \\(already there, identical\\)\n.*0 sessions copied, 4 skipped\n")
agentcore_cli_test(copy_onto_itself EXIT 2 ARGS copy <FIXTURES>/repository <FIXTURES>/./repository
                   STDERR_REGEX "are the same repository: a copy onto itself is refused")
agentcore_cli_test(copy_from_file EXIT 2 ARGS copy <FIXTURES>/native.jsonl copied
                   STDERR_REGEX "native.jsonl': is a session file, not a repository")
agentcore_cli_test(copy_missing_source EXIT 2 ARGS copy <WORK>/none copied STDERR_REGEX "none': no such folder")
agentcore_cli_test(copy_unknown_session EXIT 2
                   WRAP sh -c "\"$0\" \"$@\" && rc=0 || rc=$? && test ! -e copied && exit $rc || exit 99"
                   ARGS copy <FIXTURES>/repository copied --session tour-0001 --session nope-0009
                   STDERR_REGEX "session 'nope-0009' not found in '[^']*/repository'")
# A session DST holds with other content stops the copy before anything is written: exit 1, DST
# as it was (extras-0003 unchanged, new-0005 not added).
agentcore_cli_test(copy_clash_folder EXIT 1 COPY repository
                   WRAP sh -c "\"$0\" \"$@\" && rc=0 || rc=$? && diff -r -x .agentcore-summaries <FIXTURES>/repository repository >&2 && exit $rc || exit 99"
                   ARGS copy <FIXTURES>/repository-clash repository
                   STDERR_REGEX "session 'extras-0003' is already in 'repository' and differs from the one in '[^']*repository-clash' \\(entry 1 \\('[0-9a-f]+'\\) differs\\); nothing copied")

if(TARGET agentcore::sqlite)
    # The same sessions in SQLite: the reading commands give what they give for the files, and
    # a copy back into a folder gives the files' bytes, in both dialects.
    set(into_db sh -c "\"$0\" copy <FIXTURES>/repository sqlite:s.db >/dev/null && exec \"$0\" \"$@\"")
    agentcore_cli_test(sqlite_tree EXIT 0 WRAP ${into_db} ARGS tree sqlite:s.db tour-0001 GOLDEN tree.txt)
    agentcore_cli_test(sqlite_tree_pi EXIT 0 WRAP ${into_db} ARGS tree sqlite:s.db tour-pi-0002 GOLDEN tree.txt)
    agentcore_cli_test(sqlite_context EXIT 0 WRAP ${into_db} ARGS context sqlite:s.db tour-0001 GOLDEN context.txt)
    agentcore_cli_test(sqlite_context_json_pi EXIT 0 WRAP ${into_db} ARGS context sqlite:s.db tour-pi-0002 --json
                       GOLDEN context-pi.json)
    agentcore_cli_test(sqlite_info EXIT 0 WRAP ${into_db} ARGS info sqlite:s.db tour-0001 GOLDEN info-sqlite.txt)
    agentcore_cli_test(sqlite_info_json EXIT 0 WRAP ${into_db} ARGS info sqlite:s.db tour-pi-0002 --json
                       STDOUT_REGEX "^{\n  \"file\": null,\n  \"repository\": \"sqlite:s.db\",\n.*\"dialect\": \"pi\",.*\"size\": null,")
    agentcore_cli_test(sqlite_verify EXIT 0 WRAP ${into_db} ARGS verify sqlite:s.db extras-pi-0004
                       STDOUT_REGEX "^sqlite:s.db \\(session extras-pi-0004\\): ok \\(6 entries\\)\n$")
    agentcore_cli_test(sqlite_export EXIT 0 WRAP ${into_db} ARGS export sqlite:s.db tour-0001 -o <WORK>/session.html
                       STDOUT_REGEX "session.html: 64 entries" CHECK_FILE <WORK>/session.html
                       FILE_REGEX "\"id\":\"tour-0001\"")
    agentcore_cli_test(sqlite_export_onto_database EXIT 2 WRAP ${into_db} ARGS export sqlite:s.db tour-0001 -o ./s.db
                       STDERR_REGEX "'./s.db': is the input file 's.db'")
    agentcore_cli_test(sqlite_ls EXIT 0 WRAP ${into_db} ARGS ls sqlite:s.db GOLDEN ls-sqlite.txt)
    agentcore_cli_test(sqlite_search EXIT 0 WRAP ${into_db} ARGS search "rewrite main.cpp" sqlite:s.db
                       STDOUT_REGEX "^tour-0001  .*\n  [0-9a-f]+  user  .*\n    «Rewrite» «main\\.cpp» in Rust\\.\n    agentcore context sqlite:s\\.db tour-0001 --leaf [0-9a-f]+\n")
    agentcore_cli_test(sqlite_ls_cwd_json EXIT 0 WRAP ${into_db} ARGS ls sqlite:s.db --cwd /home/dev/extras --json
                       STDOUT_REGEX "\"id\": \"extras-pi-0004\",.*\"size\": null,\n *\"dialect\": \"pi\","
                       NO_STDOUT_REGEX "tour-")
    agentcore_cli_test(sqlite_unknown_session EXIT 2 WRAP ${into_db} ARGS info sqlite:s.db nope-0009
                       STDERR_REGEX "not_found.*session 'nope-0009' not found in database 's.db'")
    # A database a reading command is given must exist: it is never created.
    agentcore_cli_test(sqlite_missing_database EXIT 2
                       WRAP sh -c "\"$0\" \"$@\" && rc=0 || rc=$? && test ! -e missing.db && exit $rc || exit 99"
                       ARGS info sqlite:missing.db s1 STDERR_REGEX "'sqlite:missing.db': 'missing.db' not found")
    agentcore_cli_test(sqlite_ls_missing_database EXIT 2
                       WRAP sh -c "\"$0\" \"$@\" && rc=0 || rc=$? && test ! -e missing.db && exit $rc || exit 99"
                       ARGS ls sqlite:missing.db STDERR_REGEX "'missing.db' not found")

    # copy: folder → SQLite → folder gives every file's bytes (native and pi, the tour's branches,
    # compaction and leaf moves, entry types and fields the library does not model); again, it
    # skips them all.
    agentcore_cli_test(copy_sqlite_round_trip EXIT 0
                       WRAP sh -c "\"$0\" copy <FIXTURES>/repository sqlite:s.db && \"$0\" \"$@\" && diff -r -x .agentcore-summaries <FIXTURES>/repository back >&2"
                       ARGS copy sqlite:s.db back
                       STDOUT_REGEX "^tour-0001: copied \\(64 entries\\)\n.*4 sessions copied, 0 skipped\n.*4 sessions copied, 0 skipped\n$")
    agentcore_cli_test(copy_sqlite_again_skips EXIT 0 WRAP ${into_db} ARGS copy <FIXTURES>/repository sqlite:s.db
                       STDOUT_REGEX "extras-pi-0004: skipped \\(already there, identical\\)\n.*0 sessions copied, 4 skipped\n$")
    agentcore_cli_test(copy_sqlite_selected EXIT 0
                       WRAP sh -c "\"$0\" \"$@\" && \"$0\" ls sqlite:s.db"
                       ARGS copy <FIXTURES>/repository sqlite:s.db --session tour-pi-0002 -s extras-0003 -s tour-pi-0002
                       STDOUT_REGEX "2 sessions copied, 0 skipped\nID .*extras-0003.*tour-pi-0002"
                       NO_STDOUT_REGEX "tour-0001|extras-pi-0004")
    # A clash with a database: exit 1, the database as it was (a copy back is the first folder).
    agentcore_cli_test(copy_sqlite_clash EXIT 1
                       WRAP sh -c "\"$0\" copy <FIXTURES>/repository sqlite:s.db >/dev/null || exit 98 && \"$0\" \"$@\" && rc=0 || rc=$? && \"$0\" copy sqlite:s.db back >/dev/null && diff -r -x .agentcore-summaries <FIXTURES>/repository back >&2 && exit $rc || exit 99"
                       ARGS copy <FIXTURES>/repository-clash sqlite:s.db
                       STDERR_REGEX "session 'extras-0003' is already in 'sqlite:s.db' and differs from the one in '[^']*repository-clash' \\(entry 1 \\('[0-9a-f]+'\\) differs\\); nothing copied")
    agentcore_cli_test(copy_sqlite_onto_itself EXIT 2 WRAP ${into_db} ARGS copy sqlite:s.db sqlite:./s.db
                       STDERR_REGEX "are the same repository")
else()
    # Without agentcore::sqlite the scheme is unknown, and the message says so.
    agentcore_cli_test(sqlite_unavailable EXIT 2 ARGS info sqlite:s.db s1 STDERR_REGEX "unknown scheme 'sqlite'")
endif()
