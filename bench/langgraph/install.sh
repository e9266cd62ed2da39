#!/bin/sh
# Installs the pinned packages of the LangGraph side of bench_postgres (package-lock.json) into
# bench/langgraph/node_modules. Needs node 20 and npm.
set -e
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
