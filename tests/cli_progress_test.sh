#!/usr/bin/env bash
# The progress line of the long verbs (step import, plan, sweep, export, watch's first
# sweep) on a terminal (script(1) gives the command a pseudo-terminal): "done of total,
# rate, time left" rewritten in place on stderr; and never a byte of it when stderr is a pipe or a file.
# A verb reading a terminal's stdin says so.
set -u
src=${LEASEJUDGE_SOURCE_DIR:?}
build=${LEASEJUDGE_BINARY_DIR:?}
. "$src/tests/skip.sh"
command -v script >/dev/null || skip_or_fail "script(1) (bsdutils) is not installed"
command -v python3 >/dev/null || skip_or_fail "python3 is not installed"
lj=$build/leasejudge
[ -x "$lj" ] || skip_or_fail "$lj is not built"

w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
. "$src/tests/tap.sh"

python3 - "$w/lines.jsonl" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(20000):
        f.write('{"key":"n1.s%d","revision":1,"value":{"id":"s%d","tool":"t","state":"succeeded"}}\n' % (i, i))
PY
"$lj" step import --store "file:$w/fs" --create-bucket "$w/lines.jsonl" >/dev/null 2>&1

# on_tty NAME PATTERN CMD: CMD under script(1); its terminal shows PATTERN after "\r\e[K".
on_tty() {
  local name=$1 pattern=$2 cmd=$3
  script -qefc "$cmd" /dev/null >"$w/tty" 2>&1 </dev/null
  if python3 - "$w/tty" "$pattern" <<'PY'; then ok "$name: a progress line on a terminal"; else notok "$name: a progress line on a terminal"; sed 's/^/# /' "$w/tty" | head -5; fi
import re, sys
t = open(sys.argv[1], "rb").read()
sys.exit(0 if re.search(b"\r\x1b\\[K" + sys.argv[2].encode(), t) else 1)
PY
}
# not_in_file NAME ARGS...: stderr a file, stdout a pipe: no \r, no escape.
not_in_file() {
  local name=$1
  shift
  "$lj" "$@" 2>"$w/err" | cat >/dev/null
  if python3 -c 'import sys; t=open(sys.argv[1],"rb").read(); sys.exit(1 if b"\r" in t or b"\x1b" in t else 0)' "$w/err"; then
    ok "$name: no progress when stderr is a file"
  else
    notok "$name: no progress when stderr is a file"
  fi
}

on_tty "step import" "step import: [0-9]+ of 20000 lines, [0-9]+ lines/s" \
  "'$lj' step import --store mem: '$w/lines.jsonl' >/dev/null"
not_in_file "step import" step import --store mem: "$w/lines.jsonl"
on_tty "step plan" "step plan: [0-9]+ of [0-9]+ bytes, [0-9]+ bytes/s" \
  "'$lj' step plan --node n1 '$w/lines.jsonl' >/dev/null"
not_in_file "step plan" step plan --node n1 "$w/lines.jsonl"
on_tty "step sweep" "step sweep: [0-9]+ keys, [0-9]+ keys/s" \
  "'$lj' step sweep --dry-run --store 'file:$w/fs' --node n1 >/dev/null"
not_in_file "step sweep" step sweep --dry-run --store "file:$w/fs" --node n1
on_tty "step export" "step export: [0-9]+ keys, [0-9]+ keys/s" "'$lj' step export --store 'file:$w/fs' >/dev/null"
not_in_file "step export" step export --store "file:$w/fs"

on_tty "step watch's first sweep" "step watch: [0-9]+ keys, [0-9]+ keys/s" \
  "timeout -s TERM 3 '$lj' step watch --store 'file:$w/fs' --node n1 --interval 1h >/dev/null"
timeout -s TERM 3 "$lj" step watch --store "file:$w/fs" --node n1 --interval 1h 2>"$w/err" >/dev/null
python3 -c 'import sys; t=open(sys.argv[1],"rb").read(); sys.exit(1 if b"\r" in t or b"\x1b" in t else 0)' "$w/err" &&
  ok "step watch: no progress when stderr is a file" || notok "step watch: no progress when stderr is a file"

# stdin a terminal: said on stderr (script(1)'s stdin is its terminal; ^D ends it).
printf '\004' | script -qefc "'$lj' lock judge" /dev/null >"$w/tty" 2>&1
grep -q "reading stdin, a terminal" "$w/tty" && ok "lock judge on a terminal's stdin says so" ||
  { notok "lock judge on a terminal's stdin says so"; sed 's/^/# /' "$w/tty" | head -3; }
"$lj" lock judge </dev/null >/dev/null 2>"$w/err"
grep -q "reading stdin" "$w/err" && notok "... and not when stdin is no terminal" ||
  ok "... and not when stdin is no terminal"

echo "1..$n"
[ "$failed" -eq 0 ]
