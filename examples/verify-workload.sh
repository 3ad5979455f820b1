#!/bin/sh
# Checks what `leasehold run` did to a workload from make-workload.sh: every file has a .gz
# that decompresses to it, and a checksum file that matches it. Exits 1 on the first miss.
set -eu
dir=${1:-/tmp/leasehold-workload}
n=0
for f in "$dir"/files/*.txt; do
    name=$(basename "$f" .txt)
    gzip -dc "$f.gz" | cmp -s - "$f" || { echo "bad or missing $f.gz" >&2; exit 1; }
    sha256sum -c --status "$dir/sums/$name.sha256" || { echo "bad or missing checksum of $f" >&2; exit 1; }
    n=$((n + 1))
done
echo "verified $n files: every .gz and every checksum"
