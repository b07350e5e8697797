#!/bin/sh
# The root postinstall: builds the web console into console/dist (vite build, a few seconds; docs/console.md).
# Never fails the install: an install without dev dependencies (`bun install --production`, the container image) has no
# vite, and a failed build should not stop the gateway from installing. Either way it says so, and /console then
# answers 503 console_not_built with the command to run. tests/console/bundle-size.test.ts fails when the build fails.
cd "$(dirname "$0")/../console" || exit 0
VITE=../node_modules/.bin/vite
if [ ! -e "$VITE" ]; then
  echo "[console] not built: vite is not installed (an install without dev dependencies); /console will answer 503"
  exit 0
fi
if command -v node >/dev/null 2>&1; then node "$VITE" build; else bun --bun "$VITE" build; fi || {
  echo "[console] the build failed (above); /console will answer 503 until \`npm run build -w @gateway/console\` succeeds"
}
exit 0
