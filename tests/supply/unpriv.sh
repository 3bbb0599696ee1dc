# unpriv.sh — sourced by the supply tests: sets $unpriv to a command prefix that runs a
# command as an unprivileged user (root reads any file, so unreadable-file cases need one):
# plain `env` when not root, else setpriv or runuser as uid 65534; empty when neither can.
unpriv=""
if [ "$(id -u)" != 0 ]; then unpriv="env"
elif command -v setpriv > /dev/null && setpriv --reuid=65534 --regid=65534 --clear-groups -- true 2>/dev/null; then
  unpriv="setpriv --reuid=65534 --regid=65534 --clear-groups --"
elif command -v runuser > /dev/null && runuser -u nobody -- true 2>/dev/null; then unpriv="runuser -u nobody --"; fi
