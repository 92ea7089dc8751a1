#!/usr/bin/env bash
# Regenerates engine/events/fb/ from engine/events/schema/events.fbs (needs flatc >= 2.0).
set -euo pipefail
cd "$(dirname "$0")/.."
out=engine/events/fb
rm -rf "$out"
flatc --ts -o "$out" engine/events/schema/events.fbs
# NodeNext resolution wants explicit .js extensions on relative imports.
find "$out" -name "*.ts" -print0 | xargs -0 sed -i -E "s@(from '\.{1,2}/[^']+)';@\1.js';@"
echo "generated $(find "$out" -name '*.ts' | wc -l) files in $out"
