#!/bin/sh
# machine_lock.sh - the one lock on the machine that the phases of make test take while they run side by side.
#
#   sh tools/machine_lock.sh shared|alone [COMMAND [ARG...]]
#
# A check that judges time, CPU shares or sample counts against what the machine gives runs alone; everything else
# shares the machine. With a command: runs it while holding the lock and exits with its status (the command does
# not inherit the lock: a daemon it leaves behind holds nothing). Without one: prints "locked" once the lock is held
# and holds it until standard input ends (how the Java and Python harnesses hold it around a check).
# Alone goes first: a waiting alone holder keeps new shared holders out (they pass a gate it closes), so a stream
# of shared work cannot starve it; at most $JSAMPLER_LOCK_SLOTS (5) shared holders run at once. The lock files live in
# $JSAMPLER_LOCK_DIR (default: build/).
set -eu
mode=${1:-}
[ $# -gt 0 ] && shift
dir=${JSAMPLER_LOCK_DIR:-$(cd "$(dirname "$0")/.." && pwd)/build}
mkdir -p "$dir"
exec 8>>"$dir/machine.lock" 9>>"$dir/machine.gate"
case $mode in
alone)
    flock -x 9
    flock -x 8
    ;;
shared)
    flock -s 9
    flock -s 8
    flock -u 9
    # and one of the slots: at most JSAMPLER_LOCK_SLOTS shared holders at once (the machine has 2 cores)
    slots=${JSAMPLER_LOCK_SLOTS:-5}
    while :; do
        i=0
        while [ "$i" -lt "$slots" ]; do
            exec 7>>"$dir/machine.slot$i"
            if flock -n -x 7; then
                break 2
            fi
            exec 7>&-
            i=$((i + 1))
        done
        sleep 0.2
    done
    ;;
*)
    echo "usage: machine_lock.sh shared|alone [COMMAND [ARG...]]" >&2
    exit 2
    ;;
esac
flock -u 9 2>/dev/null || :
if [ $# -eq 0 ]; then
    echo locked
    cat >/dev/null
    exit 0
fi
"$@" 7>&- 8>&- 9>&-
