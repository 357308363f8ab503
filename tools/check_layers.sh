#!/bin/sh
# check_layers.sh OBJDIR - fail when the code breaks its layering (make check-layers).
#
# 1. Includes: a file of layer L (src/L/, include/L/) includes only headers of L and of the layers
#    below it, named "layer/name.h"; a header without a folder must be a private *_int.h beside it.
# 2. The signal-safe zone: no object of src/sample/ references allocation, stdio, strerror, pthread
#    mutexes or condition variables (its undefined symbols, read with nm), and no file there
#    includes jvmti.h.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OBJ=${1:-$ROOT/build/obj}
cd "$ROOT"

# allowed LAYER: the layers a file of LAYER may include from (its own first).
allowed() {
    case $1 in
    util) echo "util" ;;
    sample) echo "sample util" ;;
    engine) echo "engine sample util" ;;
    output) echo "output proto util" ;; # proto: the pprof profile protoc-c generates from proto/pprof
    jfr) echo "jfr output util" ;;
    core) echo "core jfr output engine sample util" ;;
    agent) echo "agent backend core jfr output engine sample util" ;;
    attach) echo "attach util" ;;
    backend) echo "backend proto util" ;; # proto: the messages protoc-c generates from proto/
    tool) echo "tool attach core jfr output util" ;; # core: the option syntax (args.h) only
    *) echo "" ;;
    esac
}

bad=0
for f in src/*/*.c src/*/*.h include/*/*.h; do
    layer=$(basename "$(dirname "$f")")
    ok=$(allowed "$layer")
    if [ -z "$ok" ]; then
        echo "check-layers: $f: folder '$layer' is not a known layer (add it to tools/check_layers.sh)"
        bad=1
        continue
    fi
    for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
        case $inc in
        */*)
            dep=${inc%%/*}
            case " $ok " in
            *" $dep "*) ;;
            *) echo "check-layers: $f (layer $layer) includes $inc: '$dep' is not below '$layer'"; bad=1 ;;
            esac ;;
        *_int.h | flamegraph_html.h)
            [ "$inc" = flamegraph_html.h ] || [ -f "$(dirname "$f")/$inc" ] ||
                { echo "check-layers: $f includes $inc, which is not beside it"; bad=1; } ;;
        *) echo "check-layers: $f includes \"$inc\": name public headers as \"layer/name.h\""; bad=1 ;;
        esac
    done
done

FORBIDDEN='^(malloc|calloc|realloc|free|strdup|strndup|aligned_alloc|posix_memalign|[a-z_]*printf[a-z_]*|fopen|fopen64|fdopen|fclose|fwrite|fread|fputs|fputc|puts|putchar|fflush|fgets|getline|perror|strerror|strerror_r|syslog|pthread_mutex_[a-z_]*|pthread_cond_[a-z_]*|pthread_rwlock_[a-z_]*|sem_wait)$'
n=0
for o in "$OBJ"/sample/*.o; do
    [ -f "$o" ] || continue
    n=$((n + 1))
    syms=$(nm -u "$o" | awk '{print $2}' | sed 's/@.*//' | grep -E "$FORBIDDEN" || true)
    if [ -n "$syms" ]; then
        echo "check-layers: $o (signal-safe zone) references:" $syms
        bad=1
    fi
done
if [ "$n" -eq 0 ]; then
    echo "check-layers: no objects in $OBJ/sample (build first)"
    exit 1
fi
if grep -l 'jvmti.h' src/sample/* include/sample/* 2>/dev/null; then
    echo "check-layers: the files above include jvmti.h inside the signal-safe zone"
    bad=1
fi
[ "$bad" -eq 0 ] || exit 1
echo "check-layers: passed ($(ls src/*/*.c | wc -l) sources in $(ls -d src/*/ | wc -l) layers; $n signal-safe objects)"
