# Sourced by the test scripts that signal a running render: they wait on
# what the render says of its progress (--progress lines), never on a sleep
# that a faster or slower machine would lose.

# wait_for_line FILE REGEX SECONDS: true once FILE has a line matching the
# extended regular expression REGEX; false if none came within SECONDS.
wait_for_line() {
    local i
    for ((i = 0; i < $3 * 20; i++)); do
        grep -qE -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}
