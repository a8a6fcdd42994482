#!/usr/bin/env bash
# Type-checks the whole module, tests included, under gorgonia's cuda build
# tag: go vet -tags cuda ./...  It needs the CUDA driver API headers
# (/usr/include/cuda.h, Debian's non-free nvidia-cuda-dev; see docs/cuda.md)
# and skips with a message without them. Without cuDNN's
# cudnn.h, which gorgonia.org/cu/dnn includes and Debian does not ship, it
# vets a copy of the module in which gorgonia.org/cu/dnn is replaced by a
# pure-Go stub declaring the three names gorgonia's root and cuda packages
# use (Context, NewContext, Context.Close): everything else, gorgonia.org/cu
# and gorgonia's cuda code included, is compiled for real. No GPU is needed;
# a cuda binary cannot run without one (gorgonia.org/cu exits at init).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)

if [ ! -f /usr/include/cuda.h ] && [ ! -f /usr/local/cuda/include/cuda.h ]; then
  echo "cuda vet: skipped: no cuda.h (apt-get install nvidia-cuda-dev from Debian's non-free component)"
  exit 0
fi
if echo '#include <cudnn.h>' | gcc -E -I/usr/local/cuda/include -I/usr/include/x86_64-linux-gnu - >/dev/null 2>&1; then
  cd "$repo"
  go vet -tags cuda ./...
  echo "cuda vet: passed with cudnn.h"
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$repo"
git ls-files -co --exclude-standard -z | tar --null -T - -c | tar -x -C "$tmp/"
go mod download gorgonia.org/cu
cu=$(go list -m -f '{{.Dir}}' gorgonia.org/cu)
mkdir -p "$tmp/.cu"
cp -r "$cu/." "$tmp/.cu/"
chmod -R u+w "$tmp/.cu"
rm -rf "$tmp/.cu/dnn"
mkdir "$tmp/.cu/dnn"
cat >"$tmp/.cu/dnn/stub.go" <<'GO'
// Package cudnn stands in for gorgonia.org/cu/dnn where cudnn.h is missing.
package cudnn

// Context stands in for a cuDNN handle.
type Context struct{}

// NewContext returns a Context.
func NewContext() *Context { return &Context{} }

// Close does nothing.
func (*Context) Close() error { return nil }
GO
cd "$tmp"
go mod edit -replace=gorgonia.org/cu="$tmp/.cu"
# gcc warns about deprecated CUDA driver functions that gorgonia.org/cu wraps
# and about an implicit declaration in its callback glue.
CGO_CFLAGS="${CGO_CFLAGS:-} -Wno-deprecated-declarations -Wno-implicit-function-declaration" go vet -tags cuda ./...
echo "cuda vet: passed (gorgonia.org/cu/dnn stubbed: no cudnn.h)"
