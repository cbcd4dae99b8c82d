#!/bin/sh
# Install fxscope's desktop integration (launcher, MIME types, AppStream metadata, icons) under a prefix:
#
#   packaging/linux/install.sh [PREFIX]        # default PREFIX: ~/.local
#
# The desktop file runs `fxscope` from PATH (pip install --user puts it in ~/.local/bin); to launch the
# standalone bundle instead, set FXSCOPE_EXEC to its executable, e.g. FXSCOPE_EXEC=/opt/fxscope/fxscope.
# The MIME, desktop and icon caches under PREFIX are refreshed when their tools are installed.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
icons=$(cd "$here/../../resources/icons" && pwd)
prefix=${1:-$HOME/.local}
share=$prefix/share
app_id=io.github.fxscope.fxscope

put() {  # put SOURCE TARGET: copy with mode 644, creating the directories
    mkdir -p "$(dirname "$2")"
    cp "$1" "$2.tmp.$$" && chmod 644 "$2.tmp.$$" && mv -f "$2.tmp.$$" "$2"
}

desktop=$share/applications/$app_id.desktop
put "$here/$app_id.desktop" "$desktop"
if [ -n "${FXSCOPE_EXEC:-}" ]; then
    case $FXSCOPE_EXEC in
        /*) ;;
        *) echo "install.sh: FXSCOPE_EXEC must be an absolute path" >&2; exit 2 ;;
    esac
    case $FXSCOPE_EXEC in
        *[!A-Za-z0-9/._+-]*) echo "install.sh: FXSCOPE_EXEC may hold only letters, digits and / . _ + -" >&2; exit 2 ;;
    esac
    sed -e "s|^Exec=fxscope |Exec=$FXSCOPE_EXEC |" -e "s|^TryExec=fxscope\$|TryExec=$FXSCOPE_EXEC|" \
        "$desktop" > "$desktop.tmp.$$" && mv -f "$desktop.tmp.$$" "$desktop"
fi
put "$here/fxscope.xml" "$share/mime/packages/fxscope.xml"
put "$here/$app_id.metainfo.xml" "$share/metainfo/$app_id.metainfo.xml"
for size in 16 32 48 64 128 256; do
    put "$icons/fxscope-$size.png" "$share/icons/hicolor/${size}x${size}/apps/fxscope.png"
done
put "$icons/fxscope.svg" "$share/icons/hicolor/scalable/apps/fxscope.svg"

if command -v update-mime-database >/dev/null 2>&1; then
    update-mime-database "$share/mime"
fi
if command -v update-desktop-database >/dev/null 2>&1; then
    update-desktop-database -q "$share/applications"
fi
if command -v gtk-update-icon-cache >/dev/null 2>&1; then
    gtk-update-icon-cache -q -t -f "$share/icons/hicolor" || true  # a missing cache only slows lookups
fi
echo "installed fxscope desktop integration under $prefix"
