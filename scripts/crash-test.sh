#!/usr/bin/env bash
# Kills `records` with SIGKILL at random moments and checks that nothing was
# lost, half-written or left behind.
#
#   scripts/crash-test.sh [--seconds N | --iterations N] [--seed N] [--records PATH]
#
# Scenarios, each given an equal share of --seconds (150 by default) or run
# --iterations times:
#   people-add     records people add
#   picture-set    records coffee picture set with a 20 MB picture, from a
#                  file and from a pipe, replacing another 20 MB picture
#   picture-get    records coffee picture get over an existing file
#   users-import   the first open of a database made by the original Users
#                  tutorial (plain-text passwords hashed on first open)
#   first-install  records --database NEWPATH people list (the sample
#                  database installed on first use)
#
# After every kill: PRAGMA integrity_check is ok; every acknowledged write
# (the command printed its result or exited 0 before the kill) is there;
# nothing is partial (a person has all their fields, a picture is the whole
# new file or the whole old one with its type, a copy is the whole picture
# or the old file, the import happened entirely or not at all); no file is
# left besides the database, its -journal/-wal/-shm and the inputs, and
# nothing in TMPDIR; and the next run works.
#
# It uses .build/debug/records (or .build/release/records, or --records),
# building it if there is none, and the sqlite3 command-line shell (see
# scripts/bootstrap.sh). The last line is "N passed, M failed"; the status
# is 1 if any check failed, and the evidence is kept in the printed folder.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

seconds=150
iterations=
seed=$(((RANDOM << 15) | RANDOM))
records=
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds=$2; shift 2 ;;
        --iterations) iterations=$2; shift 2 ;;
        --seed) seed=$2; shift 2 ;;
        --records) records=$2; shift 2 ;;
        -h | --help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "crash-test: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
done

if [ -z "$records" ]; then
    for candidate in .build/debug/records .build/release/records; do
        if [ -x "$candidate" ]; then records=$candidate; break; fi
    done
fi
if [ -z "$records" ]; then
    echo "crash-test: building records" >&2
    swift build --product records >&2 || exit 1
    records=.build/debug/records
fi
records=$(cd "$(dirname "$records")" && pwd)/$(basename "$records")
command -v sqlite3 >/dev/null || { echo "crash-test: needs the sqlite3 shell (scripts/bootstrap.sh installs it)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/records-crash-test.XXXXXX")
inputs=$work/inputs
mkdir -p "$inputs" "$work/tmp" "$work/home"
# Whatever records writes to a temporary directory lands where it is checked.
export TMPDIR=$work/tmp HOME=$work/home XDG_DATA_HOME=$work/home/data
unset RECORDS_DATABASE
RANDOM=$seed
echo "crash-test: $records, seed $seed, work folder $work" >&2

passed=0
failed=0
scenario=
iteration=0

pass() { passed=$((passed + 1)); }

# fail MESSAGE: counts a failure and keeps a copy of the folder under test
# (of the first three failed runs of each scenario: pictures are large).
fail() {
    failed=$((failed + 1))
    echo "FAIL $scenario #$iteration: $1" >&2
    local keep=$work/failures/$scenario-$iteration
    local kept
    kept=$(find "$work/failures" -maxdepth 1 -name "$scenario-*" 2>/dev/null | wc -l)
    if [ -n "${dir:-}" ] && [ -d "$dir" ] && [ ! -e "$keep" ] && [ "$kept" -lt 3 ]; then
        mkdir -p "$work/failures" && cp -a "$dir" "$keep"
        cp -a "$work/out" "$work/err" "$keep/" 2>/dev/null
    fi
}

