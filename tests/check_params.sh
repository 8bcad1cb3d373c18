#!/bin/sh
# Every WEFT_* setting the library reads through its parameter functions is
# described in a parameter table (the engine's in src/util/param.c, or its
# driver's in src/drivers/: what weft-info prints) and in the README's table
# of variables.
#   check_params.sh SOURCE_DIR
set -u
src=$1
vars=$(grep -rhoE 'weft__param_[a-z]+\("WEFT_[A-Z0-9_]+"' "$src/src" | grep -oE 'WEFT_[A-Z0-9_]+' |
    sort -u)
[ -n "$vars" ] || { echo "check_params: found no parameters in $src/src"; exit 1; }
bad=0
for v in $vars; do
    cat "$src/src/util/param.c" "$src"/src/drivers/*/*.c | grep -q "{\"$v\"," ||
        { echo "$v: in no parameter table (src/util/param.c, a driver's params)"; bad=1; }
    grep -q "| \`$v\` |" "$src/README.md" || { echo "$v: not in README.md's table"; bad=1; }
done
[ $bad -eq 0 ] && echo "check_params: $(echo "$vars" | wc -l) parameters documented"
exit $bad
