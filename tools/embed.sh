#!/bin/sh
# embed.sh NAME < file > header: turn a text file into a C string constant NAME.
name="$1"
printf '/* generated from a source file by tools/embed.sh: do not edit */\n'
printf 'static const char %s[] =\n' "$name"
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$/\\n"/'
printf ';\n'