check() { # check CONDITION-STATUS MESSAGE
    if [ "$1" -eq 0 ]; then pass; else fail "$2"; fi
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# run_and_kill MAX_MS INPUT COMMAND...: runs the command (standard input
# from the file INPUT, or through a pipe from FILE for pipe:FILE; stdout to
# $work/out, stderr to $work/err), sends SIGKILL after a random delay below
# MAX_MS, and sets `status` (137 when killed) and `finished` (1 when the
# command had ended on its own).
run_and_kill() {
    local max=$1 input=$2
    shift 2
    local delay=$((RANDOM * 32768 + RANDOM))
    delay=$((delay % (max > 0 ? max : 1)))
    # Emptied here: a kill that lands before the child has opened them
    # would otherwise leave the previous run's output to be read as this
    # one's (an "acknowledged" ID that this run never printed).
    : >"$work/out"
    : >"$work/err"
    if [[ "$input" == pipe:* ]]; then
        # A real pipe, not a file: $! is the pipeline's last command, records.
        # shellcheck disable=SC2002
        cat "${input#pipe:}" 2>/dev/null | "$@" >"$work/out" 2>"$work/err" &
    else
        "$@" <"$input" >"$work/out" 2>"$work/err" &
    fi
    local pid=$!
    sleep "$((delay / 1000)).$(printf '%03d' $((delay % 1000)))"
    kill -KILL "$pid" 2>/dev/null
    # (wait's own stderr would get bash's "Killed" notice.)
    wait "$pid" 2>/dev/null
    status=$?
    finished=$([ "$status" -ne 137 ] && echo 1 || echo 0)
    endings=$((endings + finished))
}

# timed COMMAND...: runs the command to its end, sets `elapsed` (ms) and `status`.
timed() {
    local start
    start=$(now_ms)
    "$@" </dev/null >"$work/out" 2>"$work/err"
    status=$?
    elapsed=$(($(now_ms) - start))
}

sql() { sqlite3 -batch -bail "$@" 2>&1; }

# The checks every scenario makes after a kill, on the folder `dir` holding
# the database `db`; `allowed` lists other names that may be there.
check_common() {
    local name extra=()
    while IFS= read -r name; do
        case "$name" in
            "$(basename "$db")" | "$(basename "$db")-journal" | "$(basename "$db")-wal" | "$(basename "$db")-shm") ;;
            *)
                local ok=0 entry
                for entry in "${allowed[@]}"; do [ "$name" = "$entry" ] && ok=1; done
                [ $ok -eq 1 ] || extra+=("$name")
                ;;
        esac
    done < <(ls -A "$dir")
    check ${#extra[@]} "left in the database's folder: ${extra[*]}"
    # Reported once: the next kill starts from a clean folder.
    for name in "${extra[@]}"; do rm -rf "${dir:?}/$name"; done
    local temporary
    temporary=$(ls -A "$TMPDIR")
    check "$([ -z "$temporary" ]; echo $?)" "left in TMPDIR: $temporary"
    rm -rf "${TMPDIR:?}"/* "${TMPDIR:?}"/.[!.]* 2>/dev/null
    if [ -s "$db" ]; then
        local integrity
        integrity=$(sql "$db" 'PRAGMA integrity_check')
        check "$([ "$integrity" = ok ]; echo $?)" "integrity_check: $integrity"
    fi
}

# Runs `body` for the scenario's share of time, or --iterations times.
repeat_scenario() {
    local body=$1 deadline=$(($(now_ms) + share_ms))
    iteration=0
    endings=0
    while :; do
        iteration=$((iteration + 1))
        "$body"
        if [ -n "$iterations" ]; then
            [ "$iteration" -lt "$iterations" ] || break
        else
            [ "$(now_ms)" -lt "$deadline" ] || break
        fi
    done
    echo "crash-test: $scenario: $iteration runs, $((iteration - endings)) killed, $endings ended first" >&2
}

# A database with the sample installed and migrated, at `db`.
fresh_database() {
    rm -rf "$dir" && mkdir -p "$dir"
    db=$dir/records.sqlite
    "$records" --database "$db" people list >/dev/null 2>"$work/err" || {
        fail "cannot install the sample database: $(cat "$work/err")"
        return 1
    }
}

# ---------------------------------------------------------------------------
# people add: an added person is there once acknowledged, and whole.

people_add_iteration() {
    local first="Crash$iteration"
    local age=$((iteration % 150))
    run_and_kill "$max_ms" /dev/null "$records" --database "$db" people add --first "$first" --last Tested --age "$age"
    local id
    id=$(sed -n 's/^Added .*(ID \([0-9]*\).*/\1/p' "$work/out")
    check_common
    if [ "$finished" -eq 1 ]; then
        check "$([ "$status" -eq 0 ] && [ -n "$id" ]; echo $?)" "exited $status without being killed: $(cat "$work/err")"
    fi
    if [ -n "$id" ]; then
        local row
        row=$(sql "$db" "SELECT firstname || '|' || lastname || '|' || age FROM peopleInfo WHERE peopleInfoID = $id")
        check "$([ "$row" = "$first|Tested|$age" ]; echo $?)" "acknowledged person $id is '$row'"
    fi
    local partial
    partial=$(sql "$db" "SELECT count(*) FROM peopleInfo WHERE firstname GLOB 'Crash*'
        AND (lastname IS NOT 'Tested' OR age IS NULL OR age != CAST(substr(firstname, 6) AS INTEGER) % 150)")
    check "$([ "$partial" = 0 ]; echo $?)" "$partial partial people"
    local copies
    copies=$(sql "$db" "SELECT count(*) FROM peopleInfo WHERE firstname = '$first'")
    check "$([ "$copies" -le 1 ]; echo $?)" "$copies copies of $first"
}

scenario_people_add() {
    scenario="people-add"
    dir=$work/people && fresh_database || return
    allowed=()
    timed "$records" --database "$db" people add --first Calibration --last Tested --age 0
    max_ms=$((elapsed * 3 / 2 + 5))
    repeat_scenario people_add_iteration
}

# ---------------------------------------------------------------------------
# coffee picture set: a 20 MB picture replaces another whole, or not at all.

picture_state() { # the stored picture's digest and type
    sql "$db" "SELECT coalesce(hex(sha3(picture)), 'none') || '|' || coalesce(pictureType, 'none')
        FROM coffee WHERE coffeeID = $coffee"
}

picture_set_iteration() {
    local before new type
    before=$(picture_state)
    if [ "$before" = "$digest_a|image/png" ]; then new=$inputs/b.jpg type=image/jpeg; else new=$inputs/a.png type=image/png; fi
    local expected
    expected="$(sql :memory: "SELECT hex(sha3(readfile('$new')))")|$type"
    if [ $((iteration % 3)) -eq 0 ]; then
        # From a pipe: records copies it to a temporary file first.
        run_and_kill "$max_ms" "pipe:$new" "$records" --database "$db" coffee picture set "$coffee" -
    else
        run_and_kill "$max_ms" /dev/null "$records" --database "$db" coffee picture set "$coffee" "$new"
    fi
    check_common
    local after
    after=$(picture_state)
    check "$([ "$after" = "$before" ] || [ "$after" = "$expected" ]; echo $?)" \
        "picture is neither the old one nor the new one: $after"
    if [ "$finished" -eq 1 ] || grep -q '^Stored' "$work/out"; then
        check "$([ "$status" -eq 0 ] || [ "$status" -eq 137 ]; echo $?)" "exited $status: $(cat "$work/err")"
        check "$([ "$after" = "$expected" ]; echo $?)" "acknowledged picture missing: $after"
    fi
}

# Adds a coffee and prints its ID, read from the compact JSON of
# `coffee add --json`; fails, with the error in $work/err, without one.
add_coffee() {
    local id
    id=$("$records" --database "$db" coffee add --name Crash --price 1 --json 2>"$work/err" |
        sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
    [ -n "$id" ] && echo "$id"
}

scenario_picture_set() {
    scenario="picture-set"
    dir=$work/picture && fresh_database || return
    allowed=()
    coffee=$(add_coffee) || {
        fail "cannot add a coffee: $(cat "$work/err")"
        return
    }
    digest_a=$(sql :memory: "SELECT hex(sha3(readfile('$inputs/a.png')))")
    timed "$records" --database "$db" coffee picture set "$coffee" "$inputs/a.png"
    check "$status" "picture set failed without a kill: $(cat "$work/err")"
    max_ms=$((elapsed * 3 / 2 + 5))
    repeat_scenario picture_set_iteration
}

# ---------------------------------------------------------------------------
# coffee picture get: the copy appears whole or not at all.

picture_get_iteration() {
    local output=$dir/copy.png
    printf 'an older file\n' >"$output"
    run_and_kill "$max_ms" /dev/null "$records" --database "$db" coffee picture get "$coffee" "$output" --force
    check_common
    local kind=old
    if cmp -s "$output" "$inputs/a.png"; then
        kind=new
    elif ! printf 'an older file\n' | cmp -s - "$output"; then
        kind=partial
    fi
    check "$([ "$kind" != partial ]; echo $?)" "the copy is neither the old file nor the picture"
    if [ "$finished" -eq 1 ] || grep -q '^Wrote' "$work/out"; then
        check "$([ "$kind" = new ]; echo $?)" "acknowledged copy missing (exit $status): $(cat "$work/err")"
    fi
}

scenario_picture_get() {
    scenario="picture-get"
    dir=$work/picture-get && fresh_database || return
    allowed=(copy.png)
    if ! coffee=$(add_coffee) ||
        ! "$records" --database "$db" coffee picture set "$coffee" "$inputs/a.png" >/dev/null 2>"$work/err"; then
        fail "cannot store a picture: $(cat "$work/err")"
        return
    fi
    timed "$records" --database "$db" coffee picture get "$coffee" "$dir/copy.png" --force
    check "$status" "picture get failed without a kill: $(cat "$work/err")"
    max_ms=$((elapsed * 3 / 2 + 5))
    repeat_scenario picture_get_iteration
}

# ---------------------------------------------------------------------------
# Users import: the original tutorial's table, plain-text passwords, taken
# over on first open, entirely or not at all.

users=8

make_users_database() {
    local file=$1 i values=()
    for i in $(seq 1 $users); do
        values+=("('IMG_$i.png', 'First$i', 'Last$i', 'user$i@example.com', 'PlainSecret-$i', 'PlainSecret-$i',
            98765432$i, 'State', 'City', 41100$i, '$i Road', $((i % 3)), '10/12/1990')")
    done
    local IFS=,
    sql "$file" "CREATE TABLE IF NOT EXISTS User_Master (UID INTEGER PRIMARY KEY AUTOINCREMENT,USER_IMAGENAME TEXT NOT NULL, USER_FNAME VARCHAR(30) NOT NULL,USER_LNAME VARCHAR(30) NOT NULL,USER_EMAIL VARCHAR(255) NOT NULL,USER_PASS VARCHAR(200) NOT NULL,USER_CPASS VARCHAR(200) NOT NULL,USER_MOBILE INTEGER NOT NULL,USER_STATE TEXT NOT NULL,USER_CITY TEXT NOT NULL,USER_PINCODE INTEGER NOT NULL,USER_ADDRESS TEXT NOT NULL,USER_GENDER INT(1) NOT NULL,USER_DOB DATE NOT NULL);
        INSERT INTO User_Master (USER_IMAGENAME,USER_FNAME,USER_LNAME,USER_EMAIL,USER_PASS,USER_CPASS,USER_MOBILE,USER_STATE,USER_CITY,USER_PINCODE,USER_ADDRESS,USER_GENDER,USER_DOB) VALUES ${values[*]};" >/dev/null
}

# Every value but the password, as text: the same before and after.
users_profile_sql="SELECT group_concat(UID || '|' || USER_IMAGENAME || '|' || USER_FNAME || '|' || USER_LNAME
    || '|' || USER_EMAIL || '|' || CAST(USER_MOBILE AS TEXT) || '|' || USER_STATE || '|' || USER_CITY
    || '|' || CAST(USER_PINCODE AS TEXT) || '|' || USER_ADDRESS || '|' || USER_GENDER || '|' || USER_DOB, ';')
    FROM (SELECT * FROM User_Master ORDER BY UID)"

# "original", "imported", or what is wrong.
users_state() {
    local columns profile
    columns=$(sql "$db" "SELECT group_concat(name) FROM pragma_table_info('User_Master')")
    profile=$(sql "$db" "$users_profile_sql")
    if [ "$profile" != "$users_profile" ]; then
        echo "profiles changed"
    elif [[ ",$columns," == *,USER_CPASS,* ]]; then
        local plain
        plain=$(sql "$db" "SELECT count(*) FROM User_Master WHERE USER_PASS = 'PlainSecret-' || UID
            AND USER_CPASS = USER_PASS")
        if [ "$plain" = "$users" ]; then echo original; else echo "original table, $plain of $users passwords"; fi
    else
        local hashed
        hashed=$(sql "$db" "SELECT count(*) FROM User_Master WHERE USER_PASS GLOB '\$scrypt\$*'")
        if [ "$hashed" != "$users" ]; then
            echo "imported table, $hashed of $users passwords hashed"
        elif grep -aq PlainSecret- "$db"; then
            echo "imported, but a plain password is still in the file"
        else
            echo imported
        fi
    fi
}

users_import_iteration() {
    rm -f "$db" "$db"-journal "$db"-wal "$db"-shm
    cp "$inputs/users.sqlite" "$db"
    run_and_kill "$max_ms" /dev/null "$records" --database "$db" users list
    check_common
    local state
    state=$(users_state)
    check "$([ "$state" = original ] || [ "$state" = imported ]; echo $?)" "users: $state"
    if [ "$finished" -eq 1 ]; then
        check "$([ "$status" -eq 0 ] && [ "$state" = imported ]; echo $?)" \
            "exited $status with the users $state: $(cat "$work/err")"
    fi
}

scenario_users_import() {
    scenario="users-import"
    dir=$work/users
    rm -rf "$dir" && mkdir -p "$dir"
    db=$dir/myDb.sqlite
    allowed=()
    make_users_database "$inputs/users.sqlite"
    cp "$inputs/users.sqlite" "$db"
    users_profile=$(sql "$db" "$users_profile_sql")
    timed "$records" --database "$db" users list
    check "$status" "the import failed without a kill: $(cat "$work/err")"
    max_ms=$((elapsed * 5 / 4 + 5))
    repeat_scenario users_import_iteration
    # After the last kill, the import completes, and the passwords work.
    iteration=final
    "$records" --database "$db" users list >/dev/null 2>"$work/err"
    check $? "the import after the kills failed: $(cat "$work/err")"
    check "$([ "$(users_state)" = imported ]; echo $?)" "after the kills and a full run: $(users_state)"
    printf 'PlainSecret-3\n' | "$records" --database "$db" users login user3@example.com --password-stdin \
        >/dev/null 2>"$work/err"
    check $? "an imported user cannot log in: $(cat "$work/err")"
}

# ---------------------------------------------------------------------------
# First use: the sample database is installed whole, or not at all, and the
# next run installs it.

first_install_iteration() {
    rm -rf "$dir" && mkdir -p "$dir"
    run_and_kill "$max_ms" /dev/null "$records" --database "$db" people list
    check_common
    if [ "$finished" -eq 1 ]; then
        check "$([ "$status" -eq 0 ] && cmp -s "$work/out" "$work/reference"; echo $?)" \
            "first run exited $status: $(cat "$work/err")"
    fi
    local listed=1
    if "$records" --database "$db" people list >"$work/out" 2>"$work/err"; then
        cmp -s "$work/out" "$work/reference" && listed=0
    fi
    check "$listed" "the run after the kill did not list the sample: $(cat "$work/err")"
}

scenario_first_install() {
    scenario="first-install"
    dir=$work/install
    db=$dir/records.sqlite
    allowed=()
    rm -rf "$dir" && mkdir -p "$dir"
    timed "$records" --database "$db" people list
    check "$status" "the first run failed without a kill: $(cat "$work/err")"
    cp "$work/out" "$work/reference"
    max_ms=$((elapsed * 3 / 2 + 5))
    repeat_scenario first_install_iteration
}

# ---------------------------------------------------------------------------

# Two different 20 MB pictures: a PNG and a JPEG signature before random bytes.
{ printf '\x89PNG\r\n\x1a\n'; head -c $((20 << 20)) /dev/urandom; } >"$inputs/a.png"
{ printf '\xff\xd8\xff\xe0'; head -c $((20 << 20)) /dev/urandom; } >"$inputs/b.jpg"

scenarios=(scenario_people_add scenario_picture_set scenario_picture_get scenario_users_import scenario_first_install)
share_ms=$((seconds * 1000 / ${#scenarios[@]}))
for run in "${scenarios[@]}"; do
    dir=
    "$run"
done

if [ "$failed" -eq 0 ]; then
    rm -rf "$work"
else
    echo "crash-test: evidence kept in $work/failures (seed $seed)" >&2
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
