#!/usr/bin/env bash
# Checks the README's "Use it in your module" instructions: creates a fresh
# module outside this checkout that depends on it through a replace
# directive, adds the documented pins, runs go mod tidy, then builds and runs
# a small program that uses enforce (its gorgonia dependency included, so a
# wrong assume-no-moving-gc version would panic at start-up).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

go mod init example.com/enforceuser >/dev/null 2>&1
# The README's commands, with the checkout in place of ../enforce.
go mod edit -require=github.com/enforce-nn/enforce@v0.0.0 -replace=github.com/enforce-nn/enforce="$repo"
go get go4.org/unsafe/assume-no-moving-gc@v0.0.0-20231121144256-b99613f794b6 gonum.org/v1/gonum@v0.15.1

cat >main.go <<'GO'
package main

import (
	"fmt"
	"log"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/hd"
)

func main() {
	// The unit circle y₁² + y₂² = 1.
	c, err := enforce.Func(0, 2, 1, func(_, y, c []hd.Number) {
		c[0] = hd.Sub(hd.Add(hd.Square(y[0]), hd.Square(y[1])), hd.Const(1))
	})
	if err != nil {
		log.Fatal(err)
	}
	a, err := enforce.NewAdaNP(c, enforce.Settings{})
	if err != nil {
		log.Fatal(err)
	}
	y, st, err := a.Project(nil, mat.NewDense(1, 2, []float64{1, 1}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("projected (%.6f, %.6f), converged %t\n", y.At(0, 0), y.At(0, 1), st.Converged())
}
GO

go mod tidy
for want in 'go4.org/unsafe/assume-no-moving-gc v0.0.0-20231121144256-b99613f794b6' 'gonum.org/v1/gonum v0.15.1'; do
  if ! grep -q "$want" go.mod; then
    echo "fresh module: go.mod lacks $want:"; cat go.mod; exit 1
  fi
done
go vet ./...
go build -o enforceuser .
out=$(./enforceuser)
echo "fresh module: $out"
if [ "$out" != "projected (0.707107, 0.707107), converged true" ]; then
  echo "fresh module: unexpected output"; exit 1
fi
