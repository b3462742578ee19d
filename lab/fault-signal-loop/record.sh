#!/usr/bin/env bash
# record.sh [VARIANT...]: record every variant (or those named) into traces/ with the flag sets
# f-tt-T-yy, f-tt and f (../record-variants.sh says how).
exec "$(dirname "${BASH_SOURCE[0]}")/../record-variants.sh" "$(dirname "${BASH_SOURCE[0]}")" "$@"
