#!/usr/bin/env bash
# compare.sh [varbench flags]: make bench-variants. Builds bin/gatehouse, PocketBase v0.40.4
# (make pocketbase) and, when the system has libvips (Debian libvips-dev, found by pkg-config),
# the libvips ceiling bench/vipsthumb (its own module, cgo); then runs varbench -mode compare
# from its own process: each server in turn on the same photographs and sizes, VARIANTS_ROUNDS
# rounds (3). Without libvips the ceiling is skipped with a message.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
cd "$root"
go build -o bin/gatehouse ./edge/cmd/gatehouse
go build -o bin/varbench ./products/files/bench/varbench
make -s pocketbase
vips=
if pkg-config --exists vips 2>/dev/null; then
  (cd bench/vipsthumb && GOFLAGS= CGO_ENABLED=1 go build -o ../../bin/vipsthumb .)
  vips=bin/vipsthumb
else
  echo "libvips is missing (pkg-config vips; Debian: apt-get install libvips-dev): the libvips ceiling is skipped"
fi
exec bin/varbench -mode compare -rounds "${VARIANTS_ROUNDS:-3}" -vips "$vips" "$@"
