# Sourced by load.sh and profile.sh: starting the accessory and waiting until it listens.

# Whether a socket listens on TCP port $1, from the kernel's table: a test connection would run
# the accessory's connection code, and what a script measures next (RSS after a restart, a
# profile) would count it.
listening() {
    awk -v port=":$(printf '%04X' "$1")" 'substr($2, length($2) - 4) == port && $4 == "0A" { found = 1 } END { exit !found }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# Waits up to 10 s for port $1; if nothing listens by then, prints log file $2 and exits.
wait_listening() {
    for _ in $(seq 100); do
        listening "$1" && return 0
        sleep 0.1
    done
    echo "the accessory did not start; its log:" >&2
    cat "$2" >&2
    exit 1
}
