#!/usr/bin/env bash
# Install the external programs chemgauge's real back-ends use, when missing.
# As root (CI, a fresh machine) they are installed with apt; otherwise we say what is missing.
set -euo pipefail

missing=()
command -v java >/dev/null 2>&1 || missing+=("default-jre-headless")
# javac compiles the small OPSIN line server once (without it OPSIN runs in plain CLI mode)
command -v javac >/dev/null 2>&1 || missing+=("default-jdk-headless")
command -v osra >/dev/null 2>&1 || missing+=("osra")
# MOPAC 22 (INDO/S-CIS): the p2s ultraviolet-visible provider
command -v mopac >/dev/null 2>&1 || missing+=("mopac")
# Headless browser for the HTML report tests (Debian's package; the binary is `chromium`).
command -v chromium >/dev/null 2>&1 || missing+=("chromium")

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing system packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "warning: missing system packages: ${missing[*]} (install them with apt-get)" >&2
fi
