#!/usr/bin/env bash
# Makes sure headless Chromium (Debian's `chromium` package, /usr/bin/chromium) is there for the console's browser
# tests (tests/console). Installs it with apt-get when it is missing and this runs as root (or with password-less
# sudo) on a machine with apt-get; otherwise says why not and exits 0: the browser tests then skip, naming the reason.
# Used by `npm test`. SKIP_CHROMIUM=1 skips it.
set -uo pipefail
if [ "${SKIP_CHROMIUM:-0}" = 1 ]; then exit 0; fi
log() { printf '[chromium] %s %s\n' "$(date -u +%H:%M:%S)" "$*"; }
BIN=${CHROMIUM_PATH:-/usr/bin/chromium}
if [ -x "$BIN" ]; then exit 0; fi
if ! command -v apt-get >/dev/null 2>&1; then log "not installed and apt-get is not available: the browser tests will skip"; exit 0; fi
SUDO=()
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO=(sudo -n); else
    log "not installed and not running as root (nor password-less sudo): the browser tests will skip"; exit 0
  fi
fi
LOG=${TMPDIR:-/tmp}/gateway-chromium-install.log
log "installing Debian's chromium package (output in $LOG)"
export DEBIAN_FRONTEND=noninteractive
if { "${SUDO[@]}" apt-get update && "${SUDO[@]}" apt-get install -y --no-install-recommends chromium; } </dev/null >"$LOG" 2>&1 && [ -x "$BIN" ]; then
  log "installed: $("$BIN" --version 2>/dev/null || echo "$BIN")"
else
  log "could not install chromium (last lines of $LOG below): the browser tests will skip"
  tail -n 5 "$LOG" || true
fi
exit 0
