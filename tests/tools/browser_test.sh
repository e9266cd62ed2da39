#!/usr/bin/env bash
# The viewer in headless Chromium: exports the fixture session, installs playwright-core into a
# scratch folder of the build tree (once), and runs browser_test.mjs. Without CI set, a missing
# chromium, node or npm registry skips the test (exit 77); with CI set, it fails instead.
# Usage: browser_test.sh AGENTCORE FIXTURES WORK
set -euo pipefail
cli=$1 fixtures=$2 work=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
chromium=${CHROMIUM:-/usr/bin/chromium}

unavailable() {
    if [[ -n ${CI:-} ]]; then
        echo "browser test cannot run: $* (CI is set, so this is a failure)" >&2
        exit 1
    fi
    echo "SKIP: $* (install chromium, nodejs and npm; set CI=1 to make this a failure)"
    exit 77
}

[[ -x ${chromium} ]] || unavailable "no chromium at ${chromium}"
command -v node >/dev/null || unavailable "no node"
command -v npm >/dev/null || unavailable "no npm"

mkdir -p "${work}"
modules=${work}/node
if [[ ! -f ${modules}/node_modules/playwright-core/package.json ]]; then
    mkdir -p "${modules}"
    # Only the library: playwright-core drives the system chromium and downloads no browser.
    if ! PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --prefix "${modules}" --no-audit --no-fund \
            --no-save --loglevel=error playwright-core@1 >"${work}/npm.log" 2>&1; then
        cat "${work}/npm.log" >&2
        unavailable "npm could not install playwright-core"
    fi
fi

"${cli}" export "${fixtures}/native.jsonl" -o "${work}/viewer.html"
"${cli}" export "${fixtures}/hostile.jsonl" -o "${work}/hostile.html"
"${cli}" export "${fixtures}/search-repository" folding-0011 -o "${work}/folding.html"
"${cli}" export "${fixtures}/native.jsonl" --search '</script><img src=x onerror=alert(1)>' \
    -o "${work}/hostile-query.html"
rm -f "${work}/hit.html"
PLAYWRIGHT_MODULES=${modules}/node_modules CHROMIUM=${chromium} AGENTCORE_CLI=${cli} \
    SEARCH_REPOSITORY=${fixtures}/search-repository FOLDING_PAGE=${work}/folding.html WORK=${work} \
    HOSTILE_QUERY_PAGE=${work}/hostile-query.html \
    node "${here}/browser_test.mjs" "${work}/viewer.html" "${work}/viewer.png" "${work}/hostile.html"
