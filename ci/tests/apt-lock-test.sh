#!/usr/bin/env bash
# ci/tests/apt-lock-test.sh: ci/lib/apt.sh against a stand-in apt-get on PATH (no root, no network):
# a lock held for two calls is waited for (one message, three calls, status 0); a lock held past
# OVB_APT_LOCK_WAIT_S fails with apt-get's status and says so; any other failure is not retried.
# Usage: ci/tests/apt-lock-test.sh            (ctest: ci.apt_lock_wait)
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "apt-lock-test: FAILED: $*" >&2; exit 1; }
# The stand-in: counts its calls; holds the lock for $LOCKED_CALLS calls, then prints $THEN.
cat >"$tmp/apt-get" <<'FAKE'
#!/usr/bin/env bash
n=$(($(cat "$COUNT" 2>/dev/null || echo 0) + 1))
echo "$n" >"$COUNT"
if [ "$n" -le "$LOCKED_CALLS" ]; then
  echo "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt-get)" >&2
  exit 100
fi
[ "$THEN" = ok ] && exit 0
echo "E: Unable to locate package $THEN" >&2
exit 100
FAKE
chmod +x "$tmp/apt-get"
export PATH="$tmp:$PATH" COUNT="$tmp/count" OVB_APT_LOCK_POLL_S=0
# shellcheck source=ci/lib/apt.sh
source "$root/ci/lib/apt.sh"
sudo=""

if ! LOCKED_CALLS=2 THEN=ok apt_get install -y foo 2>"$tmp/err1"; then
  fail "a lock released after two calls was not waited for: $(cat "$tmp/err1")"
fi
[ "$(cat "$tmp/count")" = 3 ] || fail "expected 3 calls, got $(cat "$tmp/count")"
[ "$(grep -c "holds the package lock: waiting" "$tmp/err1")" = 1 ] || fail "message: $(cat "$tmp/err1")"

rm -f "$tmp/count"
LOCKED_CALLS=1000000 THEN=ok OVB_APT_LOCK_WAIT_S=1 apt_get update 2>"$tmp/err2"
rc=$?
[ "$rc" = 100 ] || fail "a lock held past the deadline returned $rc, not apt-get's 100"
grep -q "still held after 1 s" "$tmp/err2" || fail "message: $(tail -n 2 "$tmp/err2")"

rm -f "$tmp/count"
LOCKED_CALLS=0 THEN=nosuchpkg apt_get install nosuchpkg 2>"$tmp/err3"
rc=$?
[ "$rc" = 100 ] || fail "another failure returned $rc"
[ "$(cat "$tmp/count")" = 1 ] || fail "another failure was retried ($(cat "$tmp/count") calls)"
grep -q "Unable to locate package nosuchpkg" "$tmp/err3" || fail "apt-get's output was not shown"

OVB_APT_LOCK_WAIT_S=soon apt_get update 2>"$tmp/err4"
[ $? = 2 ] || fail "a malformed OVB_APT_LOCK_WAIT_S was accepted"
grep -q "expected whole seconds" "$tmp/err4" || fail "message: $(cat "$tmp/err4")"
echo "apt-lock-test: ok"
