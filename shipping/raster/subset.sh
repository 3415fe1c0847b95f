#!/bin/sh
# Regenerates the embedded fonts: the X11 misc-fixed fonts 10x20 (regular) and 9x18B (bold),
# public domain, from Debian's xfonts-base package, cut to ISO 8859-1 (the characters a label
# prints; others are drawn as '?'). Needs apt-get and pcf2bdf (Debian package pcf2bdf).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
apt-get download xfonts-base >/dev/null
dpkg-deb -x xfonts-base_*.deb root
cp root/usr/share/doc/xfonts-base/copyright "$here/misc-fixed.COPYRIGHT"
for f in 10x20 9x18B; do
  zcat "root/usr/share/fonts/X11/misc/$f.pcf.gz" >"$f.pcf"
  pcf2bdf -o "$f.bdf" "$f.pcf"
  # Keep the header and the glyphs encoded 32-126 and 160-255, and recount CHARS.
  awk '
    /^STARTCHAR/ { buf = $0 "\n"; inchar = 1; next }
    inchar { buf = buf $0 "\n" }
    inchar && /^ENCODING/ { enc = $2 + 0 }
    inchar && /^ENDCHAR/ {
      inchar = 0
      if ((enc >= 32 && enc <= 126) || (enc >= 160 && enc <= 255)) { glyphs = glyphs buf; n++ }
      next
    }
    !inchar && /^CHARS / { next }
    !inchar && /^$/ { next }
    !inchar && /^ENDFONT/ { next }
    !inchar { head = head $0 "\n" }
    END { printf "%sCHARS %d\n%sENDFONT\n", head, n, glyphs }
  ' "$f.bdf" >"$here/$f.bdf"
done
