#!/usr/bin/env bash
# Copy the UI's browser libraries, at pinned versions, from the npm registry into ui/static/vendor, with their
# licenses. The output is committed: installing or testing evalkit needs no npm. Re-run after changing a pin.
#   bash ui/vendor.sh
set -euo pipefail
cd "$(dirname "$0")"
out=static/vendor
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# name version file-in-package -> static/vendor/<name>-<version>.js
libraries=(
  "diff 9.0.0 dist/diff.min.js"   # jsdiff: word-level diffs of case outputs on the compare page (BSD-3-Clause)
)

mkdir -p "$out"
rm -f "$out"/*
for entry in "${libraries[@]}"; do
  read -r name version file <<<"$entry"
  (cd "$work" && npm pack --silent "$name@$version" >/dev/null)
  tarball="$work/$name-$version.tgz"
  mkdir -p "$work/$name"
  tar -xzf "$tarball" -C "$work/$name"
  cp "$work/$name/package/$file" "$out/$name-$version.js"
  license=$(ls "$work/$name/package" | grep -i -m1 -E '^(license|licence)')
  cp "$work/$name/package/$license" "$out/$name-$version.LICENSE.txt"
  echo "$name $version $(sha256sum "$tarball" | cut -d' ' -f1) $file" >>"$out/VERSIONS.txt"
done
echo "copied into ui/$out:"
cat "$out/VERSIONS.txt"
