# Sourced by the tests that run the lock-lease seed's own TypeScript
# (tests/lock_seed_test.sh, bindings/node/tests/seed_test.sh), after tests/skip.sh:
#
#   lock_seed_modules       the npm packages tests/npm/package-lock.json pins
#                           (TypeScript, zod, @types/node), installed with `npm ci`
#                           from the registry once per build tree, into <build>/npm
#                           (again when the lock file changes); sets NODE_MODULES.
#   lock_seed_transpile OUT the seed (LEASEJUDGE_LOCK_SEED, default
#                           ../shared/seeds/000_370901b67f9339c6.txt beside the
#                           checkout: a diff, its lines after the hunk header without
#                           the leading '+') turned into CommonJS JavaScript at OUT by
#                           TypeScript's transpiler.
#
# Each calls skip_or_fail when it cannot: no node or npm, no registry, no seed.

lock_seed_modules() {
  local src=${LEASEJUDGE_SOURCE_DIR:-.} bin=${LEASEJUDGE_BINARY_DIR:-}
  [ -n "$bin" ] || skip_or_fail "LEASEJUDGE_BINARY_DIR is not set"
  command -v node >/dev/null 2>&1 || skip_or_fail "node is not installed"
  command -v npm >/dev/null 2>&1 || skip_or_fail "npm is not installed"
  local dir=$bin/npm stamp
  stamp=$(cat "$src/tests/npm/package.json" "$src/tests/npm/package-lock.json" | sha256sum | cut -c1-16)
  mkdir -p "$dir"
  # One installer at a time: ctest runs the tests that need these side by side. npm is
  # no program of ours: no sanitizer runtime for it.
  if ! (
    flock 9
    [ "$(cat "$dir/.installed" 2>/dev/null)" = "$stamp" ] && exit 0
    rm -rf "$dir/node_modules" "$dir/.installed"
    cp "$src/tests/npm/package.json" "$src/tests/npm/package-lock.json" "$dir/" &&
      (cd "$dir" && env -u LD_PRELOAD timeout 300 npm ci --no-audit --no-fund --ignore-scripts >npm.log 2>&1) &&
      echo "$stamp" >"$dir/.installed"
  ) 9>"$bin/npm.lock"; then
    skip_or_fail "npm ci could not install the pinned packages (see $dir/npm.log)"
  fi
  NODE_MODULES=$dir/node_modules
}

lock_seed_transpile() {
  local out=$1
  local seed=${LEASEJUDGE_LOCK_SEED:-${LEASEJUDGE_SOURCE_DIR:-.}/../shared/seeds/000_370901b67f9339c6.txt}
  [ -r "$seed" ] || skip_or_fail "the seed $seed is not here"
  awk 'found { sub(/^\+/, ""); print } /^@@ /{ found = 1 }' "$seed" >"$out.ts"
  NODE_PATH=$NODE_MODULES node -e '
    const fs = require("fs");
    const ts = require("typescript");
    const js = ts.transpileModule(fs.readFileSync(process.argv[1], "utf8"), {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
    });
    fs.writeFileSync(process.argv[2], js.outputText);' "$out.ts" "$out" ||
    { echo "not ok - the seed does not transpile"; exit 1; }
}
