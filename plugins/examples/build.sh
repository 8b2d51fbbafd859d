#!/bin/sh
# Builds every example plugin to plugins/examples/<name>.wasm.
# Usage: plugins/examples/build.sh   (from anywhere inside the repository)
set -eu
cd "$(dirname "$0")"
for dir in */; do
	name=${dir%/}
	[ -f "$name/main.go" ] || continue
	echo "building $name.wasm"
	(cd "$name" && GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 go build -buildmode=c-shared -trimpath -o "../$name.wasm" .)
done
