#!/usr/bin/env bash
# Regenerate docs/img/html-report.png: the HTML report of the shipped samples, filtered to failures,
# as headless Chromium (Debian's chromium package) draws it. Run from anywhere: bash tools/html_report_screenshot.sh
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
hatch run agentevals run examples/traces/helm.json examples/traces/k8s.json examples/traces/helm_3.json \
  -e examples/evalsets/eval_set_helm.json -m tool_trajectory_avg_score -m response_match_score \
  --no-store -o "html=$work/report.html" -o summary >/dev/null || true
sandbox=(); [ "$(id -u)" = 0 ] && sandbox=(--no-sandbox)
chromium --headless "${sandbox[@]}" --disable-gpu --hide-scrollbars --window-size=1100,1000 \
  --screenshot="$work/shot.png" "file://$work/report.html#status=FAILING&open=d497c9dd55717f2c5ecb79bda3028993" 2>/dev/null
mv "$work/shot.png" docs/img/html-report.png
ls -l docs/img/html-report.png
