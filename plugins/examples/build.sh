#!/bin/sh
# Builds every example plugin to plugins/examples/<name>.wasm: the Go ones with
# GOOS=wasip1 GOARCH=wasm, the others (C, WAT, AssemblyScript) with the Makefile
# in their folder (`make plugin-toolchains` installs what they need).
# Usage: plugins/examples/build.sh   (from anywhere inside the repository)
set -eu
cd "$(dirname "$0")"
for dir in */; do
	name=${dir%/}
	if [ -f "$name/main.go" ]; then
		echo "building $name.wasm"
		(cd "$name" && GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 go build -buildmode=c-shared -trimpath -o "../$name.wasm" .)
	elif [ -f "$name/Makefile" ]; then
		echo "building $name.wasm"
		make -s -C "$name" OUT="$PWD/$name.wasm"
	fi
done
