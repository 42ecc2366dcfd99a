#!/bin/sh
# A stand-in for `oracle/capture.py --serve` (no Python): ready, then one
# answer per case line, misbehaving on purpose by case id: `crash` exits,
# `hang` sleeps, `garbage` prints a non-result, `wrong-id` answers another id;
# any other case gets {"id": ID, "ok": {"name": "fake"}}.
echo '{"ready":true,"torch":"fake"}'
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -E 's/^\{"id":"([^"]*)".*/\1/')
  case "$id" in
    *crash*) exit 3 ;;
    *hang*) sleep 30 ;;
    *garbage*) echo 'Traceback (most recent call last):' ;;
    *wrong-id*) echo '{"id":"other","ok":{"name":"fake"}}' ;;
    *) printf '{"id":"%s","ok":{"name":"fake"}}\n' "$id" ;;
  esac
done
