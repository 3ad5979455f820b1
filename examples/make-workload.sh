#!/bin/sh
# Writes a real, offline workload for `leasehold run` into DIR (default /tmp/leasehold-workload):
#
#   DIR/files/f-NNN.txt   COUNT (default 200) text files of generated lines, the same every time
#   DIR/jobs.txt          two jobs per file: `gzip -kf FILE` (plain: executed directly) and
#                         `sha256sum FILE > DIR/sums/f-NNN.sha256` (a redirect: run by `sh -c`)
#
# then:  leasehold run DIR/jobs.txt --database sqlite://DIR/queue.db
# and:   examples/verify-workload.sh DIR    (every .gz tests good, every checksum matches)
set -eu
dir=${1:-/tmp/leasehold-workload}
count=${2:-200}
mkdir -p "$dir/files" "$dir/sums"
dir=$(cd "$dir" && pwd)
rm -f "$dir"/files/* "$dir"/sums/*
: > "$dir/jobs.txt"
echo "# leasehold example workload: compress and checksum $count generated files" >> "$dir/jobs.txt"
i=1
while [ "$i" -le "$count" ]; do
    name=$(printf 'f-%03d' "$i")
    # 400 lines of deterministic text; the seed differs per file.
    awk -v seed="$i" 'BEGIN {
        x = seed * 7919;
        for (n = 1; n <= 400; n++) {
            x = (x * 1103515245 + 12345) % 2147483648;
            printf "file %d line %d value %d lorem ipsum dolor sit amet %x\n", seed, n, x, x
        }
    }' > "$dir/files/$name.txt"
    echo "gzip -kf $dir/files/$name.txt" >> "$dir/jobs.txt"
    echo "sha256sum $dir/files/$name.txt > $dir/sums/$name.sha256" >> "$dir/jobs.txt"
    i=$((i + 1))
done
echo "wrote $count files and $((count * 2)) jobs: $dir/jobs.txt" >&2
