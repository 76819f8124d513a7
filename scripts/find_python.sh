#!/usr/bin/env bash
# Print the path of a Python 3.12 or 3.13 interpreter: on PATH first, then pyenv's installs.
set -u
for candidate in python3.12 python3.13 python3; do
    if path=$(command -v "$candidate" 2>/dev/null) \
        && "$path" -c 'import sys; sys.exit(0 if (3, 12) <= sys.version_info[:2] < (3, 14) else 1)' 2>/dev/null; then
        echo "$path"; exit 0
    fi
done
if command -v pyenv >/dev/null 2>&1; then
    root=$(pyenv root)
    for minor in 12 13; do
        for v in $(ls "$root/versions" 2>/dev/null | grep -E "^3\.$minor\.[0-9]+$" | sort -rV); do
            exe="$root/versions/$v/bin/python3.$minor"
            [ -x "$exe" ] && { echo "$exe"; exit 0; }
        done
    done
fi
echo "error: this project needs Python 3.12 or 3.13 (not found on PATH nor in pyenv)." >&2
echo "       install it (e.g. 'pyenv install 3.12' or your OS package python3.12) and retry." >&2
exit 1
