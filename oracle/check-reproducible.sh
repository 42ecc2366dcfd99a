#!/usr/bin/env bash
# Re-capture every golden into a temp dir and diff against the committed ones (exit 1 on any difference).
exec "$(dirname "${BASH_SOURCE[0]}")/regen-goldens.sh" --check "$@"
