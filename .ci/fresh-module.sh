#!/usr/bin/env bash
# Checks the README's "Install" section as written: extracts
# the main.go and the command block marked <!-- ci:fresh-module ... --> from
# README.md, lays out <tmp>/enforce (this checkout) and <tmp>/myapp (an empty
# module created with go mod init, as step 1 says), writes main.go, runs the
# README's commands there unchanged, and checks the output and go.mod. A
# wrong assume-no-moving-gc version would make the program panic at start.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# block MARKER prints the fenced code block that follows the line
# "<!-- ci:fresh-module MARKER -->" in README.md, without its fences.
block() {
  awk -v want="<!-- ci:fresh-module $1 -->" '
    $0 == want { found = 1; next }
    found == 1 && /^```/ { found = 2; next }
    found == 2 && /^```/ { exit }
    found == 2 { print }
  ' "$repo/README.md"
}
main_go=$(block main.go)
commands=$(block commands)
if [ -z "$main_go" ] || [ -z "$commands" ]; then
  echo "fresh module: README.md lacks the marked main.go or commands block"; exit 1
fi

ln -s "$repo" "$tmp/enforce"
mkdir "$tmp/myapp"
cd "$tmp/myapp"
go mod init example.com/myapp >/dev/null 2>&1
printf '%s\n' "$main_go" >main.go
echo "fresh module: running the README's commands:"
printf '%s\n' "$commands" | sed 's/^/  /'
out=$(bash -euo pipefail -c "$commands")
echo "fresh module: $out"
if [ "$out" != "projected (0.707107, 0.707107), converged true" ]; then
  echo "fresh module: unexpected output"; exit 1
fi
for want in 'go4.org/unsafe/assume-no-moving-gc v0.0.0-20231121144256-b99613f794b6' 'gonum.org/v1/gonum v0.15.1' 'github.com/enforce-nn/enforce v0.0.0'; do
  if ! grep -q "$want" go.mod; then
    echo "fresh module: go.mod lacks $want:"; cat go.mod; exit 1
  fi
done
go vet ./...
