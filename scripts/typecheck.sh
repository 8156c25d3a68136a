#!/usr/bin/env bash
# npm run typecheck: TypeScript (pinned devDependency) compiles tests/types/api.ts against the package's types
# (web/src/index.d.ts, reached through package.json's "exports" as a user's import reaches it): every call the
# README shows, with the types each returns, and calls the types must refuse. Nothing is emitted or run.
# (web/src/*.js is not run through --checkJs: its JSDoc does not type-check cleanly yet; see CONTRIBUTING.md.)
# Last line: "typecheck: N passed, N failed". Exits non-zero on a type error.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ ! -x node_modules/.bin/tsc ]]; then
  echo "typecheck: node_modules/.bin/tsc is missing: run bash scripts/setup.sh (npm ci)"
  echo "typecheck: 0 passed, 1 failed"; exit 1
fi
echo "--- tsc -p tests/types ($(node_modules/.bin/tsc --version))"
if node_modules/.bin/tsc -p tests/types/tsconfig.json; then
  echo "ok   tests/types/api.ts"; echo "typecheck: 1 passed, 0 failed"
else
  echo "FAIL tests/types/api.ts"; echo "typecheck: 0 passed, 1 failed"; exit 1
fi
