#!/usr/bin/env bash
# The tool on a PostgreSQL repository, against the test suite's own server (the ctest fixture
# "postgres: start the server" writes where it listens to SERVER_FILE): a folder of sessions of
# both dialects is copied into a fresh database and back byte for byte, a second copy skips what
# is there, and ls, info, tree, context and verify read the sessions from the database as they
# read them from the folder. Without the server (no PostgreSQL programs) the test is skipped
# (exit 77), unless AGENTCORE_REQUIRE_PG=1.
# Usage: postgres_test.sh AGENTCORE FIXTURES SERVER_FILE WORK
set -euo pipefail
cli=$1 fixtures=$2 server_file=$3 work=$4

unavailable() {
    if [[ ${AGENTCORE_REQUIRE_PG:-} == 1 ]]; then
        echo "PostgreSQL tool test cannot run: $* (AGENTCORE_REQUIRE_PG=1, so this is a failure)" >&2
        exit 1
    fi
    echo "SKIP: $* (install postgresql)"
    exit 77
}

[[ -r ${server_file} ]] || unavailable "no test server (${server_file} is missing)"
read -r dir port <"${server_file}"
command -v psql >/dev/null || unavailable "no psql"
database="tool_$$"
admin="postgresql:///postgres?host=${dir}&port=${port}&user=agentcore"
url="postgresql:///${database}?host=${dir}&port=${port}&user=agentcore"
psql -qX "${admin}" -c "CREATE DATABASE ${database}" >/dev/null
trap 'psql -qX "${admin}" -c "DROP DATABASE IF EXISTS ${database}" >/dev/null 2>&1 || true' EXIT

rm -rf "${work}"
mkdir -p "${work}"
folder=${fixtures}/repository
fail() { echo "FAIL: $*" >&2; exit 1; }

"${cli}" copy "${folder}" "${url}" >"${work}/copy.out"
"${cli}" copy "${folder}" "${url}" >"${work}/again.out"
grep -q "skipped" "${work}/again.out" || fail "a second copy did not skip the sessions already there: $(cat "${work}/again.out")"
"${cli}" copy "${url}" "${work}/back" >/dev/null
diff -r -x .agentcore-summaries "${folder}" "${work}/back" >&2 || fail "the sessions copied back differ from the folder's"

# Every session reads the same from the database as from its file.
count=0
for file in "${folder}"/*/*.jsonl; do
    id=$(basename "${file}" .jsonl)
    id=${id#*_}
    for command in tree context verify; do
        "${cli}" "${command}" "${folder}" "${id}" >"${work}/from-folder" 2>&1
        "${cli}" "${command}" "${url}" "${id}" >"${work}/from-database" 2>&1
        # verify names where it read: the folder's file or the database's session.
        sed -i -e "s|^${folder}/[^:]*|SOURCE|" -e "s|^postgresql:[^ ]* (session [^)]*)|SOURCE|" \
            "${work}/from-folder" "${work}/from-database"
        diff "${work}/from-folder" "${work}/from-database" >&2 ||
            fail "${command} of session ${id} differs between the folder and the database"
    done
    count=$((count + 1))
done
((count > 0)) || fail "no session files in ${folder}"
# ls lists the same sessions (the first column, under its heading).
"${cli}" ls "${folder}" | awk 'NR > 1 {print $1}' | sort >"${work}/ls-folder"
"${cli}" ls "${url}" | awk 'NR > 1 {print $1}' | sort >"${work}/ls-database"
diff "${work}/ls-folder" "${work}/ls-database" >&2 || fail "ls lists other sessions in the database"
"${cli}" info "${url}" "$(head -n 1 "${work}/ls-database")" >/dev/null
echo "${count} sessions copied into PostgreSQL and back byte for byte; tree, context and verify agree on each"
